"""Scores over repeated samples: the across-run view of eval_framework's ``summary_agg``.

Sample k of every prompt is treated as run k (as ``--num-runs`` would have produced); the runs' scores give
mean, std (ddof=1), sem = std/sqrt(n). Prompts sampled N times are not N independent prompts, so the
headline interval is the question-clustered bootstrap (:func:`jurist.ratings.winrate.win_rate_from_entries`
resamples whole questions); this view is reported beside it, for comparison with eval_framework.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypedDict


class AcrossRuns(TypedDict):
    mean: float | None
    std: float | None
    sem: float | None
    n_runs: int
    per_run: list[float]


def across_runs(per_run: Sequence[float]) -> AcrossRuns:
    """Mean, sample std and standard error of per-run scores (std and sem are None for one run)."""
    values = [float(v) for v in per_run]
    n = len(values)
    if n == 0:
        return AcrossRuns(mean=None, std=None, sem=None, n_runs=0, per_run=[])
    mean = math.fsum(values) / n
    if n == 1:
        return AcrossRuns(mean=mean, std=None, sem=None, n_runs=1, per_run=values)
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return AcrossRuns(mean=mean, std=std, sem=std / math.sqrt(n), n_runs=n, per_run=values)
