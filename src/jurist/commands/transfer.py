"""``jurist import`` and ``jurist export``: move runs between jurist and Arena-Hard / AlpacaEval files.

An imported run is a normal run directory, so ``jurist show`` scores it with every method; the readers and
writers themselves live in :mod:`jurist.interop.arena_hard` and :mod:`jurist.interop.alpaca_eval`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.commands.parsing import use_jurist_command
from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.interop import StyleFn

import_app = typer.Typer(
    help="Import another harness's answers and judgments as a jurist run.", no_args_is_help=True
)
export_app = typer.Typer(help="Export a jurist run in another harness's file layout.", no_args_is_help=True)

ARENA_HARD_BENCHES = ("arena-hard-v0.1", "arena-hard-v2.0")


def _style_function(enabled: bool) -> StyleFn | None:
    """The style-metadata function (loads the tokenizer lazily), or None when disabled."""
    if not enabled:
        return None
    from jurist.tokens import answer_style_metadata

    return answer_style_metadata


def _say(message: str) -> None:
    from rich.console import Console

    Console(stderr=True).print(message, markup=False, highlight=False, soft_wrap=True)  # paths, names: plain


@import_app.command("arena-hard")
def import_arena_hard(
    data_dir: Annotated[Path, typer.Argument(help="Arena-Hard checkout (or its data/ folder)")],
    out: Annotated[Path, typer.Option("--out", help="new run directory to write")],
    bench: Annotated[str, typer.Option(help="arena-hard-v0.1 | arena-hard-v2.0 (or a data/ sub-folder)")] = (
        "arena-hard-v2.0"
    ),
    judge: Annotated[
        list[str] | None, typer.Option("--judge", help="judge folder under model_judgment/ (default: all)")
    ] = None,
    style: Annotated[
        bool, typer.Option("--style/--no-style", help="compute style metadata where an answer has none")
    ] = True,
) -> None:
    """Read data/<bench>/model_answer and model_judgment/<judge>; write answers, judgments and battles."""
    from jurist.interop import import_arena_hard as run_import

    if not data_dir.is_dir():
        raise JuristError(f"{data_dir}: no such directory")
    judges = [j.strip() for value in judge or [] for j in value.split(",") if j.strip()]
    summary = run_import(data_dir, out, bench=bench, judges=judges or None, style=_style_function(style))
    n_judgments = sum(sum(per.values()) for per in summary.judgments.values())
    _say(
        f"imported {len(summary.answers)} answer files ({summary.metadata_upstream} with upstream style "
        f"metadata, {summary.metadata_computed} computed), {n_judgments} judgments from "
        f"{len(summary.judgments)} judge(s), {summary.battles} battles -> {out}"
    )
    if summary.dropped_questions():
        _say(
            f"{summary.dropped_questions()} question(s) dropped for a null or invalid game "
            f"({summary.null_games} null games, {summary.invalid_labels} unknown labels), as Arena-Hard v2 "
            "does"
        )
    if bench not in ARENA_HARD_BENCHES:
        _say(f"note: {bench!r} is not a known Arena-Hard benchmark; baselines come from the judgments")


@import_app.command("alpaca-eval")
def import_alpaca_eval(
    results_dir: Annotated[
        Path, typer.Argument(help="AlpacaEval results/ folder (one sub-folder per model)")
    ],
    out: Annotated[Path, typer.Option("--out", help="new run directory to write")],
    annotator: Annotated[str, typer.Option(help="annotator folder name")] = "weighted_alpaca_eval_gpt4_turbo",
    style: Annotated[
        bool, typer.Option("--style/--no-style", help="compute style metadata for the outputs")
    ] = True,
) -> None:
    """Read model_outputs.json[.gz] and <annotator>/annotations.json[.gz], keeping every preference."""
    from jurist.interop import import_alpaca_eval as run_import

    summary = run_import(results_dir, out, annotator=annotator, style=_style_function(style))
    n_judgments = sum(sum(per.values()) for per in summary.judgments.values())
    baseline = next(iter(summary.baselines.values()), "?")
    _say(
        f"imported outputs of {len(summary.answers)} models and {n_judgments} preferences "
        f"(baseline {baseline}), {summary.battles} battles -> {out}"
    )
    if summary.dropped_questions():
        _say(f"{summary.dropped_questions()} annotation(s) without a preference were left out")


@import_app.command("judgearena")
def import_judgearena(
    results: Annotated[
        Path, typer.Argument(help="JudgeArena results folder (battles, elo_ratings.json) or a battles file")
    ],
    out: Annotated[Path, typer.Option("--out", help="new run directory to write")],
) -> None:
    """Read JudgeArena's battles (parquet or JSONL) and elo_ratings.json into a run ``jurist show`` reads."""
    from jurist.interop import import_judgearena as run_import

    summary = run_import(results, out)
    report = " and elo_ratings.json" if summary["elo_report"] else ""
    _say(
        f"imported {summary['battles']} battles ({summary['llm_judge_battles']} judged, "
        f"{summary['human_battles']} human){report} -> {out}"
    )


@export_app.command("arena-hard")
def export_arena_hard(
    run_dir: Annotated[Path, typer.Argument(help="jurist run directory")],
    out: Annotated[Path, typer.Option("--out", help="folder to write data/<bench>/... into")],
    bench: Annotated[
        str | None, typer.Option(help="benchmark folder name (default: the run's bench)")
    ] = None,
) -> None:
    """Write answers and pairwise judgments in Arena-Hard v2.0's shapes (model_answer, model_judgment)."""
    import json

    from jurist.interop import export_arena_hard as run_export

    run_json_path = run_dir / "run.json"
    run_json = json.loads(run_json_path.read_text(encoding="utf-8")) if run_json_path.is_file() else {}
    name = bench or str(run_json.get("bench") or "arena-hard-v2.0")
    summary = run_export(run_dir, out, bench=name, style=_style_function(True))
    n_judgments = sum(sum(per.values()) for per in summary.judgments.values())
    _say(f"exported {len(summary.answers)} answer files and {n_judgments} judgments -> {summary.bench_dir}")
    if summary.skipped_judgments:
        _say(
            f"{summary.skipped_judgments} judgment(s) without pairwise games (e.g. AlpacaEval's) were skipped"
        )


def register(app: typer.Typer) -> None:
    """Add ``jurist import ...`` and ``jurist export ...`` to the CLI."""
    use_jurist_command(import_app)
    use_jurist_command(export_app)
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
