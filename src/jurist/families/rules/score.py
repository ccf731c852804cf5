"""Rule-checked scores from point records: prompt- and instruction-level accuracy, strict and loose.

Each point record is one answer (one question, one sample) with every instruction's strict and loose
outcome. A score is a ratio over answers (prompt level) or over instructions (instruction level, the
reference's micro average); its interval is the question-clustered bootstrap (the samples of one prompt
are resampled together), beside eval_framework's across-run view where each sample index is a run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from jurist.ratings import across_runs, win_rate_from_entries

METRICS = ("prompt_strict", "inst_strict", "prompt_loose", "inst_loose")
"""Column order: the reference's four numbers."""
HEADLINE = {"ifeval": "prompt_strict", "ifbench": "prompt_loose"}
"""The number each benchmark's paper reports first (IFBench: prompt-level loose)."""
LABELS = {
    "prompt_strict": "prompt strict",
    "inst_strict": "instruction strict",
    "prompt_loose": "prompt loose",
    "inst_loose": "instruction loose",
}


def _counts(point: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """(followed, total) of each metric for one answer."""
    checks = point["detail"]["instructions"]
    n = len(checks)
    strict = sum(1 for c in checks if c["strict"])
    loose = sum(1 for c in checks if c["loose"])
    return {
        "prompt_strict": (float(strict == n), 1.0),
        "inst_strict": (float(strict), float(n)),
        "prompt_loose": (float(loose == n), 1.0),
        "inst_loose": (float(loose), float(n)),
    }


def _ratio_ci(
    per_question: dict[str, list[tuple[float, float]]], n_bootstrap: int, seed: int, ci_level: float
) -> dict[str, float]:
    uids = sorted(per_question)  # questions resampled in one order, whatever order the points came in
    sums = np.array([sum(s for s, _ in per_question[u]) for u in uids], dtype=np.float64)
    counts = np.array([sum(c for _, c in per_question[u]) for u in uids], dtype=np.float64)
    result = win_rate_from_entries(sums, counts, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)
    return {"score": result.score, "ci_low": result.ci_low, "ci_high": result.ci_high}


def score_model(
    points: Sequence[dict[str, Any]], *, n_bootstrap: int, seed: int, ci_level: float
) -> dict[str, Any]:
    """One model's row: the four metrics with CIs, the across-run view, per-instruction accuracy."""
    by_metric: dict[str, dict[str, list[tuple[float, float]]]] = {m: defaultdict(list) for m in METRICS}
    by_sample: dict[int, dict[str, list[float]]] = defaultdict(lambda: {m: [0.0, 0.0] for m in METRICS})
    per_id: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # n, strict, loose
    truncated = empty = errors = unanswered = 0
    for point in points:
        counts = _counts(point)
        for metric, pair in counts.items():
            by_metric[metric][str(point["uid"])].append(pair)
            run = by_sample[int(point["sample"])][metric]
            run[0] += pair[0]
            run[1] += pair[1]
        for check in point["detail"]["instructions"]:
            cell = per_id[check["id"]]
            cell[0] += 1
            cell[1] += bool(check["strict"])
            cell[2] += bool(check["loose"])
            errors += bool(check.get("error"))
        truncated += bool(point["detail"].get("truncated"))
        empty += bool(point["detail"].get("empty"))
        unanswered += bool(point["detail"].get("unanswered"))  # counted failed (IFBench db69a6f)
    row: dict[str, Any] = {
        "n_questions": len(by_metric["prompt_strict"]),
        "n_answers": len(points),
        "samples": len(by_sample),
        "truncated": truncated,
        "empty": empty,
        "unanswered": unanswered,
        "checker_errors": errors,
    }
    for offset, metric in enumerate(METRICS):
        ci = _ratio_ci(by_metric[metric], n_bootstrap, seed + offset, ci_level)
        row[metric] = ci["score"]
        row[f"{metric}_ci_low"] = ci["ci_low"]
        row[f"{metric}_ci_high"] = ci["ci_high"]
    row["across_runs"] = {
        metric: across_runs(
            [100.0 * c[metric][0] / c[metric][1] for _, c in sorted(by_sample.items()) if c[metric][1]]
        )
        for metric in METRICS
    }
    row["per_instruction"] = {
        iid: {"n": n, "strict": 100.0 * s / n, "loose": 100.0 * lo / n}
        for iid, (n, s, lo) in sorted(per_id.items())
    }
    return row


def score_points(
    points: Iterable[dict[str, Any]],
    *,
    suite: str,
    n_bootstrap: int,
    seed: int,
    ci_level: float,
) -> list[dict[str, Any]]:
    """Rows per model, best headline score first."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for point in points:
        by_model[str(point["model"])].append(point)
    headline = HEADLINE.get(suite, "prompt_strict")
    rows = []
    for model, model_points in by_model.items():
        row: dict[str, Any] = {"model": model, "suite": suite, "headline": headline}
        row |= score_model(model_points, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)
        rows.append(row)
    rows.sort(key=lambda r: (-r[headline], r["model"]))
    return rows


def reference_summary(row: dict[str, Any]) -> dict[str, Any]:
    """eval_framework's ``summary`` shape for one model (fractions, not percent), for drop-in comparison."""
    return {
        mode: {
            "prompt_accuracy": row[f"prompt_{mode}"] / 100.0,
            "instruction_accuracy": row[f"inst_{mode}"] / 100.0,
            "n_prompts": row["n_questions"],
        }
        for mode in ("strict", "loose")
    }
