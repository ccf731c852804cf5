"""Point records, the outcomes of the pointwise families: one per graded rubric item or criterion (rubric)
or one per checked answer (rules), written per model to ``points/<model>.jsonl``, rewritten whole each
run so they always describe the answers now on disk; ``jurist show`` scores again from them alone.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jurist.benchmarks import Benchmark, Question
from jurist.judging import JudgeItem, JudgeKind
from jurist.store import PointRecord, RunDir, iter_jsonl, rewrite_jsonl_atomic

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.door import RecordedRun, ScoreRequest, Scores

Summary = Callable[..., dict[str, Any]]
"""A pointwise family's summary.json of its rows: ``(rows, bench_info, settings=...)``."""
RowPrinter = Callable[..., None]
"""A pointwise family's tables: ``(console, rows, title=, ci_level=, fmt=, detail=)``."""

CHECKS_VERSION = 1
"""Bump when a checker's outcome changes, so stored points are recomputed."""


def point_settings(run: RecordedRun, request: ScoreRequest) -> dict[str, Any]:
    """A pointwise score's settings: the request's bootstrap, else the run's; questions resampled."""
    n_bootstrap, seed, ci_level = run.bootstrap(request)
    return {"n_bootstrap": n_bootstrap, "seed": seed, "ci_level": ci_level, "resample": "questions"}


def unscored(family: str, headline: str, run: RecordedRun, request: ScoreRequest) -> Scores:
    """The end of a run that wrote no point (nothing answered or graded): nothing to score or print."""
    from jurist.families.door import Scores

    return Scores(family, [], headline, f"jurist: {run.name}", point_settings(run, request), scored=False)


def point_documents(scores: Scores, summary: Summary) -> dict[str, Any]:
    """summary.json and leaderboard.json of a pointwise score; nothing when nothing was checked or graded."""
    if not scores.rows:
        return {}
    return {
        "summary.json": summary(scores.rows, scores.detail or {}, settings=scores.settings),
        "leaderboard.json": scores.rows,
    }


def print_point_scores(
    scores: Scores, printer: RowPrinter, fmt: str, title: str, out: Console, err: Console, detail: bool
) -> None:
    """A pointwise score's tables (none when nothing was scored), then its warnings on ``err``."""
    from jurist.report import print_warnings

    if scores.rows:
        ci = float(scores.settings["ci_level"])
        printer(out, scores.rows, title=title, ci_level=ci, fmt=fmt, detail=detail)
    print_warnings(err, [], scores.warnings)


def load_points(run_dir: RunDir) -> list[dict[str, Any]]:
    """Every point record of a run directory."""
    folder = run_dir.root / "points"
    records: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        records.extend(iter_jsonl(path, repair=False))
    return records


def write_rubric_points(
    run_dir: RunDir,
    judged: Iterable[tuple[JudgeItem, dict[str, Any]]],
    kinds: Mapping[str, JudgeKind],
    models: Sequence[str],
) -> int:
    """Point records of the current rubric judgments (:meth:`jurist.judging.rubric.RubricJudge.outcomes`),
    written per model (every judge's points in one file); returns how many."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item, record in judged:
        by_model[item.model].extend(kinds[item.judge].outcomes(record))
    for model in models:
        rewrite_jsonl_atomic(run_dir.points(model), by_model.get(model, []))
    return sum(len(by_model.get(model, [])) for model in models)


def _answer_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_points(run_dir: RunDir, bench: Benchmark, models: Sequence[str], samples: int) -> int:
    """A point record for every (model, question, sample) answer on disk, checked by :mod:`jurist.rules`
    (no requests), written per model; a point is reused while its answer and the checkers' version are
    unchanged. Returns how many."""
    from jurist.rules import check_response, checkers, visible_answer

    assert bench.rule_suite is not None
    table = checkers(bench.rule_suite)
    unanswered_fail = bench.info.get("unanswered") == "failed"  # IFBench db69a6f: as upstream counts
    sources = bench.info.get("answers_source", {})
    total = 0
    for model in models:
        answers = run_dir.load_answers(model)
        path = run_dir.points(model)
        stored = {(str(p["uid"]), int(p["sample"])): p for p in iter_jsonl(path)} if path.exists() else {}
        fresh: list[PointRecord] = []
        for q in bench.questions:
            for sample in range(samples):
                answer = answers.get((q.uid, sample))
                if answer is None:
                    if unanswered_fail and str(sources.get(model, "")).startswith("file:"):
                        fresh.append(_unanswered_point(q, sample, model, bench.rule_suite))
                    continue
                text, truncated = visible_answer(answer)
                digest = _answer_hash(text)
                old = stored.get((q.uid, sample))
                if (
                    old
                    and old.get("answer_hash") == digest
                    and old.get("checks_version") == CHECKS_VERSION
                    and old.get("metric") == bench.rule_suite  # same checkers (IFBench: same version)
                ):
                    fresh.append(old)  # type: ignore[arg-type]
                    continue
                ids, kwargs = q.metadata["instruction_id_list"], q.metadata["kwargs"]
                results = check_response(table, text, ids, kwargs, q.prompt)
                checks = []
                for r in results:
                    check: dict[str, Any] = {"id": r.instruction_id, "strict": r.strict, "loose": r.loose}
                    if r.error:
                        check["error"] = r.error
                    checks.append(check)
                record: dict[str, Any] = {
                    "kind": "point",
                    "uid": q.uid,
                    "sample": sample,
                    "model": model,
                    "judge": None,
                    "metric": bench.rule_suite,
                    "value": float(all(r.strict for r in results)),
                    "category": q.category,
                    "answer_hash": digest,
                    "checks_version": CHECKS_VERSION,
                    "detail": {"instructions": checks, "truncated": truncated, "empty": not text.strip()},
                }
                fresh.append(record)  # type: ignore[arg-type]
        rewrite_jsonl_atomic(path, fresh)
        total += len(fresh)
    return total


def _unanswered_point(q: Question, sample: int, model: str, suite: str) -> PointRecord:
    """A prompt the ``--answers`` file does not answer, every instruction failed (IFBench ``db69a6f``'s
    ``empty_output``)."""
    checks = [{"id": i, "strict": False, "loose": False} for i in q.metadata["instruction_id_list"]]
    record: dict[str, Any] = {
        "kind": "point",
        "uid": q.uid,
        "sample": sample,
        "model": model,
        "judge": None,
        "metric": suite,
        "value": 0.0,
        "category": q.category,
        "answer_hash": None,
        "checks_version": CHECKS_VERSION,
        "detail": {"instructions": checks, "truncated": False, "empty": True, "unanswered": True},
    }
    return record  # type: ignore[return-value]
