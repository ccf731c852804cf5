"""``jurist judgebench score``: score JudgeBench's stored judge outputs with the exact two-game rule.

Upstream publishes each judge's verdicts as ``outputs/*.jsonl``; scoring them here gives the same fields as
a ``jurist run --bench judgebench`` (``judgebench.json``), so published judges and our own line up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

judgebench_app = typer.Typer(
    no_args_is_help=True, help="JudgeBench utilities (run it with: jurist run --bench judgebench)."
)


@judgebench_app.command("score")
def score(
    files: Annotated[list[Path], typer.Argument(help="outputs/*.jsonl[.gz] files or folders of them")],
    format: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json")] = "table",
) -> None:
    """Score stored JudgeBench outputs: accuracy overall and per category, consistency, failed games."""
    from jurist.benchmarks.judgebench_scoring import judgebench_table, score_row, table_console
    from jurist.interop.judgebench import score_stored_outputs

    rows = [score_row(result) for path in files for result in score_stored_outputs(path)]
    if format == "json":
        typer.echo(json.dumps(rows, indent=2))
    else:
        table_console().print(judgebench_table(rows, title="JudgeBench (stored outputs)"))


def register(app: typer.Typer) -> None:
    app.add_typer(judgebench_app, name="judgebench")
