"""Anytime-valid confidence sequences for the mean of bounded values, so an evaluation may look at its
interval after every round and stop whenever it likes without the interval losing its coverage.

A fixed-n interval looked at after every round and stopped on the first narrow one covers far less than
its level (the error of repeated looks). A confidence sequence (CS) holds at every n at once:
P(for all n, mean in CS_n) >= 1 - alpha, so any data-dependent stopping time keeps the guarantee
(Howard, Ramdas, McAuliffe and Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Ann. Statist. 49(2)).

The one here is the predictable plug-in empirical-Bernstein CS of Waudby-Smith and Ramdas (2023,
"Estimating means of bounded random variables by betting", JRSS-B 86(1), Theorem 2): it adapts to the
variance (a model that wins 3% of its games stops far sooner than one at 50%), and it needs nothing but
values in [0, 1]. With a finite pool of ``population`` questions drawn without replacement (a task's
questions in a seeded random order) the centring uses the without-replacement mean of what is left
(Waudby-Smith and Ramdas 2020, "Confidence sequences for sampling without replacement", NeurIPS, §3),
so the sequence covers the mean of the whole task and shrinks to it as the last question comes in.
Each side gets alpha/2 (two-sided by a union bound). Pure: arrays in, numbers out.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

LAMBDA_CAP = 0.5
"""The largest bet a step may take (Waudby-Smith and Ramdas use 1/2 or 3/4; 1/2 keeps psi small)."""


class SequenceInterval(NamedTuple):
    """A confidence sequence's interval after ``n`` values, on the values' [0, 1] scale."""

    estimate: float
    low: float
    high: float
    n: int


def _psi(lam: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """psi_E(lambda) = (-log(1 - lambda) - lambda) / 4, the empirical-Bernstein exponent."""
    return (-np.log1p(-lam) - lam) / 4.0


def confidence_sequence(
    values: npt.ArrayLike, *, alpha: float = 0.05, population: int | None = None
) -> SequenceInterval:
    """The CS of the mean of ``values`` (each in [0, 1], in the order they were drawn) after all of them.

    ``population``: the size of the finite pool they are drawn from without replacement (None: an
    unbounded i.i.d. stream). The interval is intersected with [0, 1]; running intersections over
    earlier looks are the caller's (:func:`running_sequence` takes them)."""
    return running_sequence(values, alpha=alpha, population=population)[-1]


def running_sequence(
    values: npt.ArrayLike, *, alpha: float = 0.05, population: int | None = None
) -> list[SequenceInterval]:
    """The CS after each value (its running intersection, so it never widens), first to last."""
    estimate, low, high = sequence_bounds(values, alpha=alpha, population=population)
    return [
        SequenceInterval(float(estimate[k]), float(min(low[k], high[k])), float(max(low[k], high[k])), k + 1)
        for k in range(estimate.shape[0])
    ]


def sequence_bounds(
    values: npt.ArrayLike, *, alpha: float = 0.05, population: int | None = None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`running_sequence` as arrays (running mean, low, high after each value), for replays."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.shape[0] == 0:
        raise ValueError("values must be a non-empty 1-d array")
    if np.any((x < 0.0) | (x > 1.0)) or not np.all(np.isfinite(x)):
        raise ValueError("values must lie in [0, 1]")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    n = x.shape[0]
    if population is not None and n > population:
        raise ValueError(f"{n} values drawn from a population of {population}")
    t = np.arange(1, n + 1, dtype=np.float64)
    # Predictable mean and variance estimates: those of the values before step t (with a prior of 1/2, 1/4).
    mean_after = (0.5 + np.cumsum(x)) / (t + 1.0)
    var_after = (0.25 + np.cumsum((x - mean_after) ** 2)) / (t + 1.0)
    mean_before = np.concatenate([[0.5], mean_after[:-1]])
    var_before = np.concatenate([[0.25], var_after[:-1]])
    log_term = math.log(2.0 / alpha)
    lam = np.minimum(np.sqrt(2.0 * log_term / (var_before * t * np.log1p(t))), LAMBDA_CAP)
    penalty = np.cumsum(4.0 * (x - mean_before) ** 2 * _psi(lam))
    if population is None:
        weight = np.ones(n)
        shift = np.zeros(n)
    else:
        left = population - t + 1.0  # questions not yet drawn before step t, this one included
        drawn_before = np.concatenate([[0.0], np.cumsum(x)[:-1]])
        weight = population / left
        shift = drawn_before / left
    scale = np.cumsum(lam * weight)
    centre = np.cumsum(lam * (x + shift)) / scale
    half = (log_term + penalty) / scale
    low = np.maximum.accumulate(np.clip(centre - half, 0.0, 1.0))
    high = np.minimum.accumulate(np.clip(centre + half, 0.0, 1.0))
    estimate = np.cumsum(x) / t
    if population is not None and n == population:  # every question drawn: the mean is known exactly
        low[-1] = high[-1] = estimate[-1]
    return estimate, low, high


def difference_sequence(
    a: npt.ArrayLike, b: npt.ArrayLike, *, alpha: float = 0.05, population: int | None = None
) -> SequenceInterval:
    """The CS of mean(b - a) for paired values in [0, 1] (so differences in [-1, 1]), on that scale:
    the differences are mapped onto [0, 1] as (d + 1) / 2, and the interval back."""
    d = (np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64) + 1.0) / 2.0
    cs = confidence_sequence(d, alpha=alpha, population=population)
    return SequenceInterval(2.0 * cs.estimate - 1.0, 2.0 * cs.low - 1.0, 2.0 * cs.high - 1.0, cs.n)
