"""``jurist list``: every benchmark jurist knows, what kind it is, its reference judge, and whether its data
and judge prompts are on this machine (and where from), with the one line that gets what is missing.

Nothing is downloaded or parsed: presence is read from files (:mod:`jurist.benchmarks.catalog`), so the
list is quick and works offline. ``--bench``'s help in ``jurist run`` is built here from the same registry.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError


def bench_help() -> str:
    """``jurist run --bench``'s help: every registered name (so a new benchmark appears without edits);
    installed plugins' are left to ``jurist list`` (reading package metadata would slow every command)."""
    from jurist.benchmarks import benchmark_names

    return (
        f"a benchmark name ({', '.join(benchmark_names(installed=False))}, or an installed plugin's; "
        "`jurist list` says which have their data here), an Arena-Hard question.jsonl or an arena battles "
        "file"
    )


def catalog() -> list[dict[str, Any]]:
    """One record per registered benchmark, in name order (a benchmark without a catalog card says so)."""
    from jurist.benchmarks import benchmark_card, benchmark_names, benchmark_provider, card_record

    records: list[dict[str, Any]] = []
    for name in benchmark_names():
        broken: str | None = None
        try:
            card = benchmark_card(name)
        except JuristError as exc:  # a broken plugin is listed with its one line, the rest as ever
            card, broken = None, str(exc)
        if card is None:
            records.append(
                {
                    "name": name,
                    "kind": None,
                    "default_samples": None,
                    "reference_judge": None,
                    "about": broken
                    or "no catalog card: `jurist run --bench NAME --dry-run` shows what it needs",
                    "needs": [],
                }
            )
        else:
            records.append({**card_record(card), "name": name})  # the name it is registered under
        provider = benchmark_provider(name)
        if provider is not None:  # an installed plugin's: the package that provides it
            records[-1]["package"] = provider
    return records


def _cell(record: dict[str, Any], what: str) -> str:
    need = next((n for n in record["needs"] if n["what"] == what), None)
    if need is None:
        return "-" if record["kind"] is not None else "?"
    return str(need["source"]) if need["present"] else "MISSING"


def _print_table(records: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from jurist.store import DATA_DIR_ENV

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("benchmark", "kind", "samples", "reference judge", "data", "judge prompts"):
        table.add_column(column, no_wrap=column != "reference judge")
    for r in records:
        samples = "?" if r["default_samples"] is None else str(r["default_samples"])
        cells = (
            r["name"],
            r["kind"] or "?",
            samples,
            (r["reference_judge"] or "-").split(" (", 1)[0],  # its settings: --format json
            _cell(r, "data"),
            _cell(r, "judge prompts"),
        )
        table.add_row(*(Text(cell) for cell in cells))  # names are data, never markup
    console = Console(highlight=False, soft_wrap=False)
    console.print(table)
    folders = os.environ.get(DATA_DIR_ENV)
    console.print(
        f"\ndata dirs: {folders if folders else f'none (--data-dir or ${DATA_DIR_ENV})'}", markup=False
    )
    missing = [(r["name"], n) for r in records for n in r["needs"] if not n["present"]]
    for name, need in missing:
        console.print(f"{name} {need['what']}: {need['get']}", markup=False)
    for r in records:
        if r.get("package"):
            console.print(f"{r['name']}: from the installed package {r['package']}", markup=False)
        if r["kind"] is None:
            console.print(f"{r['name']}: {r['about']}", markup=False)
        if r.get("reference_retired"):
            console.print(f"{r['name']}: the reference judge {r['reference_retired']}", markup=False)


def _retired(record: dict[str, Any]) -> str | None:
    from jurist.config import REPLACE_HINT, retirement_phrase
    from jurist.replace import PANEL_BENCHES

    model = (record.get("reference_judge") or "").split(" (", 1)[0]
    phrase = retirement_phrase(model) if model else None
    if phrase is None:
        return None
    if record["name"] not in PANEL_BENCHES:  # no stored verdicts of its reference to qualify against
        return f"{phrase}; jurist stores no panel of its verdicts (docs/judge-replacement.md)"
    return f"{phrase}; {REPLACE_HINT.format(bench=record['name'])}"


def list_benchmarks(
    data_dir: Annotated[
        Path | None,
        typer.Option(help="folder with local copies of benchmark data [$JURIST_DATA_DIR]"),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | json")] = "table",
) -> None:
    """List every benchmark: kind, default samples, reference judge, and whether its data and judge
    prompts are here (and where from); for what is missing, the one line that gets it. Sends nothing."""
    if fmt not in ("table", "json"):
        raise JuristError(f"--format: {fmt!r} is not table or json")
    if data_dir is not None:
        if not data_dir.is_dir():
            raise JuristError(f"--data-dir: {data_dir} is not a folder")
        os.environ["JURIST_DATA_DIR"] = str(data_dir.resolve())
    records = catalog()
    for record in records:  # a reference judge that no longer exists, and what to do about it
        record["reference_retired"] = _retired(record)
    if fmt == "json":
        print(json.dumps(records, indent=2))
    else:
        _print_table(records)


def register(app: typer.Typer) -> None:
    app.command("list", cls=JuristCommand)(list_benchmarks)
