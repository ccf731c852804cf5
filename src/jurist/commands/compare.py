"""``jurist compare RUN_A RUN_B [RUN_C ...]``: is b better than a, task by task (:mod:`jurist.decide`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.commands.options import Gate
from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError


def compare(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN...",
            help="run directories (PATH#MODEL for one model of several), checkpoint folders of task runs, "
            "or a sweep directory (each of its checkpoints)",
        ),
    ],
    level: Annotated[float, typer.Option("--level", min=0.5, max=0.999, help="interval level")] = 0.95,
    delta: Annotated[
        float, typer.Option("--delta", min=0.0, help="the smallest difference that counts (task units)")
    ] = 0.0,
    against: Annotated[
        str, typer.Option("--against", help="compare each run with the first | previous")
    ] = "first",
    bootstrap: Annotated[int, typer.Option(min=100, help="bootstrap rounds")] = 2000,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    replacement: Annotated[
        Path | None,
        typer.Option(help="a judge replacement map (jurist.judge_replacement/1) for runs judged otherwise"),
    ] = None,
    gate: Gate = None,
    head_to_head: Annotated[
        bool,
        typer.Option(
            "--head-to-head", help="judge each run's answers directly against the first's (pairwise)"
        ),
    ] = False,
    models_file: Annotated[
        Path | None, typer.Option("--models-file", help="--head-to-head: the file naming the runs' judges")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="--head-to-head: where its run directories go")] = Path(
        "runs/head-to-head"
    ),
    fmt: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    page: Annotated[
        Path | None, typer.Option("--page", help="also write the comparison as an HTML page")
    ] = None,
) -> None:
    """Paired differences between runs on the questions both answered, per task: interval, p-value,
    Holm's correction across tasks, minimum detectable difference and a decision for each later run
    against the first.

    Exit codes: 0 compared, 2 usage or input error (runs that are not comparable), 4 a --gate rule failed."""
    from rich.console import Console

    from jurist.decide import (
        GATE_FAILED,
        CompareSettings,
        check_gate,
        compare_sides,
        comparison_document,
        head_to_head_sides,
        print_comparisons,
        print_gate,
        read_policy,
        read_sides,
        render_json,
        render_page,
    )

    if fmt not in ("table", "json"):
        raise JuristError(f"--format: {fmt!r} is not table or json")
    if against not in ("first", "previous"):
        raise JuristError(f"--against: {against!r} is not first or previous")
    policy = read_policy(gate) if gate is not None else None
    sides = read_sides(runs)
    settings = CompareSettings(
        level=level, delta=delta, n_bootstrap=bootstrap, seed=seed, replacement=replacement
    )
    if head_to_head:
        rows = head_to_head_sides(sides, settings, out, models_file)
    else:
        rows = compare_sides(sides, settings, against)
    outcomes = None
    if policy is not None:
        reference = read_sides([str(policy.reference)])[0] if policy.reference is not None else sides[0]
        outcomes = [o for side in sides[1:] for o in check_gate(policy, side, reference)]
    if page is not None:
        page.write_text(render_page(rows, outcomes, level), encoding="utf-8")
    if fmt == "json":
        print(render_json(comparison_document(rows, outcomes)))
    else:
        from jurist.report import table_console

        print_comparisons(table_console(), rows, level)
    if outcomes is not None:
        print_gate(Console(stderr=True, highlight=False), outcomes)
        if not all(o["passed"] for o in outcomes):
            raise typer.Exit(GATE_FAILED)


def register(app: typer.Typer) -> None:
    """Add ``jurist compare`` to the CLI."""
    app.command("compare", cls=JuristCommand)(compare)
