"""``jurist show RUN_DIR``: score a finished (or imported) run again, with any method, without new requests.

A thin command over :mod:`jurist.scoring` (the scoring ``jurist run`` uses too) and :mod:`jurist.report`.
Nothing is written unless ``--write`` is given. A JudgeBench run measures judges, not models: ``show``
prints its judge-accuracy table, recomputed from the judgments as ``jurist judgebench score`` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core

from jurist.errors import JuristError
from jurist.scoring import STYLE_FEATURES, Scored, ScoreOptions, check_options

FORMATS = ("table", "json", "csv", "markdown")


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(part.strip() for value in values or [] for part in value.split(",") if part.strip())


def _is_feature_list(token: str) -> bool:
    parts = [p.strip() for p in token.split(",")]
    return bool(parts) and all(p in STYLE_FEATURES + ("all",) for p in parts)


def _style_features(style_control: str | None) -> tuple[str, ...]:
    """Known features in their canonical order, then any unknown ones (which the option check names)."""
    features = _split([style_control]) if style_control else ()
    if "all" in features:
        features = STYLE_FEATURES
    return tuple(f for f in STYLE_FEATURES if f in features) + tuple(set(features) - set(STYLE_FEATURES))


class _ShowCommand(typer.core.TyperCommand):
    """Lets ``--style-control`` stand alone (meaning length and markdown) or take a feature list."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        fixed: list[str] = []
        for k, token in enumerate(args):
            fixed.append(token)
            if token == "--style-control" and (k + 1 == len(args) or not _is_feature_list(args[k + 1])):
                fixed.append(",".join(STYLE_FEATURES))
        return super().parse_args(ctx, fixed)


