"""Paired comparisons of two runs on the questions both answered: the difference, its interval, a p-value,
Holm's correction across tasks, and the smallest difference the test could detect at this n.

Two runs judged on the same questions share each question's difficulty, so the difference is measured
per question and resampled by question (the paired bootstrap), which is far tighter than comparing two
separate intervals. A score is a ratio (sum of entries / number of entries: a weighted win rate, a
prompt-level accuracy, a mean rubric score), so each replicate recomputes both ratios on the same drawn
questions. Rule-checked runs also get McNemar's exact test on their pass/fail pairs. Pure: arrays in,
numbers out, seeded; normal quantiles from the standard library (no ``scipy.stats`` import cost).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from jurist.ratings._shared import multinomial_draws
from jurist.ratings.binomial import binomial_p_value

POWER = 0.8
"""The power at which the minimum detectable difference is stated (the usual 80%)."""


class PairedDifference(NamedTuple):
    """score(b) - score(a) on the shared questions, in the scores' units (``scale`` x the ratio)."""

    estimate: float
    ci_low: float
    ci_high: float
    p: float
    standard_error: float
    mdd: float
    n: int


def paired_bootstrap(
    sums_a: npt.ArrayLike,
    counts_a: npt.ArrayLike,
    sums_b: npt.ArrayLike,
    counts_b: npt.ArrayLike,
    *,
    scale: float = 100.0,
    n_bootstrap: int = 2000,
    seed: int = 0,
    ci_level: float = 0.95,
) -> PairedDifference:
    """The paired, question-clustered bootstrap of ``scale * (sum b / count b - sum a / count a)``.

    Index q is the same question on both sides (``sums_x[q]``: the sum of run x's entries on it,
    ``counts_x[q]`` their number, so the samples of a question move together). The interval is the
    percentile interval; the p-value (difference 0) is the normal one with the bootstrap's standard
    error, which stays meaningful far below 1 / rounds; the minimum detectable difference is
    ``(z(1 - alpha/2) + z(power)) * se`` with alpha = 1 - ci_level and power 80%."""
    arrays = [np.asarray(v, dtype=np.float64) for v in (sums_a, counts_a, sums_b, counts_b)]
    sa, ca, sb, cb = arrays
    n = int(sa.shape[0])
    if any(v.shape != (n,) for v in arrays):
        raise ValueError("the four arrays must have one entry per shared question")
    if n == 0 or ca.sum() <= 0 or cb.sum() <= 0:
        nan = float("nan")
        return PairedDifference(nan, nan, nan, nan, nan, nan, 0)
    estimate = scale * float(sb.sum() / cb.sum() - sa.sum() / ca.sum())
    if n_bootstrap <= 1:
        return PairedDifference(estimate, estimate, estimate, float("nan"), float("nan"), float("nan"), n)
    rng = np.random.default_rng(seed)
    tiny = 1e-300
    boot = np.concatenate(
        [
            scale * ((w @ sb) / np.maximum(w @ cb, tiny) - (w @ sa) / np.maximum(w @ ca, tiny))
            for w in multinomial_draws(rng, n, n_bootstrap)
        ]
    )
    tail = (1.0 - ci_level) / 2.0
    low, high = np.quantile(boot, [tail, 1.0 - tail])
    se = float(np.std(boot, ddof=1))
    return PairedDifference(
        estimate, float(low), float(high), normal_p_value(estimate, se), se, detectable(se, ci_level), n
    )


def normal_p_value(estimate: float, standard_error: float) -> float:
    """Two-sided p-value of a zero difference (1.0 when there is no spread at all and no difference)."""
    if not math.isfinite(standard_error):
        return float("nan")
    if standard_error <= 0.0:
        return 1.0 if estimate == 0.0 else 0.0
    return 2.0 * (1.0 - NormalDist().cdf(abs(estimate) / standard_error))


def detectable(standard_error: float, ci_level: float, power: float = POWER) -> float:
    """The minimum detectable difference: the true difference the two-sided test at alpha = 1 - ci_level
    finds with probability ``power``, given this standard error."""
    z = NormalDist().inv_cdf
    return (z(1.0 - (1.0 - ci_level) / 2.0) + z(power)) * standard_error


class McNemar(NamedTuple):
    """McNemar's exact test on paired pass/fail outcomes: the discordant pairs and the p-value."""

    a_only: int
    b_only: int
    p: float


def mcnemar_exact(passed_a: Sequence[bool], passed_b: Sequence[bool]) -> McNemar:
    """Exact McNemar: under no difference, each discordant pair is B's with probability 1/2."""
    if len(passed_a) != len(passed_b):
        raise ValueError("one outcome per shared answer on each side")
    a_only = sum(1 for x, y in zip(passed_a, passed_b, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(passed_a, passed_b, strict=True) if y and not x)
    return McNemar(a_only, b_only, binomial_p_value(b_only, a_only + b_only, 0.5))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error across the tasks), in the given order;
    NaN stays NaN and counts for nothing."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(indexed)
    adjusted = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
