"""Placement of judged models on a human-voted arena scale."""

from __future__ import annotations

import numpy as np
import pytest

from jurist.ratings.bt import bradley_terry, elo_win_probability
from jurist.ratings.placement import (
    anchor_battles,
    anchor_models,
    calibrate_temperature,
    place_models,
    rank_by_ci,
    rank_by_rating,
    soft_preference,
)


def _arena(seed: int = 0) -> tuple[np.ndarray, ...]:
    """10 well-voted models, one with 60 human votes (index 10), one new model (11) seen only by the judge."""
    rng = np.random.default_rng(seed)
    true = rng.normal(1000.0, 120.0, 12)
    a = rng.integers(0, 10, 20_000)
    b = rng.integers(0, 9, 20_000)
    b = np.where(b >= a, b + 1, b)
    a = np.concatenate([a, np.full(60, 10)])
    b = np.concatenate([b, rng.integers(0, 10, 60)])
    y = (rng.random(a.size) < elo_win_probability(true[a], true[b])).astype(float)
    ja = np.full(3000, 11)
    jb = rng.integers(0, 11, 3000)
    jy = elo_win_probability(true[ja], true[jb])  # soft judge preferences
    return a, b, y, ja, jb, jy, true


def test_new_model_lands_near_its_true_rating() -> None:
    a, b, y, ja, jb, jy, true = _arena()
    result = place_models(a, b, y, ja, jb, jy, n_models=12, n_bootstrap=60, seed=1)
    assert list(result.is_anchor) == [True] * 10 + [False, False]
    shift = result.ratings[:10].mean() - true[:10].mean()
    assert result.ratings[:10].mean() == pytest.approx(1000.0)
    assert abs(result.ratings[11] - (true[11] + shift)) < 15.0
    assert result.ci_low[11] < result.ratings[11] < result.ci_high[11]
    assert result.bootstrap_std[11] > 0.0
    assert np.isnan(result.human_ratings[10]) and np.isnan(result.human_ratings[11])
    # Human battles of the under-voted model are dropped, the judge's battles are all kept.
    assert result.n_human_battles[10] == 0 and result.n_judged_battles[11] == 3000
    # The judged battles barely move the human scale.
    assert result.mae_vs_human < 2.0


def test_human_scale_is_the_anchor_only_fit() -> None:
    a, b, y, ja, jb, jy, _ = _arena(seed=2)
    result = place_models(a, b, y, ja, jb, jy, n_models=12, n_bootstrap=0)
    keep = (a < 10) & (b < 10)
    alone = bradley_terry(a[keep], b[keep], y[keep], n_models=10, n_bootstrap=0).ratings
    human = result.human_ratings[:10]
    np.testing.assert_allclose(human - human.mean(), alone - alone.mean(), atol=1e-6)


def test_fixed_anchor_and_seeding() -> None:
    a, b, y, ja, jb, jy, _ = _arena(seed=3)
    one = place_models(
        a, b, y, ja, jb, jy, n_models=12, anchor=4, anchor_rating=1200.0, n_bootstrap=20, seed=9
    )
    two = place_models(
        a, b, y, ja, jb, jy, n_models=12, anchor=4, anchor_rating=1200.0, n_bootstrap=20, seed=9
    )
    assert one.ratings[4] == 1200.0 and one.ci_low[4] == one.ci_high[4] == 1200.0
    np.testing.assert_array_equal(one.ci_low, two.ci_low)


def test_needs_two_anchor_models() -> None:
    assert list(anchor_models([0, 0, 1], [1, 2, 2], 3, min_human_battles=2)) == [True, True, True]
    with pytest.raises(ValueError, match="anchor"):
        place_models([0], [1], [1.0], [2], [0], [1.0], n_models=3, min_human_battles=5)


def test_anchor_battles_filter_once_and_never_take_unvoted_models() -> None:
    a = np.array([0, 0, 0, 1, 1, 2, 3])
    b = np.array([1, 1, 2, 2, 3, 3, 0])
    # battles per model: 0 -> 4, 1 -> 4, 2 -> 3, 3 -> 3, 4 -> 0
    assert list(anchor_models(a, b, 5, min_human_battles=4)) == [True, True, False, False, False]
    assert list(anchor_battles(a, b, 5, min_human_battles=4)) == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    # A threshold of 0 still leaves out a model the humans never saw (the evaluated one).
    assert list(anchor_models(a, b, 5, min_human_battles=0)) == [True, True, True, True, False]


def test_temperature_calibration_recovers_the_judges_temperature() -> None:
    rng = np.random.default_rng(4)
    gap = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], size=4000)
    for true_t in (0.8, -0.5):
        human = (rng.random(gap.size) < soft_preference(gap, true_t)).astype(float)
        human[rng.random(gap.size) < 0.1] = 0.5  # ties say nothing and are left out
        fit = calibrate_temperature(gap, human)
        assert fit.n_pairs == int((human != 0.5).sum())
        assert abs(fit.temperature - true_t) < 0.08
        # The optimum: the log-likelihood is worse a little to either side.
        sign = 2.0 * human[human != 0.5] - 1.0
        d = gap[human != 0.5]
        for t in (fit.temperature - 0.01, fit.temperature + 0.01):
            assert np.logaddexp(0.0, -sign * t * d).sum() > fit.neg_log_likelihood
    with pytest.raises(ValueError, match="at least 10"):
        calibrate_temperature([1.0] * 9, [1.0] * 9)


def test_soft_preference_and_ranks() -> None:
    np.testing.assert_allclose(soft_preference([-2.0, 0.0, 2.0], 0.5), [0.2689414, 0.5, 0.7310586], atol=1e-7)
    assert list(rank_by_rating([1000.0, 1200.0, 1100.0, 1200.0])) == [4, 1, 3, 1]
    low, high = np.array([990.0, 1190.0, 1090.0]), np.array([1010.0, 1210.0, 1195.0])
    # 1100 +- overlaps 1200's interval, so it shares rank 1 by CI; 1000 is clearly below both.
    assert list(rank_by_ci(low, high)) == [3, 1, 1]


def test_placement_of_soft_judge_preferences_matches_a_direct_fit() -> None:
    """Soft outcomes (calibrated judge preferences) go into the same likelihood as hard human votes."""
    a, b, y, ja, jb, _, true = _arena(seed=5)
    soft = soft_preference(np.where(true[ja] > true[jb], 1.0, -1.0), 0.9)
    result = place_models(a, b, y, ja, jb, soft, n_models=12, n_bootstrap=0, min_human_battles=100)
    keep = (a < 10) & (b < 10)
    direct = bradley_terry(
        np.r_[a[keep], ja], np.r_[b[keep], jb], np.r_[y[keep], soft], n_models=12, n_bootstrap=0
    ).ratings
    mine = result.ratings
    np.testing.assert_allclose(mine - mine[:10].mean(), direct - direct[:10].mean(), atol=1e-6)
