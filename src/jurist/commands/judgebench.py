"""``jurist judgebench score``: score JudgeBench's stored judge outputs with the exact two-game rule.

Upstream publishes each judge's verdicts as ``outputs/*.jsonl``; scoring them here gives the same fields as
a ``jurist run --bench judgebench`` (``judgebench.json``), so published judges and our own line up. A
jurist JudgeBench run directory is accepted too and re-scored from its judgments exactly as the run did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from jurist.commands.parsing import use_jurist_command

judgebench_app = typer.Typer(
    no_args_is_help=True, help="JudgeBench utilities (run it with: jurist run --bench judgebench)."
)


@judgebench_app.command("score")
def score(
    files: Annotated[
        list[Path],
        typer.Argument(help="outputs/*.jsonl[.gz] files, folders of them, or jurist JudgeBench run folders"),
    ],
    format: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json")] = "table",
) -> None:
    """Score stored JudgeBench outputs: accuracy overall and per category, consistency, failed games."""
    from rich.console import Console

    from jurist.benchmarks import score_row
    from jurist.families import score_judgebench_run
    from jurist.interop import score_stored_outputs
    from jurist.report import judgebench_table, print_notes, table_console

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for path in files:
        if _is_run_dir(path):
            run_rows, run_notes = score_judgebench_run(path)
            rows += run_rows
            notes += [f"{path}: {note}" for note in run_notes]
        else:
            rows += [score_row(result) for result in score_stored_outputs(path)]
    if format == "json":
        typer.echo(json.dumps(rows, indent=2))
    else:
        table_console().print(judgebench_table(rows, title="JudgeBench (stored outputs)"))
    print_notes(Console(stderr=True), notes)


def _is_run_dir(path: Path) -> bool:
    """A jurist run directory (run.json and judgments/), as opposed to a folder of upstream outputs."""
    return path.is_dir() and (path / "run.json").is_file() and (path / "judgments").is_dir()


def register(app: typer.Typer) -> None:
    use_jurist_command(judgebench_app)
    app.add_typer(judgebench_app, name="judgebench")
