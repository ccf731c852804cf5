"""The rule-check step of a rule-checked benchmark: answers on disk -> point records -> scores.

No requests: every answer of every sample is checked by :mod:`jurist.rules` and written as a point record
(``points/<model>.jsonl``, each instruction's strict and loose outcome), so ``jurist show`` re-scores from
the run directory alone. A point is reused while its answer and the checkers' version are unchanged;
the file is rewritten whole each run, so it always describes the answers now on disk.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from jurist.benchmarks.base import Benchmark
from jurist.rules.answers import visible_answer
from jurist.store.jsonl import iter_jsonl, rewrite_jsonl_atomic, write_json_atomic
from jurist.store.records import PointRecord
from jurist.store.run_dir import RunDir

CHECKS_VERSION = 1
"""Bump when a checker's outcome changes, so stored points are recomputed."""


def _answer_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_points(run_dir: RunDir, bench: Benchmark, models: Sequence[str], samples: int) -> list[PointRecord]:
    """Point records for every (model, question, sample) answer on disk, written per model."""
    from jurist.rules.evaluate import check_response
    from jurist.rules.registry import checkers

    assert bench.rule_suite in ("ifeval", "ifbench")
    table = checkers(bench.rule_suite)
    points: list[PointRecord] = []
    for model in models:
        answers = run_dir.load_answers(model)
        path = run_dir.points(model)
        stored = {(str(p["uid"]), int(p["sample"])): p for p in iter_jsonl(path)} if path.exists() else {}
        fresh: list[PointRecord] = []
        for q in bench.questions:
            for sample in range(samples):
                answer = answers.get((q.uid, sample))
                if answer is None:
                    continue
                text, truncated = visible_answer(answer)
                digest = _answer_hash(text)
                old = stored.get((q.uid, sample))
                if old and old.get("answer_hash") == digest and old.get("checks_version") == CHECKS_VERSION:
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
        points.extend(fresh)
    return points


def load_points(run_dir: RunDir) -> list[dict[str, Any]]:
    """Every point record of a run directory (for ``jurist show``)."""
    folder = run_dir.root / "points"
    records: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        records.extend(iter_jsonl(path, repair=False))
    return records


def summary_document(
    rows: list[dict[str, Any]], bench_info: dict[str, Any], *, settings: dict[str, Any]
) -> dict[str, Any]:
    """``summary.json``: the stable, documented result of a rule-checked run (see the README)."""
    from jurist.scoring.rules import reference_summary

    return {
        "schema": "jurist.rules.summary/1",
        "suite": bench_info.get("suite"),
        "version": bench_info.get("version"),
        "data_sha256": bench_info.get("sha256"),
        "settings": settings,
        "tstamp": time.time(),
        "models": {
            row["model"]: {
                **{key: value for key, value in row.items() if key != "model"},
                "summary": reference_summary(row),
            }
            for row in rows
        },
    }


def score_rule_run(
    run_dir: RunDir,
    points: list[dict[str, Any]],
    bench_info: dict[str, Any],
    *,
    n_bootstrap: int,
    seed: int,
    ci_level: float,
    console: Console,
    title: str,
    fmt: str = "table",
) -> list[dict[str, Any]]:
    """Score the points, write ``summary.json`` and ``leaderboard.json``, print the table."""
    from jurist.report.rules_table import print_rule_rows
    from jurist.scoring.rules import score_points

    suite = str(bench_info.get("suite"))
    rows = score_points(points, suite=suite, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)
    settings = {"n_bootstrap": n_bootstrap, "seed": seed, "ci_level": ci_level, "resample": "questions"}
    write_json_atomic(run_dir.root / "summary.json", summary_document(rows, bench_info, settings=settings))
    write_json_atomic(run_dir.leaderboard, rows)
    print_rule_rows(console, rows, title=title, ci_level=ci_level, fmt=fmt)
    return rows
