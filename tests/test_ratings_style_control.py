"""Style control: exact optimum, each feature usable alone, star-design identity, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from jurist.ratings.style_control import style_controlled_win_rates, style_features, zscore

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _arena(n_models: int = 6, n_questions: int = 200, seed: int = 0, length_effect: float = 0.8) -> Arrays:
    """Exploded Arena-Hard-like rows against baseline 0; longer answers win more often."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 0.8, n_models)
    verbosity = rng.normal(0.0, 0.5, n_models)

    def answers(m: int) -> np.ndarray:
        length = np.round(rng.lognormal(6.0 + verbosity[m], 0.5, n_questions))
        counts = rng.poisson(np.outer(length, [1 / 300, 1 / 60, 1 / 120]))
        return np.column_stack([length, counts]).astype(float)

    style = [answers(m) for m in range(n_models)]
    model, outcome, m_style, b_style, question = [], [], [], [], []
    for m in range(1, n_models):
        gap = (style[m][:, 0] - style[0][:, 0]) / (style[m][:, 0] + style[0][:, 0])
        for _game in range(2):
            p = expit(strength[m] - strength[0] + length_effect * gap / 0.2)
            u = rng.random(n_questions)
            for q in range(n_questions):
                scores = (
                    [1.0] * 3
                    if u[q] < 0.3 * p[q]
                    else [1.0]
                    if u[q] < p[q]
                    else [0.5]
                    if u[q] < p[q] + 0.05
                    else [0.0]
                )
                for s in scores:
                    model.append(m)
                    outcome.append(s)
                    m_style.append(style[m][q])
                    b_style.append(style[0][q])
                    question.append(q)
    n = len(model)
    return (
        np.array(model),
        np.zeros(n, dtype=int),
        np.array(outcome),
        np.array(m_style),
        np.array(b_style),
        np.array(question),
    )


def _reference_fit(a: np.ndarray, y: np.ndarray, z: np.ndarray, n_models: int) -> np.ndarray:
    """Independent fit of the same likelihood on the exploded rows: dense design, BFGS, tiny tolerance."""
    x = np.zeros((len(y), n_models - 1 + z.shape[1]))
    x[np.arange(len(y)), a - 1] = 1.0  # the baseline (model 0) column is fixed at 0
    x[:, n_models - 1 :] = z

    def fun(beta: np.ndarray) -> tuple[float, np.ndarray]:
        eta = x @ beta
        return float(np.sum(np.logaddexp(0.0, eta) - y * eta)), x.T @ (expit(eta) - y)

    res = minimize(
        fun, np.zeros(x.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-9, "maxiter": 5000}
    )
    return np.asarray(res.x)


@pytest.mark.parametrize("features", [("length", "markdown"), ("length",), ("markdown",)])
def test_reaches_the_exact_optimum(features: tuple[str, ...]) -> None:
    a, b, y, ms, bs, _ = _arena()
    result = style_controlled_win_rates(a, b, y, ms, bs, features=features, n_bootstrap=0)
    z = zscore(style_features(ms, bs, features))
    beta = _reference_fit(a, y, z, 6)
    assert result.converged
    np.testing.assert_allclose(result.coefs[1:], beta[:5], atol=2e-5)
    np.testing.assert_allclose(result.feature_coefs, beta[5:], atol=2e-5)
    np.testing.assert_allclose(result.win_rate[1:], 100 * expit(beta[:5]), atol=1e-3)


def test_each_feature_group_alone() -> None:
    """Upstream crashes on ``-f length`` and mislabels models on ``-f markdown`` (issue #71)."""
    a, b, y, ms, bs, _ = _arena(seed=1)
    both = style_controlled_win_rates(a, b, y, ms, bs, n_bootstrap=10)
    length = style_controlled_win_rates(a, b, y, ms, bs, features=("length",), n_bootstrap=10)
    markdown = style_controlled_win_rates(a, b, y, ms, bs, features=("markdown",), n_bootstrap=10)
    assert both.feature_names == ("length", "header", "list", "bold")
    assert length.feature_names == ("length",) and length.feature_coefs.shape == (1,)
    assert markdown.feature_names == ("header", "list", "bold") and markdown.feature_coefs.shape == (3,)
    # Length drives the synthetic outcomes: its coefficient is clearly positive with or without markdown.
    assert length.feature_coefs[0] > 0.3 and both.feature_coefs[0] > 0.3
    for res in (both, length, markdown):
        assert res.win_rate[0] == pytest.approx(50.0)
        assert res.ci_low[0] == res.ci_high[0] == pytest.approx(50.0)
    # Markdown has no effect in this data, so markdown-only scores stay next to the plain win rates; a
    # coefficient shifted onto the neighbouring model (upstream's bug) would move them by ~30 points.
    plain = style_controlled_win_rates(a, b, y, ms, bs, features=(), n_bootstrap=0)
    assert np.abs(markdown.win_rate - plain.win_rate).max() < 3.0
    assert np.abs(np.diff(plain.win_rate[1:])).max() > 20.0


def test_no_features_is_the_plain_win_rate() -> None:
    a, b, y, ms, bs, _ = _arena(seed=2)
    result = style_controlled_win_rates(a, b, y, ms, bs, features=(), n_bootstrap=0)
    for m in range(1, 6):
        assert result.win_rate[m] == pytest.approx(100.0 * y[a == m].mean(), abs=1e-7)