def show(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="run directory (jurist run or jurist import), or an arena battles file (several: --usage)",
            metavar="RUN_DIR...",
        ),
    ],
    method: Annotated[str, typer.Option(help="winrate | bt (Bradley-Terry, Elo scale)")] = "winrate",
    style_control: Annotated[
        str | None,
        typer.Option("--style-control", help="control for style: length,markdown (alone: both)"),
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option("--category", help="score this category alone (repeatable)")
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
        str, typer.Option(help="bootstrap unit: questions | entries (Arena-Hard's exploded rows)")
    ] = "questions",
    length_controlled: Annotated[
        bool, typer.Option("--length-controlled", help="AlpacaEval's length-controlled win rate")
    ] = False,
    instruction_difficulty: Annotated[
        Path | None,
        typer.Option(help="AlpacaEval's instruction difficulty CSV for --length-controlled (else estimated)"),
    ] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="only this judge (repeatable)")] = None,
    ensemble: Annotated[
        bool, typer.Option("--ensemble", help="pool the judges' battles into one score")
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv | markdown")] = "table",
    write: Annotated[
        bool, typer.Option("--write", help="also write ratings.json and leaderboard.json")
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
) -> None:
    """Score a run again from its battles: win rate, Bradley-Terry, style control or LC win rate."""
    from jurist.scoring import score_run, write_outputs

    opts = ScoreOptions(
        method=method,  # type: ignore[arg-type]  # checked by check_options
        style_control=_style_features(style_control),
        categories=_split(category),
        baselines=_split(baseline),
        judges=_split(judge),
        ensemble=ensemble,
        length_controlled=length_controlled,
        instruction_difficulty=instruction_difficulty,
        n_bootstrap=bootstrap,
        seed=seed,
        ci_level=ci,
        resample=resample,  # type: ignore[arg-type]  # checked by check_options
    )
    check_options(opts)
    if fmt not in FORMATS:
        raise JuristError(f"--format: {fmt!r} is not table, json, csv or markdown")
    if usage:
        from jurist.run.budget import show_usage

        show_usage(run_dirs, fmt)
        return
    if len(run_dirs) != 1:
        raise JuristError("several run directories are read together only with --usage")
    run_dir = run_dirs[0]
    from jurist.scoring.judgebench import is_judgebench_run
    from jurist.scoring.placement import is_arena_run

    if is_arena_run(run_dir):  # an arena placement (jurist's or JudgeArena's battles): fit it again
        from jurist.report.placement_table import show_arena

        show_arena(run_dir, n_bootstrap=bootstrap, seed=seed, ci_level=ci, fmt=fmt, write=write)
        return
    if run_dir.is_dir() and is_judgebench_run(run_dir):
        _show_judgebench(run_dir, opts, fmt, write)
        return
    from jurist.run.rubric_points import is_rubric_run

    if (run_dir / "points").is_dir() and is_rubric_run(run_dir):
        _show_rubric(run_dir, opts, fmt, write, by_instruction)
        return
    if (run_dir / "points").is_dir():
        _show_rules(run_dir, opts, fmt, write, by_instruction)
        return
    scored = score_run(run_dir, opts)
    _print(scored, fmt, run_dir)
    if write:
        write_outputs(run_dir, scored)


def _print(scored: Scored, fmt: str, run_dir: Path) -> None:
    """Table: leaderboard, judge sanity and warnings on stdout. Other formats: only the rows on stdout."""
    from rich.console import Console

    from jurist.report.formats import (
        print_notes,
        print_scored,
        print_warnings,
        render_csv,
        render_markdown,
        table_console,
    )

    err = Console(stderr=True)
    if fmt == "table":
        title = f"jurist show: {run_dir.name} ({scored.settings['method']})"
        print_scored(table_console(), scored, title=title, notes_console=err)
        return
    if fmt == "json":
        print(json.dumps(scored.rows, indent=2, ensure_ascii=False))
    else:
        print((render_csv if fmt == "csv" else render_markdown)(scored.rows), end="")
    print_notes(err, scored.notes)
    print_warnings(err, scored.sanity)


def _show_judgebench(run_dir: Path, opts: ScoreOptions, fmt: str, write: bool) -> None:
    """Judge accuracy of a JudgeBench run (win-rate options do not apply and are said to be ignored)."""
    from rich.console import Console

    from jurist.benchmarks.judgebench_scoring import ROW_FIELDS
    from jurist.report.formats import (
        judgebench_table,
        print_notes,
        render_csv,
        render_markdown,
        table_console,
    )
    from jurist.scoring.judgebench import JUDGEBENCH_FILE, score_judgebench_run

    rows, notes = score_judgebench_run(run_dir, opts.judges)
    ignored = opts != ScoreOptions(judges=opts.judges)
    if ignored:
        notes.append("a JudgeBench run is scored by judge accuracy; the win-rate options given do not apply")
    if fmt == "table":
        title = f"jurist show: {run_dir.name} (JudgeBench judge accuracy)"
        table_console().print(judgebench_table(rows, title=title))
    elif fmt == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print((render_csv if fmt == "csv" else render_markdown)(rows, ROW_FIELDS), end="")
    print_notes(Console(stderr=True), notes)
    if write:
        from jurist.store.jsonl import write_json_atomic

        write_json_atomic(run_dir / JUDGEBENCH_FILE, rows)


def _show_rules(run_dir: Path, opts: ScoreOptions, fmt: str, write: bool, by_instruction: bool) -> None:
    """A rule-checked run (IFEval, IFBench) scored again from its point records."""
    from rich.console import Console

    from jurist.report.formats import table_console
    from jurist.report.rules_table import print_rule_rows
    from jurist.run.rule_points import load_points, summary_document
    from jurist.scoring.battles import read_json
    from jurist.scoring.rules import score_points
    from jurist.store.run_dir import RunDir

    run = RunDir(run_dir)
    run_json = read_json(run.run_json) or {}
    scoring = run_json.get("scoring") or {}
    info = run_json.get("bench_info") or {}
    if opts.judges or opts.baselines or opts.categories or opts.style_control or opts.length_controlled:
        Console(stderr=True).print(
            "note: a rule-checked run has no judge or baseline; those options do not apply"
        )
    n_bootstrap = opts.n_bootstrap if opts.n_bootstrap is not None else int(scoring.get("bootstrap", 100))
    seed = opts.seed if opts.seed is not None else int(scoring.get("seed", 0))
    ci_level = opts.ci_level if opts.ci_level is not None else float(scoring.get("ci_level", 0.90))
    points = load_points(run)
    if not points:
        raise JuristError(f"{run_dir}: the run has no checked answers in points/")
    suite = str(info.get("suite") or points[0].get("metric"))
    rows = score_points(points, suite=suite, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)
    title = f"jurist show: {run_dir.name} ({suite})"
    print_rule_rows(table_console(), rows, title=title, ci_level=ci_level, fmt=fmt, detail=by_instruction)
    if write:
        from jurist.store.jsonl import write_json_atomic

        settings = {"n_bootstrap": n_bootstrap, "seed": seed, "ci_level": ci_level, "resample": "questions"}
        write_json_atomic(
            run_dir / "summary.json", summary_document(rows, {"suite": suite, **info}, settings=settings)
        )
        write_json_atomic(run.leaderboard, rows)


def _show_rubric(run_dir: Path, opts: ScoreOptions, fmt: str, write: bool, detail: bool) -> None:
    """A rubric-graded run (HealthBench, WritingBench) scored again from its point records."""
    from rich.console import Console

    from jurist.report.formats import table_console
    from jurist.run.rubric_points import show_rubric_run

    if opts.baselines or opts.categories or opts.style_control or opts.length_controlled or opts.ensemble:
        Console(stderr=True).print("note: a rubric run has no baseline; those options do not apply")
    show_rubric_run(
        run_dir,
        n_bootstrap=opts.n_bootstrap,
        seed=opts.seed,
        ci_level=opts.ci_level,
        console=table_console(),
        fmt=fmt,
        write=write,
        detail=detail,
        judges=opts.judges,
    )


def register(app: typer.Typer) -> None:
    """Add ``jurist show`` to the CLI."""
    app.command("show", cls=_ShowCommand)(show)
