"""``jurist merge``: the shards of one run (``jurist run --shard I/N``) joined into one run directory and
scored through the one scoring door (:mod:`jurist.run.merge`; docs/scale-out.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.errors import JuristError


def merge(
    shards: Annotated[list[Path], typer.Argument(help="the shards' run directories (runs/BENCH/shards/*)")],
    out: Annotated[Path, typer.Option(help="the merged run directory (written anew at every merge)")],
    fmt: Annotated[str, typer.Option("--format", help="scores as: table | json | csv | markdown")] = "table",
) -> None:
    """Join the shards of one run into OUT, each item once, and score it as one run: `jurist show OUT`
    then prints what a single process would have. Refuses shards of different plans, naming the field.

    Exit codes: 0 complete, 1 questions missing (named with the shard that owned them) or failed requests,
    2 usage error."""
    from rich.console import Console

    from jurist.report.formats import table_console
    from jurist.report.scores import print_scores
    from jurist.run import merge_shards
    from jurist.scoring import score_run_dir, write_documents
    from jurist.store import is_held

    if fmt not in ("table", "json", "csv", "markdown"):
        raise JuristError(f"--format: {fmt!r} is not table, json, csv or markdown")
    console = Console(stderr=True)
    report = merge_shards(shards, out)
    for shard in report.shards:
        if is_held(shard.root):
            console.print(
                f"note: shard {shard.index} ({shard.root}) is still running: merged what it has saved",
                style="yellow", markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
    if report.shards[0].plan.get("mode") == "inference-only":  # answers only: nothing to score, as in a run
        console.print("answers only (--inference-only): nothing to score", style="dim", markup=False)
    else:
        scores = score_run_dir(out)
        write_documents(out, scores)
        print_scores(scores, fmt, out=table_console(), err=console)
    for line in report.lines():
        style = "yellow" if line.startswith("missing") else "dim"
        console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)
    console.print(f"results: {out} (jurist show {out}; jurist view {out})", markup=False, highlight=False)
    raise typer.Exit(0 if report.complete else 1)


def register(app: typer.Typer) -> None:
    app.command("merge")(merge)
