"""Bradley-Terry fit: agreement with choix, Elo scale, ties, weights, bootstrap behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jurist.ratings.bt import (
    aggregate_battles,
    bootstrap_counts,
    bradley_terry,
    bt_mle,
    elo_win_probability,
    win_rate_vs_anchor,
)

ELO = 400.0 / math.log(10.0)


def _battles(
    n_models: int, n_battles: int, seed: int, tie_rate: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 150.0, n_models)
    a = rng.integers(0, n_models, n_battles)
    b = rng.integers(0, n_models - 1, n_battles)
    b = np.where(b >= a, b + 1, b)
    p = elo_win_probability(true[a], true[b])
    y = (rng.random(n_battles) < p).astype(float)
    y[rng.random(n_battles) < tie_rate] = 0.5
    return a, b, y, true


def _choix_elo(n_models: int, pairs: list[tuple[int, int]], anchor: int) -> np.ndarray:
    choix = pytest.importorskip("choix")
    strengths = choix.ilsr_pairwise(n_models, pairs, alpha=0.0, tol=1e-12, max_iter=10_000)
    return 1000.0 + ELO * (strengths - strengths[anchor])  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_choix_without_ties(seed: int) -> None:
    a, b, y, _ = _battles(12, 6000, seed)
    pairs = [(int(x), int(z)) if win == 1.0 else (int(z), int(x)) for x, z, win in zip(a, b, y, strict=True)]
    expected = _choix_elo(12, pairs, anchor=3)
    result = bradley_terry(a, b, y, anchor=3, n_bootstrap=0)
    assert result.converged
    np.testing.assert_allclose(result.ratings, expected, atol=1e-4)
    assert result.ratings[3] == 1000.0


def test_ties_count_as_half_a_win_each() -> None:
    a, b, y, _ = _battles(8, 3000, seed=5, tie_rate=0.2)
    # Doubling every battle turns a tie into one win each way: the same likelihood up to a factor of 2.
    pairs: list[tuple[int, int]] = []
    for x, z, win in zip(a, b, y, strict=True):
        if win == 0.5:
            pairs += [(int(x), int(z)), (int(z), int(x))]
        else:
            pairs += [(int(x), int(z)) if win == 1.0 else (int(z), int(x))] * 2
    expected = _choix_elo(8, pairs, anchor=0)
    np.testing.assert_allclose(bradley_terry(a, b, y, n_bootstrap=0).ratings, expected, atol=1e-4)


def test_elo_scale_and_anchor_rating() -> None:
    # Model 1 wins 3 of every 4 games against model 0: xi_1 - xi_0 = ln 3, i.e. 400 * log10(3) Elo.
    a = np.array([1, 1, 1, 0] * 25)
    b = np.array([0, 0, 0, 1] * 25)
    y = np.ones(100)
    result = bradley_terry(a, b, y, anchor=0, anchor_rating=1200.0, n_bootstrap=0)
    assert result.ratings[0] == 1200.0
    assert result.ratings[1] - 1200.0 == pytest.approx(400.0 * math.log10(3.0), abs=1e-8)
    assert list(result.n_battles) == [100, 100]
    assert win_rate_vs_anchor(result, anchor=0).score[1] == pytest.approx(75.0, abs=1e-8)


def test_star_design_equals_mean_score() -> None:
    # With every battle against one baseline, BT's win probability is the plain weighted mean score.
    rng = np.random.default_rng(3)
    models = rng.integers(1, 6, 2000)
    scores = rng.choice([0.0, 0.5, 1.0], size=2000, p=[0.3, 0.2, 0.5])
    result = bradley_terry(models, np.zeros(2000, dtype=int), scores, n_bootstrap=0)
    win = win_rate_vs_anchor(result, anchor=0).score
    for m in range(1, 6):
        assert win[m] == pytest.approx(100.0 * scores[models == m].mean(), abs=1e-8)
    assert win[0] == pytest.approx(50.0)


def test_weights_equal_duplicated_battles() -> None:
    a, b, y, _ = _battles(6, 800, seed=9, tie_rate=0.1)
    w = np.where(np.arange(800) % 3 == 0, 3.0, 1.0)
    repeat = w.astype(int)
    weighted = bradley_terry(a, b, y, weights=w, n_bootstrap=0).ratings
    duplicated = bradley_terry(
        np.repeat(a, repeat), np.repeat(b, repeat), np.repeat(y, repeat), n_bootstrap=0
    )
    np.testing.assert_allclose(weighted, duplicated.ratings, atol=1e-8)


def test_aggregation_is_lossless() -> None:
    a, b, y, _ = _battles(5, 1000, seed=4, tie_rate=0.15)
    cells = aggregate_battles(a, b, y)
    assert cells.counts.sum() == 1000
    assert np.all(cells.lo < cells.hi)
    assert len(cells.counts) <= 10 * 3  # 10 unordered pairs x 3 outcomes
    # Cell statistics reproduce per-pair win counts of the raw battles.
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    score_lo = np.where(a < b, y, 1.0 - y)
    for pair_lo, pair_hi in [(0, 1), (2, 4)]:
        raw = score_lo[(lo == pair_lo) & (hi == pair_hi)].sum()
        sel = (cells.lo == pair_lo) & (cells.hi == pair_hi)
        assert (cells.counts[sel] * cells.score_lo[sel]).sum() == pytest.approx(raw)
    np.testing.assert_allclose(bt_mle(cells), bt_mle(aggregate_battles(b, a, 1.0 - y)), atol=1e-9)


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    a, b, y, _ = _battles(10, 5000, seed=11, tie_rate=0.1)
    first = bradley_terry(a, b, y, n_bootstrap=60, seed=7)
    again = bradley_terry(a, b, y, n_bootstrap=60, seed=7)
    other = bradley_terry(a, b, y, n_bootstrap=60, seed=8)
    np.testing.assert_array_equal(first.bootstrap, again.bootstrap)
    assert not np.array_equal(first.bootstrap, other.bootstrap)
    assert first.bootstrap.shape == (60, 10)
    assert first.ci_low[0] == first.ci_high[0] == 1000.0  # the anchor is pinned in every replicate
    assert np.all(first.ci_low[1:] < first.ratings[1:]) and np.all(first.ratings[1:] < first.ci_high[1:])
    narrow = bradley_terry(a, b, y, n_bootstrap=60, seed=7, ci_level=0.90)
    assert np.all(narrow.ci_high - narrow.ci_low <= first.ci_high - first.ci_low + 1e-9)


def test_multinomial_bootstrap_matches_battle_resampling() -> None:
    """Cell multinomial draws have the law of resampled battles: compare replicate spreads."""
    a, b, y, _ = _battles(6, 1500, seed=21, tie_rate=0.1)
    ours = bradley_terry(a, b, y, n_bootstrap=400, seed=1).bootstrap
    rng = np.random.default_rng(2)
    naive = []
    for _ in range(400):
        idx = rng.integers(0, 1500, 1500)
        naive.append(bradley_terry(a[idx], b[idx], y[idx], n_models=6, n_bootstrap=0).ratings)
    ratio = ours.std(axis=0)[1:] / np.array(naive).std(axis=0)[1:]
    assert np.all((ratio > 0.8) & (ratio < 1.25))


def test_cluster_bootstrap_counts() -> None:
    a = np.array([0, 0, 1, 1, 2, 2])
    b = np.array([1, 2, 2, 0, 0, 1])
    y = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 1.0])
    cells = aggregate_battles(a, b, y)
    counts = bootstrap_counts(cells, 50, seed=0, clusters=np.array([7, 7, 8, 8, 9, 9]))
    assert counts.shape == (50, len(cells.counts))
    assert np.all(counts.sum(axis=1) == 6)  # three clusters of two battles are drawn each time
    result = bradley_terry(a, b, y, n_bootstrap=30, clusters=[0, 0, 1, 1, 2, 2], seed=3)
    assert np.all(np.isfinite(result.ratings))


def test_disconnected_models_are_rejected() -> None:
    with pytest.raises(ValueError, match="disconnected"):
        bradley_terry([0, 2], [1, 3], [1.0, 0.0], n_bootstrap=0)
    ridged = bradley_terry([0, 2, 1, 3], [1, 3, 0, 2], [1.0, 0.0, 0.0, 1.0], n_bootstrap=0, ridge=1.0)
    assert np.all(np.isfinite(ridged.ratings))


def test_unbeaten_model_does_not_converge() -> None:
    result = bradley_terry([0, 0, 1, 2], [1, 2, 2, 1], [1.0, 1.0, 1.0, 0.0], n_bootstrap=0, max_iter=30)
    assert not result.converged
    assert result.ratings[0] > result.ratings[1] + 500


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model_a": [0, 1], "model_b": [0, 0], "outcome": [1.0, 0.0]}, "itself"),
        ({"model_a": [0, 1], "model_b": [1, 0], "outcome": [1.5, 0.0]}, r"\[0, 1\]"),
        ({"model_a": [0], "model_b": [1], "outcome": [1.0, 0.0]}, "same length"),
    ],
)
def test_bad_input(kwargs: dict[str, list[float]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bradley_terry(**kwargs, n_bootstrap=0)  # type: ignore[arg-type]


def test_ci_level_validation() -> None:
    with pytest.raises(ValueError, match="ci_level"):
        bradley_terry([0], [1], [1.0], ci_level=95)


# -- separation: ratings with no finite estimate (issue 27) --------------------------------------------------


def _star(wins_of: dict[int, tuple[int, int, int]]) -> tuple[list[int], list[int], list[float]]:
    """Battles of models 1.. against anchor 0: (wins, ties, losses) of each."""
    a: list[int] = []
    y: list[float] = []
    for model, (wins, ties, losses) in wins_of.items():
        a += [model] * (wins + ties + losses)
        y += [1.0] * wins + [0.5] * ties + [0.0] * losses
    return a, [0] * len(a), y


def test_a_model_that_won_or_lost_every_game_has_no_finite_rating_and_is_flagged() -> None:
    from jurist.ratings.separation import FINITE, RUNS_DOWN, RUNS_UP

    a, b, y = _star({1: (20, 0, 0), 2: (0, 0, 20), 3: (10, 0, 10), 4: (19, 1, 0)})
    result = bradley_terry(a, b, y, anchor=0, n_bootstrap=50, seed=1)
    # The solver even reports convergence (its steps stop lowering the loss measurably, thousands of
    # Elo out): only the structural check tells an estimate from where the iteration stopped.
    assert list(result.separation.full) == [FINITE, RUNS_UP, RUNS_DOWN, FINITE, FINITE]  # a tie bounds 4
    assert result.ratings[1] - 1000 > 2000 and 1000 - result.ratings[2] > 2000
    unreliable = result.separation.interval_unreliable(0.95)
    assert list(unreliable[:4]) == [False, True, True, False]
    assert result.separation.boot_up[1] == 50 and result.separation.boot_down[2] == 50
    assert unreliable[4]  # 19 wins and a tie: the tie is resampled away in about a third of replicates


def test_a_near_separated_model_has_an_untrustworthy_interval_from_runaway_replicates() -> None:
    """29 wins in 30: the MLE exists, but about a third of the replicates resample away the one loss,
    where the rating runs off, so the upper end of the 90% interval is taken from those replicates."""
    a, b, y = _star({1: (29, 0, 1), 2: (15, 0, 15)})
    result = bradley_terry(a, b, y, anchor=0, n_bootstrap=200, ci_level=0.9, seed=0)
    sep = result.separation
    assert sep.full[1] == 0 and 0.2 < sep.boot_up[1] / 200 < 0.5 and sep.boot_down[1] == 0
    assert sep.interval_unreliable(0.9)[1] and not sep.interval_unreliable(0.9)[2]
    assert result.ci_high[1] - result.ratings[1] > 1000  # the "+5574" of the issue, in kind
    # 6 runaway replicates of 200 stay beyond the 95% interval's top index: that end is sound
    few = sep._replace(boot_up=np.array([0, 5, 0]))
    assert not few.interval_unreliable(0.9)[1]
    assert few._replace(boot_up=np.array([0, 10, 0])).interval_unreliable(0.9)[1]


def test_separation_follows_wins_through_other_models_and_a_ridge_removes_it() -> None:
    # 1 beat 0 and lost to 2, 2 never lost: 1 is linked both ways (through 2? no: 0 never beat 2)
    a = [1, 1, 2, 2]
    b = [0, 0, 1, 0]
    y = [1.0, 0.0, 1.0, 1.0]
    result = bradley_terry(a, b, y, anchor=0, n_bootstrap=0)
    assert list(result.separation.full) == [0, 0, 1]  # 2 won every game (against 1 and 0)
    ridged = bradley_terry(a, b, y, anchor=0, n_bootstrap=10, ridge=0.1)
    assert not ridged.separation.interval_unreliable(0.95).any()
