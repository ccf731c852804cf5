"""The judge-sanity binomial test equals scipy's ``binomtest`` (the test imports scipy; jurist does not)."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from jurist.ratings import binomial_p_value


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("null", [0.5, 0.8, 0.3])
def test_equals_scipy_over_a_grid(alternative: str, null: float) -> None:
    for n in (1, 2, 3, 5, 10, 16, 47, 200, 2000):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            expected = binomtest(k, n, null, alternative=alternative).pvalue
            assert binomial_p_value(k, n, null, alternative) == pytest.approx(expected, rel=1e-9, abs=1e-300)  # type: ignore[arg-type]


def test_edges() -> None:
    assert binomial_p_value(0, 0, 0.5) == 1.0
    assert binomial_p_value(10, 10, 0.5) == pytest.approx(2 * 0.5**10)  # ten of ten for A: p = 0.002
    with pytest.raises(ValueError):
        binomial_p_value(11, 10, 0.5)
