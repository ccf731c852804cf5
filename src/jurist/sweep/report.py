"""What a sweep shows at its end: one table (a row per checkpoint, a column per task and judge) and the
training-curve plots (:func:`jurist.plots.write_sweep_plots`), skipped with a warning when they cannot be
drawn (matplotlib missing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from jurist.report import interval_text
from jurist.sweep.plan import SweepPlan

PLOTS_DIR = "plots"


def _cell(row: Mapping[str, Any]) -> str:
    value = row.get("value")
    if not isinstance(value, (int, float)):
        return "-"
    digits = 3 if row.get("fraction") else 1
    text = f"{value:.{digits}f}"
    ci95 = row.get("ci95")
    if ci95:
        text += " " + interval_text(value, ci95[0], ci95[1], digits=digits)
    if isinstance(row.get("sem"), (int, float)):
        text += f" ±{row['sem']:.{digits}f}"
    return text


def summary_table(document: Mapping[str, Any]) -> Table:
    """Checkpoints down, (task, judge, metric) across: value (95% CI) ±sem over the samples."""
    results = document["results"]
    columns = list(dict.fromkeys((r["task"], r["judge"], r["metric"]) for r in results))
    table = Table(title=f"jurist sweep: {document['name']} (value (-/+ 95% CI) ±sem over samples)")
    table.add_column("checkpoint")
    table.add_column("step", justify="right")
    table.add_column("status")
    for task, judge, metric in columns:
        table.add_column(f"{task} {metric}" + (f"\n({judge})" if judge else ""), justify="right")
    cells = {(r["checkpoint"], r["task"], r["judge"], r["metric"]): _cell(r) for r in results}
    for checkpoint in document["checkpoints"]:
        name = checkpoint["name"]
        values = [cells.get((name, *column), "-") for column in columns]
        table.add_row(name, str(checkpoint["step"]), checkpoint["status"], *values)
    return table


def print_summary(plan: SweepPlan, document: Mapping[str, Any]) -> None:
    from jurist.report import table_console

    console = table_console()
    console.print(summary_table(document))
    failed = [c for c in document["checkpoints"] if c["status"] != "complete"]
    for checkpoint in failed:
        console.print(
            f"{checkpoint['name']}: {checkpoint['status']}"
            + (f": {checkpoint['error']}" if checkpoint.get("error") else ""),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"sweep: {plan.out / 'sweep.json'}, {plan.out / 'sweep.csv'}", markup=False, highlight=False
    )


def write_plots(plan: SweepPlan, console: Console) -> None:
    """The training curves into ``SWEEP_DIR/plots``; a warning instead when they cannot be drawn."""
    from jurist.errors import JuristError

    try:
        from jurist.plots import write_sweep_plots
    except ImportError as exc:  # pragma: no cover - jurist.plots ships with jurist
        console.print(f"warning: no plots ({exc})", style="yellow", markup=False, highlight=False)
        return
    try:
        written = write_sweep_plots([plan.out], plan.out / PLOTS_DIR, error_bars=plan.error_bars)
    except JuristError as exc:  # matplotlib missing: the install hint; an unreadable sweep.json
        console.print(f"warning: no plots: {exc}", style="yellow", markup=False, highlight=False)
        return
    if written:
        console.print(f"plots: {plan.out / PLOTS_DIR} ({len(written)} files)", markup=False, highlight=False)
