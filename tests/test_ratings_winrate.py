"""Weighted win rate against one baseline (Arena-Hard's default score)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jurist.ratings.winrate import win_rate_from_entries


def test_score_is_the_mean_of_all_entries() -> None:
    # Question 0: a strong win (three 1s); question 1: a tie; question 2: a weak loss.
    result = win_rate_from_entries([3.0, 0.5, 0.0], [3, 1, 1], n_bootstrap=0)
    assert result.score == pytest.approx(100.0 * 3.5 / 5.0)
    assert result.ci_low == result.ci_high == result.score
    assert result.n == 3


def test_empty_input_is_nan() -> None:
    result = win_rate_from_entries([], [])
    assert np.isnan(result.score) and result.n == 0


def test_question_bootstrap_is_seeded_and_matches_index_resampling() -> None:
    rng = np.random.default_rng(0)
    counts = rng.choice([2, 4], size=300)
    sums = np.array([rng.choice([0.0, 0.5, 1.0], size=c).sum() for c in counts])
    first = win_rate_from_entries(sums, counts, n_bootstrap=500, seed=3)
    again = win_rate_from_entries(sums, counts, n_bootstrap=500, seed=3)
    assert first == again
    assert first.ci_low < first.score < first.ci_high
    naive = []
    for _ in range(500):
        idx = rng.integers(0, 300, 300)
        naive.append(100.0 * sums[idx].sum() / counts[idx].sum())
    width = first.ci_high - first.ci_low
    naive_width = float(np.diff(np.quantile(naive, [0.05, 0.95]))[0])
    assert 0.8 < width / naive_width < 1.25


def test_entries_bootstrap_and_ci_level() -> None:
    entries = np.array([1.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.0, 0.0] * 25)
    sums = entries.reshape(-1, 4).sum(axis=1)
    counts = np.full(sums.size, 4)
    wide = win_rate_from_entries(
        sums, counts, resample="entries", entries=entries, n_bootstrap=300, ci_level=0.95
    )
    narrow = win_rate_from_entries(
        sums, counts, resample="entries", entries=entries, n_bootstrap=300, ci_level=0.5
    )
    assert wide.score == pytest.approx(100.0 * entries.mean())
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high
    with pytest.raises(ValueError, match="entries"):
        win_rate_from_entries(sums, counts, resample="entries")


@pytest.mark.parametrize("resample", ["questions", "entries"])
def test_bootstrap_drawn_in_blocks_equals_one_draw(monkeypatch: pytest.MonkeyPatch, resample: str) -> None:
    """Blocks of rounds keep memory flat at 50k questions; the rounds are the same, to the last bit."""
    import jurist.ratings._shared as _shared

    rng = np.random.default_rng(3)
    sums = rng.integers(0, 7, 501) * 0.5
    counts = np.full(501, 3.0)
    entries = rng.integers(0, 3, 1503) * 0.5
    kwargs: dict[str, Any] = {"n_bootstrap": 37, "seed": 5, "resample": resample, "entries": entries}
    whole = win_rate_from_entries(sums, counts, **kwargs)
    monkeypatch.setattr(_shared, "DRAWS_PER_BLOCK", 1600)  # 3 rounds of 501, 1 round of 1503, a block
    assert win_rate_from_entries(sums, counts, **kwargs) == whole
    draws = np.random.default_rng(5).multinomial(501, np.full(501, 1 / 501), size=37)
    boot = 100.0 * (draws @ sums) / (draws @ counts)
    if resample == "questions":
        assert (whole.ci_low, whole.ci_high) == tuple(np.quantile(boot, [0.05, 0.95]))
