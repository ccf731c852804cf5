"""The judge card's numbers: a probe's per-item values summarised as a mean with a bootstrap interval,
and the agreement and calibration of a judge with gold labels. Pure numpy: arrays in, numbers out, seeded.

Every probe of the judge card (:mod:`jurist.audit`) reduces to one value per probe item (a verdict's shift,
a flip, an agreement, a rubric item marked met), so one interval function serves them all. Items that
belong together (the two games of one question) are resampled together: they are not independent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from jurist.ratings._shared import ci_tails, multinomial_draws
from jurist.ratings.agreement import cohen_kappa
from jurist.ratings.judge_quality import DECISIONS, pair_decision

CARD_LEVEL = 0.95
"""The card's intervals are central 95% intervals: a probe is flagged only when all of it lies beyond
its threshold, so a flag is rarely chance."""
CARD_ROUNDS = 2000
"""Bootstrap rounds of a probe's interval (a probe has at most a few hundred items: cheap)."""


class ProbeInterval(NamedTuple):
    """A probe's estimate (the mean of its item values), its bootstrap interval and its number of items;
    NaN throughout when there are no items."""

    estimate: float
    low: float
    high: float
    n: int


def mean_interval(
    values: Sequence[float] | npt.ArrayLike,
    clusters: Sequence[object] | None = None,
    *,
    rounds: int = CARD_ROUNDS,
    seed: int = 0,
    level: float = CARD_LEVEL,
) -> ProbeInterval:
    """The mean of ``values`` with a percentile bootstrap interval; ``clusters`` (one id per value):
    resample whole clusters (the ratio of summed values to summed counts), else single values."""
    data = np.asarray(values, dtype=np.float64).ravel()
    n = int(data.size)
    if n == 0:
        return ProbeInterval(math.nan, math.nan, math.nan, 0)
    estimate = float(data.mean())
    if clusters is None:
        sums, counts = data, np.ones(n, dtype=np.float64)
    else:
        if len(clusters) != n:
            raise ValueError(f"{len(clusters)} cluster ids for {n} values")
        ids: dict[object, int] = {}
        index = np.fromiter((ids.setdefault(c, len(ids)) for c in clusters), dtype=np.int64, count=n)
        sums = np.bincount(index, weights=data).astype(np.float64)
        counts = np.bincount(index).astype(np.float64)
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            (block @ sums) / np.maximum(block @ counts, 1.0)
            for block in (draws.astype(np.float64) for draws in multinomial_draws(rng, len(sums), rounds))
        ]
    )
    low_q, high_q = ci_tails(level)
    low, high = np.quantile(means, [low_q, high_q])
    return ProbeInterval(estimate, float(min(low, estimate)), float(max(high, estimate)), n)


class GoldAgreement(NamedTuple):
    """Accuracy against gold labels (with its interval), and Cohen's kappa of decisions and labels."""

    accuracy: ProbeInterval
    kappa: float


def gold_agreement(
    labels: Sequence[str], games: Sequence[Sequence[str | None]], *, seed: int = 0
) -> GoldAgreement:
    """Agreement of a judge's pair decisions (JudgeBench's rule,
    :func:`~jurist.ratings.judge_quality.pair_decision`) with the gold ``labels`` ("A>B" or "B>A"):
    accuracy with a bootstrap over pairs, and unweighted kappa over the three decisions."""
    decisions = [pair_decision(label, pair) for label, pair in zip(labels, games, strict=True)]
    hits = [float(d == label) for d, label in zip(decisions, labels, strict=True)]
    kappa = cohen_kappa(decisions, list(labels), labels=DECISIONS) if decisions else math.nan
    return GoldAgreement(mean_interval(hits, seed=seed), kappa)


class Calibration(NamedTuple):
    """Brier score and expected calibration error of stated probabilities against outcomes."""

    brier: float
    ece: float
    n: int


def calibration(probabilities: npt.ArrayLike, outcomes: npt.ArrayLike, *, bins: int = 10) -> Calibration:
    """Brier score and the expected calibration error over ``bins`` equal-width bins of the probability
    that the event happens (``outcomes``: 1 it happened, 0 not, 0.5 a tie)."""
    p = np.asarray(probabilities, dtype=np.float64).ravel()
    y = np.asarray(outcomes, dtype=np.float64).ravel()
    if p.size != y.size:
        raise ValueError(f"{p.size} probabilities for {y.size} outcomes")
    if p.size == 0:
        return Calibration(math.nan, math.nan, 0)
    brier = float(np.mean((p - y) ** 2))
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    ece = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            ece += float(inside.mean()) * abs(float(p[inside].mean()) - float(y[inside].mean()))
    return Calibration(brier, ece, int(p.size))


class CalibrationInterval(NamedTuple):
    """The card's calibration: the Brier score with its bootstrap interval, and the expected calibration
    error of the same probabilities."""

    brier: ProbeInterval
    ece: float


def calibration_interval(
    probabilities: Sequence[float], outcomes: Sequence[float], clusters: Sequence[object], *, seed: int = 0
) -> CalibrationInterval:
    """:func:`calibration` with the Brier score's interval, resampling ``clusters`` (one per probability:
    its question) together."""
    squared = [(p - y) ** 2 for p, y in zip(probabilities, outcomes, strict=True)]
    brier = mean_interval(squared, clusters, seed=seed)
    return CalibrationInterval(brier, calibration(probabilities, outcomes).ece)
