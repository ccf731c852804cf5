"""The end of a run: what is on disk scored by the benchmark's kind of work, tables printed, files written.

Rule-checked runs check answers (no judge), rubric runs turn graded items into points, arena runs fit
the placement, every other judged run writes battles and win rates. Apart from the pipeline so that a
``--tasks`` run scores each task the same way, and the pipeline stays about running.
"""

from __future__ import annotations

from rich.console import Console

from jurist.report.formats import table_console
from jurist.run.outcomes import Outcome, RunView, score_outcomes
from jurist.run.work import JudgeWork


def score_finished_run(view: RunView, work: JudgeWork, samples: int, console: Console) -> Outcome:
    """Score the run directory of ``view`` (``samples`` answers per question); with ``--format`` other
    than table, the tables go to ``console`` and the rows to stdout in that format."""
    bench, config = view.bench, view.config
    if bench.rule_suite is not None and config.mode != "inference-only":
        return _check_rules(view, samples)
    if not view.judges:
        return Outcome([], scored=True)  # answers only: nothing to score, nothing missing
    if bench.judge_kind == "rubric":
        return _score_rubric(view, work)
    plain = config.output_format == "table"
    console = table_console() if plain else console
    if {"arena-elo", "arena-calibration"} & set(bench.metrics):
        from jurist.run.arena import score_arena_run

        outcome = Outcome(*score_arena_run(view, work.judged(), console))
    else:
        outcome = score_outcomes(view, work.judged(), console, work.indexes.built_answers())
    if not plain:
        from jurist.report.formats import print_rows

        print_rows(outcome.rows, config.output_format)
    return outcome


def _check_rules(view: RunView, samples: int) -> Outcome:
    """Check every answer on disk by rule (no requests), write points and the summary, print."""
    from jurist.run.rule_points import check_points, score_rule_run

    points = check_points(view.run_dir, view.bench, list(view.candidates), samples)
    if not points:
        return Outcome([], scored=False)
    config = view.config
    rows = score_rule_run(
        view.run_dir,
        [dict(p) for p in points],
        dict(view.bench.info),
        n_bootstrap=config.n_bootstrap,
        seed=config.seed,
        ci_level=config.ci_level,
        console=table_console(),
        title=f"jurist: {view.bench.name}",
        fmt=config.output_format,
    )
    return Outcome(rows, scored=True)


def _score_rubric(view: RunView, work: JudgeWork) -> Outcome:
    """Points from the current rubric judgments (one per graded item), scored, summary written."""
    from jurist.run.rubric_points import has_scores, report_rubric_scores, write_rubric_points

    points = write_rubric_points(view.run_dir, work.judged(), view.kinds, list(view.candidates))
    if not points:
        return Outcome([], scored=False)
    config = view.config
    rows = report_rubric_scores(
        view.run_dir,
        points,
        dict(view.bench.info),
        n_bootstrap=config.n_bootstrap,
        seed=config.seed,
        ci_level=config.ci_level,
        console=table_console(),
        title=f"jurist: {view.bench.name}",
        fmt=config.output_format,
    )
    return Outcome(rows, scored=has_scores(rows))
