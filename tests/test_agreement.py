"""Judge agreement statistics, against sklearn/scipy where available and hand-computed values otherwise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jurist.ratings.agreement import (
    FIVE_LABELS,
    agreement_rate,
    align_leaderboards,
    cohen_kappa,
    collapse_five_to_three,
    confusion_matrix,
    ensemble_mean,
    kappa_five,
    kappa_three,
    rank_correlation,
)


def test_kappa_hand_computed() -> None:
    # 2x2 table [[20, 5], [10, 15]]: p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4.
    a = ["A"] * 25 + ["B"] * 25
    b = ["A"] * 20 + ["B"] * 5 + ["A"] * 10 + ["B"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert agreement_rate(a, b) == pytest.approx(0.7)
    matrix, labels = confusion_matrix(a, b)
    assert labels == ["A", "B"] and matrix.tolist() == [[20, 5], [10, 15]]


def test_kappa_matches_sklearn_on_five_and_three_scales() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = rng.choice(FIVE_LABELS, size=300, p=[0.1, 0.3, 0.2, 0.3, 0.1])
        noise = rng.choice(FIVE_LABELS, size=300)
        b = np.where(rng.random(300) < 0.6, a, noise)
        assert kappa_five(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b))
        for w in ("linear", "quadratic"):
            expected = metrics.cohen_kappa_score(a, b, labels=list(FIVE_LABELS), weights=w)
            assert kappa_five(a, b, weights=w) == pytest.approx(expected)
        a3, b3 = collapse_five_to_three(a), collapse_five_to_three(b)
        assert kappa_three(a, b) == pytest.approx(metrics.cohen_kappa_score(a3.astype(str), b3.astype(str)))


def test_collapse_and_missing_labels_are_dropped_pairwise() -> None:
    assert collapse_five_to_three(["A>>B", "A>B", "A=B", "B>A", "B>>A", "tie", None]).tolist() == [
        "A",
        "A",
        "tie",
        "B",
        "B",
        "tie",
        None,
    ]
    with pytest.raises(ValueError, match="unknown verdict"):
        collapse_five_to_three(["A>>>B"])
    # Items where either judge failed do not count: the remaining three agree perfectly.
    a = ["A>B", None, "B>A", "A=B", "A>B"]
    b = ["A>B", "B>A", "B>A", "A=B", None]
    assert agreement_rate(a, b) == 1.0
    assert kappa_three(a, b) == 1.0
    assert math.isnan(agreement_rate([None], ["A"])) and math.isnan(cohen_kappa([None], ["A"]))


def test_kappa_degenerate_cases() -> None:
    # One shared label everywhere: chance agreement is 1, observed agreement is 1 -> defined as 1.0.
    assert cohen_kappa(["A"] * 10, ["A"] * 10) == 1.0
    assert kappa_five(["A>B"] * 4, ["A>B"] * 4, weights="quadratic") == 1.0
    # Each judge constant but different: p_o = 0, p_e = 0 -> 0.
    assert cohen_kappa(["A"] * 10, ["B"] * 10) == 0.0
    # Perfect disagreement on a balanced binary split -> -1.
    assert cohen_kappa(["A", "B"] * 5, ["B", "A"] * 5) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa(["A"], ["A", "B"])
    with pytest.raises(ValueError, match="not one of"):
        kappa_five(["A>B"], ["A"])
    with pytest.raises(ValueError, match="explicit ordered labels"):
        cohen_kappa(["A"], ["B"], weights="linear")


def test_rank_correlation_against_scipy_and_edge_cases() -> None:
    stats = pytest.importorskip("scipy.stats")
    a = [65.7, 64.3, 63.4, 62.3, 59.4, 50.0]
    b = [70.0, 60.0, 61.0, 55.0, 59.0, 40.0]
    result = rank_correlation(a, b)
    assert result.n == 6
    assert result.spearman == pytest.approx(stats.spearmanr(a, b)[0])
    assert result.kendall == pytest.approx(stats.kendalltau(a, b)[0])
    # Hand check: two adjacent swaps among six -> sum d^2 = 4, rho = 1 - 6*4/(6*35); tau = (13 - 2) / 15.
    assert result.spearman == pytest.approx(1 - 24 / 210) and result.kendall == pytest.approx(11 / 15)
    assert rank_correlation(a, a[::-1]).spearman == pytest.approx(-1.0)
    assert rank_correlation([1.0, np.nan, 3.0], [2.0, 5.0, 4.0]).n == 2
    assert math.isnan(rank_correlation([1.0], [2.0]).spearman)
    assert math.isnan(rank_correlation([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]).kendall)
    names, xa, xb = align_leaderboards({"m1": 1.0, "m2": 2.0, "x": 0.0}, {"m2": 5.0, "m1": 4.0, "y": 1.0})
    assert names == ["m1", "m2"] and xa.tolist() == [1.0, 2.0] and xb.tolist() == [4.0, 5.0]


def test_ensemble_mean() -> None:
    scores = np.array([[1.0, 2.0, np.nan, np.nan], [3.0, 4.0, 5.0, np.nan]])
    out = ensemble_mean(scores)
    assert out[:3].tolist() == [2.0, 3.0, 5.0] and math.isnan(out[3])
    weighted = ensemble_mean(scores, weights=[3.0, 1.0])
    assert weighted[:3].tolist() == pytest.approx([1.5, 2.5, 5.0])
    with pytest.raises(ValueError, match="one per judge"):
        ensemble_mean(scores, weights=[1.0])
