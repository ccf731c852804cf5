"""Place judged models on a human-voted arena scale (JudgeArena's Elo method).

Human battles between well-voted models (at least ``min_human_battles`` each) anchor the scale; the
judge's battles of the evaluated model(s) against arena opponents place them on it. Both sets of battles
are fitted together by Bradley-Terry and bootstrapped together (resampling battles). A BT fit on the
human anchors alone gives the "human Elo" against which the combined fit's drift is measured (MAE over
the anchor models), which tells whether the judged battles distorted the human scale.

Ratings are shifted so the anchor models average ``anchor_rating`` (or so that one chosen model sits at
it), in the point estimate and in every replicate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from jurist.ratings.bt import FloatArray, IntArray, bradley_terry, ci_tails
from jurist.ratings.separation import Separation

BoolArray = npt.NDArray[np.bool_]


class Placement(NamedTuple):
    """Combined human + judge ratings for every model index.

    ``ratings`` is the combined point fit, ``ci_low``/``ci_high`` bootstrap percentiles and
    ``bootstrap_mean``/``bootstrap_std`` the replicate mean and std (JudgeArena reports those).
    ``human_ratings`` is the fit on anchor battles only (NaN for models outside the anchor set);
    ``mae_vs_human`` the mean absolute difference of the two over anchor models. ``separation``: the
    models of the combined fit with no finite rating, in the data and per replicate
    (:mod:`jurist.ratings.separation`).
    """

    ratings: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    bootstrap_mean: FloatArray
    bootstrap_std: FloatArray
    human_ratings: FloatArray
    is_anchor: BoolArray
    n_human_battles: IntArray
    n_judged_battles: IntArray
    mae_vs_human: float
    separation: Separation


def anchor_models(
    human_a: npt.ArrayLike, human_b: npt.ArrayLike, n_models: int, min_human_battles: int
) -> BoolArray:
    """Models with at least ``min_human_battles`` human battles (and at least one: a model the humans
    never saw, such as the evaluated one, is never an anchor, whatever the threshold)."""
    counts = _battle_counts(human_a, human_b, n_models)
    return counts >= max(min_human_battles, 1)


def anchor_battles(
    human_a: npt.ArrayLike, human_b: npt.ArrayLike, n_models: int, min_human_battles: int
) -> BoolArray:
    """Which human battles anchor the scale: both sides have ``min_human_battles`` battles in all.

    Applied once, to the whole arena (JudgeArena's rule). The battles kept are then the anchors for good:
    a model that loses battles to the filter may fall below the threshold within them, but filtering again
    would change the set, so a re-fit from a saved battles file keeps every human battle it holds.
    """
    ia = np.asarray(human_a, dtype=np.int64).ravel()
    ib = np.asarray(human_b, dtype=np.int64).ravel()
    well_voted = anchor_models(ia, ib, n_models, min_human_battles)
    keep: BoolArray = well_voted[ia] & well_voted[ib]
    return keep


def _battle_counts(a: npt.ArrayLike, b: npt.ArrayLike, n_models: int) -> IntArray:
    ia = np.asarray(a, dtype=np.int64).ravel()
    ib = np.asarray(b, dtype=np.int64).ravel()
    return (np.bincount(ia, minlength=n_models) + np.bincount(ib, minlength=n_models)).astype(np.int64)


def place_models(
    human_a: npt.ArrayLike,
    human_b: npt.ArrayLike,
    human_outcome: npt.ArrayLike,
    judged_a: npt.ArrayLike,
    judged_b: npt.ArrayLike,
    judged_outcome: npt.ArrayLike,
    *,
    n_models: int,
    min_human_battles: int = 500,
    judged_weights: npt.ArrayLike | None = None,
    anchor: int | None = None,
    anchor_rating: float = 1000.0,
    n_bootstrap: int = 100,
    ci_level: float = 0.95,
    seed: int = 0,
    scale: float = 400.0,
    base: float = 10.0,
) -> Placement:
    """Fit human anchors plus judged battles together and bootstrap the result.

    Outcomes are 1 (a wins), 0 (b wins), 0.5 (tie) or a soft preference in [0, 1]. Human battles touching a
    model below ``min_human_battles`` are dropped, as in JudgeArena; every judged battle is kept.
    """
    ha, hb, hy = (np.asarray(x).ravel() for x in (human_a, human_b, human_outcome))
    ja, jb, jy = (np.asarray(x).ravel() for x in (judged_a, judged_b, judged_outcome))
    is_anchor = anchor_models(ha, hb, n_models, min_human_battles)
    if is_anchor.sum() < 2:
        raise ValueError(
            f"fewer than two models have {min_human_battles} human battles; nothing to anchor on"
        )
    keep = is_anchor[ha.astype(np.int64)] & is_anchor[hb.astype(np.int64)]
    ha, hb, hy = ha[keep], hb[keep], hy[keep]
    jw = np.ones(ja.size) if judged_weights is None else np.asarray(judged_weights, dtype=np.float64).ravel()
    human_fit = _human_only(ha, hb, hy, is_anchor, scale, base)
    combined = bradley_terry(
        np.concatenate([ha, ja]),
        np.concatenate([hb, jb]),
        np.concatenate([hy, jy]),
        weights=np.concatenate([np.ones(ha.size), jw]),
        n_models=n_models,
        anchor=int(np.flatnonzero(is_anchor)[0]),
        anchor_rating=0.0,
        scale=scale,
        base=base,
        n_bootstrap=n_bootstrap,
        ci_level=ci_level,
        seed=seed,
    )
    ratings = _align(combined.ratings[None, :], is_anchor, anchor, anchor_rating)[0]
    # The human scale is compared on the same gauge: equal means over the anchor models.
    human = human_fit + (ratings[is_anchor].mean() - human_fit[is_anchor].mean())
    boot = _align(combined.bootstrap, is_anchor, anchor, anchor_rating)
    low_q, high_q = ci_tails(ci_level)
    ci_low, ci_high, boot_mean, boot_std = ratings.copy(), ratings.copy(), ratings.copy(), np.zeros(n_models)
    if boot.shape[0]:
        ci_low, ci_high = np.quantile(boot, [low_q, high_q], axis=0)
        boot_mean = boot.mean(axis=0)
    if boot.shape[0] > 1:
        boot_std = boot.std(axis=0, ddof=1)
    return Placement(
        ratings=ratings,
        ci_low=ci_low,
        ci_high=ci_high,
        bootstrap_mean=boot_mean,
        bootstrap_std=boot_std,
        human_ratings=np.where(is_anchor, human, np.nan),
        is_anchor=is_anchor,
        n_human_battles=_battle_counts(ha, hb, n_models),
        n_judged_battles=_battle_counts(ja, jb, n_models),
        mae_vs_human=float(np.abs(ratings[is_anchor] - human[is_anchor]).mean()),
        separation=combined.separation,
    )


def _human_only(
    a: npt.NDArray[np.generic],
    b: npt.NDArray[np.generic],
    y: npt.NDArray[np.generic],
    is_anchor: BoolArray,
    scale: float,
    base: float,
) -> FloatArray:
    """BT on the anchor battles alone, returned for all indices (non-anchors at 0, masked later)."""
    idx = np.flatnonzero(is_anchor)
    local = np.full(is_anchor.size, -1, dtype=np.int64)
    local[idx] = np.arange(idx.size)
    fit = bradley_terry(
        local[a.astype(np.int64)],
        local[b.astype(np.int64)],
        y,
        n_models=idx.size,
        anchor=0,
        anchor_rating=0.0,
        scale=scale,
        base=base,
        n_bootstrap=0,
    )
    out = np.zeros(is_anchor.size)
    out[idx] = fit.ratings
    return out


def _align(ratings: FloatArray, is_anchor: BoolArray, anchor: int | None, anchor_rating: float) -> FloatArray:
    """Shift each row so the anchors average ``anchor_rating`` (or ``anchor`` sits at it)."""
    if ratings.shape[0] == 0:
        return ratings
    if anchor is not None:
        pinned: FloatArray = ratings - ratings[:, anchor : anchor + 1] + anchor_rating
        return pinned
    centred: FloatArray = ratings - ratings[:, is_anchor].mean(axis=1, keepdims=True) + anchor_rating
    return centred


class TemperatureFit(NamedTuple):
    """The judge temperature T of ``P(a beats b) = sigmoid(T * score_diff)`` fitted to human votes."""

    temperature: float
    n_pairs: int
    neg_log_likelihood: float


MIN_CALIBRATION_PAIRS = 10
"""Decisive human battles a temperature fit needs (JudgeArena's floor)."""


def soft_preference(score_diff: npt.ArrayLike, temperature: float) -> FloatArray:
    """P(side a wins) = sigmoid(T * (score_a - score_b)): a judge's graded verdict as a soft outcome."""
    from scipy.special import expit

    out: FloatArray = expit(temperature * np.asarray(score_diff, dtype=np.float64))
    return out


def calibrate_temperature(
    score_diff: npt.ArrayLike, human_outcome: npt.ArrayLike, *, bound: float = 10.0
) -> TemperatureFit:
    """The T that makes the judge's graded verdicts best predict the human votes on the same battles.

    ``score_diff`` is the judge's score of side a minus that of side b, ``human_outcome`` 1 (a won), 0 (b
    won) or 0.5 (a tie, left out: it says nothing about which way the scale tips). T is the bounded
    maximum-likelihood estimate on [-bound, bound]; a negative T says the judge prefers what humans do not.
    """
    from scipy.optimize import minimize_scalar

    diff = np.asarray(score_diff, dtype=np.float64).ravel()
    y = np.asarray(human_outcome, dtype=np.float64).ravel()
    if diff.shape != y.shape:
        raise ValueError("score_diff and human_outcome must have the same length")
    decisive = (y == 0.0) | (y == 1.0)
    diff, y = diff[decisive], y[decisive]
    if diff.size < MIN_CALIBRATION_PAIRS:
        raise ValueError(
            f"temperature calibration needs at least {MIN_CALIBRATION_PAIRS} decisive human battles, "
            f"got {diff.size}"
        )
    sign = 2.0 * y - 1.0  # +1 when a won: the loss is softplus(-sign * T * diff)

    def loss(t: float) -> float:
        return float(np.logaddexp(0.0, -sign * t * diff).sum())

    found = minimize_scalar(loss, bounds=(-bound, bound), method="bounded", options={"xatol": 1e-8})
    return TemperatureFit(float(found.x), int(diff.size), float(found.fun))


def rank_by_rating(ratings: npt.ArrayLike) -> IntArray:
    """1 for the highest rating, 2 for the next...; equal ratings share the better rank."""
    values = np.asarray(ratings, dtype=np.float64).ravel()
    better = (values[None, :] > values[:, None]).sum(axis=1)
    ranks: IntArray = (1 + better).astype(np.int64)
    return ranks


def rank_by_ci(ci_low: npt.ArrayLike, ci_high: npt.ArrayLike) -> IntArray:
    """Chatbot Arena's rank: 1 + the number of models whose lower bound is above this one's upper bound
    (models whose intervals overlap share a rank, so a rank is never claimed more precisely than the CI)."""
    low = np.asarray(ci_low, dtype=np.float64).ravel()
    high = np.asarray(ci_high, dtype=np.float64).ravel()
    ranks: IntArray = (1 + (low[None, :] > high[:, None]).sum(axis=1)).astype(np.int64)
    return ranks
