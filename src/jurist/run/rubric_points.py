"""The scoring step of a rubric-graded benchmark: stored judgments -> point records -> scores.

Every current judgment (the answers on disk, the grader's prompt) gives one point per rubric item or
criterion (:meth:`jurist.judging.rubric.RubricJudge.outcomes`), written per model to ``points/<model>.jsonl``
(rewritten whole each run, so it always describes the answers now on disk); ``jurist show`` scores again
from those points alone. Scores go to ``summary.json`` (rows plus each reference's own shape) and
``leaderboard.json``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.judging.base import JudgeItem, JudgeKind
from jurist.store.jsonl import rewrite_jsonl_atomic, write_json_atomic
from jurist.store.run_dir import RunDir

RUBRIC_SUITES = ("healthbench", "writingbench")


def write_rubric_points(
    run_dir: RunDir,
    judged: Iterable[tuple[JudgeItem, dict[str, Any]]],
    kinds: Mapping[str, JudgeKind],
    models: Sequence[str],
) -> list[dict[str, Any]]:
    """Point records of the current judgments, written per model (every judge's points in one file)."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item, record in judged:
        by_model[item.model].extend(kinds[item.judge].outcomes(record))
    points: list[dict[str, Any]] = []
    for model in models:
        rewrite_jsonl_atomic(run_dir.points(model), by_model.get(model, []))
        points.extend(by_model.get(model, []))
    return points


def summary_document(
    rows: list[dict[str, Any]], bench_info: Mapping[str, Any], *, settings: dict[str, Any]
) -> dict[str, Any]:
    """``summary.json``: the stable result of a rubric run, with each row's reference-shaped summary."""
    from jurist.scoring.rubric import reference_summary

    return {
        "schema": "jurist.rubric.summary/1",
        "suite": bench_info.get("suite"),
        "variant": bench_info.get("variant"),
        "data": {key: bench_info.get(key) for key in ("subset", "version", "source", "file", "sha256")},
        "grader": bench_info.get("grader"),
        "settings": settings,
        "tstamp": time.time(),
        "rows": [{**row, "summary": reference_summary(row)} for row in rows],
    }


def report_rubric_scores(
    run_dir: RunDir,
    points: list[dict[str, Any]],
    bench_info: Mapping[str, Any],
    *,
    n_bootstrap: int,
    seed: int,
    ci_level: float,
    console: Console,
    title: str,
    fmt: str = "table",
    write: bool = True,
    detail: bool = False,
) -> list[dict[str, Any]]:
    """Score ``points`` and print them in ``fmt``; ``write``: also summary.json and leaderboard.json."""
    from jurist.report.rubric_table import print_rubric_rows
    from jurist.scoring.rubric import score_rubric_points

    suite = str(bench_info.get("suite") or (points[0]["metric"] if points else ""))
    variant = bench_info.get("variant")
    rows = score_rubric_points(
        points,
        suite=suite,
        variant=str(variant) if variant else None,
        n_bootstrap=n_bootstrap,
        seed=seed,
        ci_level=ci_level,
    )
    if write:
        settings = {
            "n_bootstrap": n_bootstrap,
            "seed": seed,
            "ci_level": ci_level,
            "resample": "questions",
            "bootstrap_std_rounds": 1000,
        }
        write_json_atomic(
            run_dir.root / "summary.json", summary_document(rows, bench_info, settings=settings)
        )
        write_json_atomic(run_dir.leaderboard, rows)
    print_rubric_rows(console, rows, title=title, ci_level=ci_level, fmt=fmt, detail=detail)
    return rows


def has_scores(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row has a score (a run whose every answer went unscored has none)."""
    return any(row.get("score", row.get("overall")) is not None for row in rows)


def is_rubric_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a rubric-graded run (run.json's judge kind)."""
    from jurist.scoring.battles import read_json

    run_json = read_json(RunDir(run_dir).run_json) or {}
    return run_json.get("judge_kind") == "rubric"


def show_rubric_run(
    run_dir: Path,
    *,
    n_bootstrap: int | None,
    seed: int | None,
    ci_level: float | None,
    console: Console,
    fmt: str,
    write: bool,
    detail: bool,
    judges: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """``jurist show`` of a rubric run: its point records scored again, the run's settings unless given
    (``judges``: only these judges' points)."""
    from jurist.errors import JuristError
    from jurist.run.rule_points import load_points
    from jurist.scoring.battles import read_json

    run = RunDir(run_dir)
    run_json = read_json(run.run_json) or {}
    scoring = run_json.get("scoring") or {}
    points = [p for p in load_points(run) if not judges or p.get("judge") in judges]
    if not points:
        raise JuristError(f"{run_dir}: the run has no graded answers in points/")
    return report_rubric_scores(
        run,
        points,
        run_json.get("bench_info") or {},
        n_bootstrap=n_bootstrap if n_bootstrap is not None else int(scoring.get("bootstrap", 100)),
        seed=seed if seed is not None else int(scoring.get("seed", 0)),
        ci_level=ci_level if ci_level is not None else float(scoring.get("ci_level", 0.90)),
        console=console,
        title=f"jurist show: {run_dir.name}",
        fmt=fmt,
        write=write,
        detail=detail,
    )