def test_length_control_moves_verbose_models_down() -> None:
    a, b, y, ms, bs, _ = _arena(seed=3, length_effect=1.5)
    plain = style_controlled_win_rates(a, b, y, ms, bs, features=(), n_bootstrap=0)
    controlled = style_controlled_win_rates(a, b, y, ms, bs, features=("length",), n_bootstrap=0)
    mean_gap = np.array(
        [((ms[a == m, 0] - bs[a == m, 0]) / (ms[a == m, 0] + bs[a == m, 0])).mean() for m in range(1, 6)]
    )
    change = controlled.win_rate[1:] - plain.win_rate[1:]
    # Models that write longer than the baseline lose points, shorter ones gain: opposite signs.
    assert np.corrcoef(mean_gap, change)[0, 1] < -0.8


def test_weights_match_duplicated_rows_and_bootstrap_is_seeded() -> None:
    a, b, y, ms, bs, q = _arena(seed=4, n_questions=80)
    w = np.where(np.arange(len(y)) % 4 == 0, 2.0, 1.0)
    rep = w.astype(int)
    weighted = style_controlled_win_rates(a, b, y, ms, bs, weights=w, n_bootstrap=0)
    dup = style_controlled_win_rates(
        np.repeat(a, rep),
        np.repeat(b, rep),
        np.repeat(y, rep),
        np.repeat(ms, rep, axis=0),
        np.repeat(bs, rep, axis=0),
        n_bootstrap=0,
    )
    np.testing.assert_allclose(weighted.win_rate, dup.win_rate, atol=1e-7)
    one = style_controlled_win_rates(a, b, y, ms, bs, n_bootstrap=20, seed=5)
    two = style_controlled_win_rates(a, b, y, ms, bs, n_bootstrap=20, seed=5)
    np.testing.assert_array_equal(one.bootstrap, two.bootstrap)
    by_question = style_controlled_win_rates(a, b, y, ms, bs, n_bootstrap=20, seed=5, clusters=q)
    assert by_question.bootstrap.shape == (20, 6)
    assert np.all(one.ci_low <= one.median) and np.all(one.median <= one.ci_high)


def test_style_feature_formulas() -> None:
    model = np.array([[100.0, 2.0, 5.0, 1.0]])
    base = np.array([[300.0, 0.0, 10.0, 1.0]])
    f = style_features(model, base)[0]
    assert f[0] == pytest.approx(-200.0 / 400.0)
    d_m, d_b = 2.0 / 101.0, 0.0
    assert f[1] == pytest.approx((d_m - d_b) / (d_m + d_b + 1.0))
    d_m, d_b = 5.0 / 101.0, 10.0 / 301.0
    assert f[2] == pytest.approx((d_m - d_b) / (d_m + d_b + 1.0))
    assert style_features(np.zeros((1, 4)), np.zeros((1, 4)), ("length",))[0, 0] == 0.0
    with pytest.raises(ValueError, match="unknown"):
        style_features(model, base, ("emoji",))


def test_zscore_uses_unbiased_std_and_frequency_weights() -> None:
    x = np.array([[1.0], [2.0], [4.0]])
    np.testing.assert_allclose(zscore(x)[:, 0], (x[:, 0] - x.mean()) / x[:, 0].std(ddof=1))
    expanded = np.array([[1.0], [2.0], [2.0], [4.0]])
    np.testing.assert_allclose(
        zscore(x, np.array([1.0, 2.0, 1.0]))[[0, 1, 2], 0], zscore(expanded)[[0, 1, 3], 0]
    )
    assert np.all(zscore(np.ones((3, 1))) == 0.0)


def test_several_baselines_need_a_reference() -> None:
    a, _, y, ms, bs, _ = _arena(seed=6, n_questions=40)
    b = np.where(np.arange(len(y)) % 2 == 0, 0, 5)
    keep = a != b
    with pytest.raises(ValueError, match="reference"):
        style_controlled_win_rates(a[keep], b[keep], y[keep], ms[keep], bs[keep], n_bootstrap=0)
    res = style_controlled_win_rates(
        a[keep], b[keep], y[keep], ms[keep], bs[keep], reference=0, n_bootstrap=0
    )
    assert res.win_rate[0] == pytest.approx(50.0)


def test_style_control_flags_a_model_that_won_every_game_and_a_near_separated_interval() -> None:
    """Issue 27: the structural separation check on style control's model coefficients, on real fits."""
    rng = np.random.default_rng(5)
    a = np.repeat([1, 2, 3], 30)
    y = np.concatenate([np.ones(30), np.r_[np.ones(29), 0.0], (rng.random(30) < 0.5).astype(float)])
    style = np.column_stack([rng.integers(50, 500, 90), np.zeros((90, 3))]).astype(float)
    base = np.tile([200.0, 0, 0, 0], (90, 1))
    result = style_controlled_win_rates(a, np.zeros(90, dtype=int), y, style, base, features=("length",))
    assert list(result.separation.full) == [0, 1, 0, 0]
    unreliable = result.separation.interval_unreliable(0.90)
    assert list(unreliable) == [False, True, True, False]
    assert result.ci_high[2] > 99.9  # the upper end of 29-of-30 sits on runaway replicates
