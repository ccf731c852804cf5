"""``jurist merge``: the shards of one run (``jurist run --shard I/N``) or one sweep (``jurist sweep
--shard I/N``) joined into one directory; a run is scored through the one scoring door
(:mod:`jurist.run.merge`, :mod:`jurist.sweep.shards`; docs/scale-out.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.run import RunConfig, ShardDir


def merge(
    shards: Annotated[list[Path], typer.Argument(help="the shards' directories (runs/BENCH/shards/*)")],
    out: Annotated[Path, typer.Option(help="the merged directory (written anew at every merge)")],
    fmt: Annotated[str, typer.Option("--format", help="scores as: table | json | csv | markdown")] = "table",
) -> None:
    """Join the shards of one run (or one sweep) into OUT, each item once, and score it as one run:
    `jurist show OUT` then prints what a single process would have. Refuses shards of different plans,
    naming the field.

    Exit codes: 0 complete, 1 questions (or checkpoints) missing, named with the shard that owned them,
    or failed requests; 2 usage error."""
    from jurist.run import checked_shards
    from jurist.store import is_held

    if fmt not in ("table", "json", "csv", "markdown"):
        raise JuristError(f"--format: {fmt!r} is not table, json, csv or markdown")
    console = Console(stderr=True)
    given = checked_shards(shards, out)
    for shard in given:
        if is_held(shard.root):
            console.print(
                f"note: shard {shard.index} ({shard.root}) is still running: merged what it has saved",
                style="yellow", markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
    sweep = given[0].kind == "sweep"
    complete = _merge_sweep(given, out, console) if sweep else _merge_run(given, out, fmt, console)
    raise typer.Exit(0 if complete else 1)


def _merge_run(given: list[ShardDir], out: Path, fmt: str, console: Console) -> bool:
    from jurist.families import print_scores, score_run_dir, write_documents
    from jurist.report import table_console
    from jurist.run import merge_shards

    report = merge_shards(given, out)
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
    return report.complete and not report.shards[0].run_json.get("still_failing")


def merge_ray_shards(config: RunConfig, address: str, count: int, retries: int) -> int:
    """``jurist run --ray ADDRESS --shards N``: the shards run as Ray tasks, then merged into the run's
    directory and scored; the exit code."""
    from jurist.run import checked_shards, run_on_ray

    console = Console(stderr=True)
    dirs, out = run_on_ray(config, address, count, retries, console)
    return 0 if _merge_run(checked_shards(dirs, out), out, config.output_format, console) else 1


def _merge_sweep(given: list[ShardDir], out: Path, console: Console) -> bool:
    from jurist.sweep import merge_sweeps

    missing = merge_sweeps([shard.root for shard in given], given[0].owners, out)
    labels = ", ".join(f"{s.index}/{s.count}" for s in given)
    console.print(f"merged {len(given)} sweep shard(s) ({labels}) into {out}", markup=False, highlight=False)
    absent = set(range(given[0].count)) - {s.index for s in given}
    for owner, names in sorted(missing.items()):
        why = "its shard was not given" if owner in absent else "not complete in its shard"
        console.print(
            f"missing {len(names)} checkpoint(s) of shard {owner} ({why}): {', '.join(names)}",
            style="yellow", markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    console.print(f"results: {out}/sweep.json (jurist plot {out})", markup=False, highlight=False)
    return not missing


def register(app: typer.Typer) -> None:
    app.command("merge", cls=JuristCommand)(merge)
