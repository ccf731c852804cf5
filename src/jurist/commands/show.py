"""``jurist show RUN_DIR``: score a finished (or imported) run again, without new requests.

A thin command over the scoring door (:func:`jurist.families.door.score_run_dir`, the one ``jurist run``
scores through at its end) and :func:`jurist.families.printing.print_scores`: with no option it prints what
the run printed (the family run.json names, the run's method and settings); any option given replaces the
run's. Nothing is written unless ``--write`` is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.commands.options import Anchor, Ensemble, Format, LengthControlled, StyleControl, check_format
from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError
from jurist.families import STYLE_FEATURES, ScoreRequest

ALL_CATEGORIES = "all"
"""``--category all``: one score over every category (a run scored by category pools them)."""


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(part.strip() for value in values or [] for part in value.split(",") if part.strip())


def _style_features(style_control: str | None) -> tuple[str, ...] | None:
    """Known features in their canonical order, then any unknown ones (which the request check names);
    None when the option is not given."""
    if style_control is None:
        return None
    features = _split([style_control])
    if "all" in features:
        features = STYLE_FEATURES
    return tuple(f for f in STYLE_FEATURES if f in features) + tuple(set(features) - set(STYLE_FEATURES))


def _categories(category: list[str] | None) -> tuple[str, ...] | None:
    chosen = _split(category)
    if not chosen:
        return None
    return () if chosen == (ALL_CATEGORIES,) else chosen


def show(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="run directory (jurist run or jurist import), an arena battles file or Arena-Hard's "
            "arena_hard_battles.jsonl (several: --usage)",
            metavar="RUN_DIR...",
        ),
    ],
    method: Annotated[
        str | None, typer.Option(help="winrate | bt (Bradley-Terry, Elo scale); default: the run's")
    ] = None,
    style_control: StyleControl = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category", help="score this category alone (repeatable); all: one score over every category"
        ),
    ] = None,
    baseline: Annotated[
        list[str] | None, typer.Option("--baseline", help="baseline model (repeatable)")
    ] = None,
    bootstrap: Annotated[
        int | None, typer.Option(min=0, help="bootstrap rounds (default: the run's)")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="bootstrap seed (default: the run's)")] = None,
    ci: Annotated[float | None, typer.Option(help="CI level, e.g. 0.90 or 0.95 (default: the run's)")] = None,
    resample: Annotated[
        str | None, typer.Option(help="bootstrap unit: questions | entries (Arena-Hard's exploded rows)")
    ] = None,
    length_controlled: LengthControlled = False,
    instruction_difficulty: Annotated[
        Path | None,
        typer.Option(help="AlpacaEval's instruction difficulty CSV for --length-controlled (else estimated)"),
    ] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="only this judge (repeatable)")] = None,
    ensemble: Ensemble = False,
    fmt: Format = "table",
    write: Annotated[
        bool, typer.Option("--write", help="also write the score files (leaderboard.json, ratings.json...)")
    ] = False,
    usage: Annotated[
        bool,
        typer.Option("--usage", help="what the run cost: requests, tokens, dollars, time (several: summed)"),
    ] = False,
    by_instruction: Annotated[
        bool,
        typer.Option(
            "--by-instruction",
            help="rule-checked runs: also the per-instruction-id table; WritingBench: by subdomain",
        ),
    ] = False,
    anchor: Anchor = None,
) -> None:
    """Score a run again from its outcomes, as the run did unless options say otherwise."""
    request = ScoreRequest(
        method=method,  # type: ignore[arg-type]  # checked by ScoreRequest.check
        style_control=_style_features(style_control),
        length_controlled=True if length_controlled else None,
        categories=_categories(category),
        baselines=_split(baseline),
        judges=_split(judge),
        ensemble=True if ensemble else None,
        instruction_difficulty=instruction_difficulty,
        n_bootstrap=bootstrap,
        seed=seed,
        ci_level=ci,
        resample=resample,  # type: ignore[arg-type]  # checked by ScoreRequest.check
        anchor=anchor,
    )
    request.check()
    check_format(fmt)
    _note_crashed_runs(run_dirs)
    if usage:
        from jurist.run import show_usage

        show_usage(run_dirs, fmt)
        return
    if len(run_dirs) != 1:
        raise JuristError("several run directories are read together only with --usage")
    from jurist.interop import is_arena_hard_battles, score_arena_hard_battles

    if not is_arena_hard_battles(run_dirs[0]):
        _refuse_pairwise_options(run_dirs[0], request)
    from jurist.families import print_scores, score_run_dir, write_documents

    if is_arena_hard_battles(run_dirs[0]):  # Arena-Hard's own arena_hard_battles.jsonl
        scores = score_arena_hard_battles(run_dirs[0], request)
    else:
        scores = score_run_dir(run_dirs[0], request)
    print_scores(scores, fmt, detail=by_instruction)
    from jurist.commands.judges import print_run_card

    print_run_card(run_dirs[0], fmt, missing_ok=True)  # under the scores, as the run printed it
    if write:
        write_documents(run_dirs[0], scores)


_NOT_PAIRWISE = {
    "rules": "it is checked by rule",
    "rubric": "it is graded by rubric",
    "judge-accuracy": "it is scored by judge accuracy against JudgeBench's labels",
    "placement": "an arena placement fits its own Bradley-Terry among the human votes",
}


def _refuse_pairwise_options(path: Path, request: ScoreRequest) -> None:
    """A pairwise option (``--method``, ``--style-control``, ``--baseline``...) on a run that has no
    battles against a baseline is a usage error, not a note under a table that ignored it."""
    given = request.pairwise_options()
    if not given or not path.exists():
        return
    from jurist.families import RecordedRun, family_of_run

    run = RecordedRun.read(path)
    family = family_of_run(path, run.fields if run.has_run_json else None)
    if family in _NOT_PAIRWISE:
        raise JuristError(
            f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to {path}: "
            f"{_NOT_PAIRWISE[family]} (--method, --style-control, --baseline score battles)"
        )


def _note_crashed_runs(run_dirs: list[Path]) -> None:
    """One line (on stderr: stdout may be JSON) per run whose process died while running: its run.json
    still says ``running``, but nothing holds its lock, so its numbers are what it saved before dying."""
    from jurist.store import CRASHED, RunDir

    for run_dir in run_dirs:
        status, run_id = RunDir(run_dir).recorded_status() if run_dir.is_dir() else (None, None)
        if status == CRASHED:
            typer.echo(
                f"note: {run_dir}: run {run_id} crashed (it stopped without finishing); what it saved is "
                "shown, and running the same command again resumes it",
                err=True,
            )


def register(app: typer.Typer) -> None:
    """Add ``jurist show`` to the CLI."""
    app.command("show", cls=JuristCommand)(show)
