"""The statistics of paired decisions and adaptive stopping, against oracles and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jurist.ratings.binomial import binomial_p_value
from jurist.ratings.confseq import confidence_sequence, difference_sequence, running_sequence
from jurist.ratings.paired import detectable, holm, mcnemar_exact, normal_p_value, paired_bootstrap


def test_holm_matches_the_step_down_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04 (m = 3): 0.03, max(0.03, 0.04) = 0.04, max(0.04, 0.04) = 0.04
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, float("nan")])[0] == 0.5 and math.isnan(holm([0.5, float("nan")])[1])


def test_mcnemar_is_the_exact_binomial_test_of_the_discordant_pairs() -> None:
    a = [True] * 10 + [False] * 12 + [True] * 30
    b = [False] * 10 + [True] * 12 + [True] * 30
    result = mcnemar_exact(a, b)
    assert (result.a_only, result.b_only) == (10, 12)
    assert result.p == pytest.approx(binomial_p_value(12, 22, 0.5))
    assert mcnemar_exact([True], [True]).p == 1.0


def test_the_paired_bootstrap_is_tighter_than_two_separate_intervals_and_centred_on_the_difference() -> None:
    rng = np.random.default_rng(0)
    ease = rng.random(400)  # shared question ease: pairing removes it
    a = (rng.random(400) < ease).astype(float)
    b = np.where(rng.random(400) < 0.1, 1.0, a)  # b passes 10% of a's failures on top of a's passes
    ones = np.ones(400)
    result = paired_bootstrap(a, ones, b, ones, n_bootstrap=2000, seed=1)
    assert result.estimate == pytest.approx(100 * (b.mean() - a.mean()))
    assert result.ci_low < result.estimate < result.ci_high and result.ci_low > 0
    unpaired_se = 100 * math.sqrt(a.var() / 400 + b.var() / 400)
    assert result.standard_error < 0.5 * unpaired_se
    assert result.mdd == pytest.approx(detectable(result.standard_error, 0.95))
    assert normal_p_value(0.0, 0.0) == 1.0 and normal_p_value(1.0, 0.0) == 0.0


def test_the_confidence_sequence_covers_under_continuous_monitoring() -> None:
    """Looked at after every value of 400, a 90% sequence must contain the mean at all looks at once in at
    least 90% of 300 streams (a fixed-n interval looked at this often would not)."""
    rng = np.random.default_rng(5)
    alpha, mean, misses = 0.10, 0.3, 0
    for _ in range(300):
        values = (rng.random(400) < mean).astype(float)
        intervals = running_sequence(values, alpha=alpha)
        misses += any(not (cs.low <= mean <= cs.high) for cs in intervals)
    assert misses <= alpha * 300


def test_without_replacement_the_sequence_closes_on_the_pool_mean() -> None:
    rng = np.random.default_rng(2)
    pool = rng.random(200)
    order = rng.permutation(200)
    intervals = running_sequence(pool[order], alpha=0.05, population=200)
    assert all(cs.low - 1e-12 <= pool.mean() <= cs.high + 1e-12 for cs in intervals)
    assert intervals[-1].high - intervals[-1].low == 0.0  # every question drawn: known exactly
    widths = [cs.high - cs.low for cs in intervals]
    assert all(later <= earlier + 1e-12 for earlier, later in zip(widths, widths[1:], strict=False))
    iid = confidence_sequence(pool[order][:100], alpha=0.05)
    wor = confidence_sequence(pool[order][:100], alpha=0.05, population=200)
    assert wor.high - wor.low < iid.high - iid.low


def test_a_paired_difference_sequence_is_on_the_difference_scale() -> None:
    a = np.zeros(300)
    b = np.ones(300)
    cs = difference_sequence(a, b, alpha=0.05)
    assert cs.estimate == 1.0 and cs.low > 0.9 and cs.high == 1.0
    with pytest.raises(ValueError):
        confidence_sequence([1.5])
