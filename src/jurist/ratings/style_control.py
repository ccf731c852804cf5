"""Style-controlled win rates (Arena-Hard v2 definition), fitted to convergence by Newton's method.

Each battle row says how likely the model beat the baseline (0, 0.5, 1 or any soft label) and carries the
style metadata of both answers: ``[token_len, header_count, list_count, bold_count]``. The model is a
Bradley-Terry logistic regression on a one-hot design (+1 for the model column, -1 for the baseline column)
plus z-scored style-difference features:

* length: ``(m - b) / (m + b)`` on token lengths;
* markdown (headers, lists, bold): density ``d = count / (token_len + 1)``, then
  ``(d_m - d_b) / (d_m + d_b + 1)``.

There is no intercept and no regularisation; the reference model's coefficient is fixed at 0 (the design
has the all-ones gauge freedom otherwise). Scores are ``sigmoid(c_model - c_reference)`` in percent.

Upstream stops a torch L-BFGS after 50 iterations; here Newton with the exact (models + features)^2 Hessian
runs until the step is below ``tol``. Identical rows are merged (counts), and bootstrap replicates are
multinomial re-weightings of those rows solved with warm starts, which is the same distribution as
resampling the input rows. Any subset of the features works, including none (plain BT).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from jurist.ratings._shared import (
    MAX_HALVINGS,
    FloatArray,
    IntArray,
    bootstrap_counts,
    check_connected,
    check_outcomes,
    ci_tails,
    laplacian,
)
from jurist.ratings._threads import single_blas_thread
from jurist.ratings.separation import Separation, separation

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {"length": ("length",), "markdown": ("header", "list", "bold")}
_DISCONNECTED = (
    "models form {n} disconnected groups (or some model has no battles); "
    "their coefficients are not identifiable"
)


class StyleControlResult(NamedTuple):
    """Style-controlled win rates (percent) of every model against the reference model.

    ``win_rate`` comes from the fit on all rows, ``median`` is the bootstrap median (Arena-Hard's headline
    number), ``ci_low``/``ci_high`` the bootstrap quantiles. ``coefs`` are the model strengths (reference
    = 0); ``feature_coefs`` the style coefficients on the z-scored features named in ``feature_names``.
    ``separation`` says which models have no finite coefficient (one that won, or lost, every game
    outright), in the data and in how many replicates (:mod:`jurist.ratings.separation`).
    """

    win_rate: FloatArray
    median: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    coefs: FloatArray
    feature_names: tuple[str, ...]
    feature_coefs: FloatArray
    feature_coefs_median: FloatArray
    n_rows: IntArray
    bootstrap: FloatArray
    converged: bool
    separation: Separation


def feature_names_for(features: Sequence[str]) -> tuple[str, ...]:
    """Column names for the requested feature groups, in Arena-Hard's order (length first)."""
    unknown = set(features) - set(FEATURE_GROUPS)
    if unknown:
        raise ValueError(f"unknown style features {sorted(unknown)}; choose from {sorted(FEATURE_GROUPS)}")
    return tuple(
        name for group in ("length", "markdown") if group in features for name in FEATURE_GROUPS[group]
    )


def style_features(
    model_style: npt.ArrayLike,
    baseline_style: npt.ArrayLike,
    features: Sequence[str] = ("length", "markdown"),
) -> FloatArray:
    """Raw (not yet z-scored) style-difference features, one row per battle.

    ``model_style``/``baseline_style`` have columns ``[token_len, header_count, list_count, bold_count]``.
    """
    m = np.asarray(model_style, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(baseline_style, dtype=np.float64).reshape(-1, 4)
    if m.shape != b.shape:
        raise ValueError("model_style and baseline_style must have the same shape")
    names = feature_names_for(features)
    columns: list[FloatArray] = []
    if "length" in names:
        columns.append(_ratio(m[:, 0] - b[:, 0], m[:, 0] + b[:, 0]))
    if "header" in names:
        density_m = m[:, 1:4] / (m[:, 0:1] + 1.0)
        density_b = b[:, 1:4] / (b[:, 0:1] + 1.0)
        columns.extend(
            (density_m[:, k] - density_b[:, k]) / (density_m[:, k] + density_b[:, k] + 1.0) for k in range(3)
        )
    return np.column_stack(columns) if columns else np.empty((m.shape[0], 0))


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den with 0 where both answers are empty (upstream would produce NaN there)."""
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den != 0)
    return out


def zscore(x: FloatArray, weights: FloatArray | None = None) -> FloatArray:
    """Column-wise (x - mean) / std with the unbiased std, weights acting as frequencies.

    A constant column becomes all zeros (its coefficient is then reported as 0).
    """
    w = np.ones(x.shape[0]) if weights is None else weights
    total = w.sum()
    mean = (w[:, None] * x).sum(axis=0) / total
    var = (w[:, None] * (x - mean) ** 2).sum(axis=0) / max(total - 1.0, 1e-300)
    std = np.sqrt(var)
    safe = np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std, np.inf)
    return (x - mean) / safe  # type: ignore[no-any-return]


class _Rows(NamedTuple):
    """Unique design rows: model and baseline columns, soft label, weight, features and their count."""

    a: IntArray
    b: IntArray
    y: FloatArray
    w: FloatArray
    z: FloatArray
    counts: FloatArray
    row_of_input: IntArray


def _unique_rows(a: IntArray, b: IntArray, y: FloatArray, w: FloatArray, z: FloatArray) -> _Rows:
    table = np.column_stack([a.astype(np.float64), b.astype(np.float64), y, w, z])
    uniq, inverse, counts = np.unique(table, axis=0, return_inverse=True, return_counts=True)
    return _Rows(
        a=uniq[:, 0].astype(np.int64),
        b=uniq[:, 1].astype(np.int64),
        y=uniq[:, 2],
        w=uniq[:, 3],
        z=np.ascontiguousarray(uniq[:, 4:]),
        counts=counts.astype(np.float64),
        row_of_input=inverse.ravel().astype(np.int64),
    )


class _Problem(NamedTuple):
    """Everything the Newton solver needs besides the per-row weights."""

    rows: _Rows
    n_models: int
    reference: int
    free: IntArray


def _loss(theta: FloatArray, prob: _Problem, weight: FloatArray) -> float:
    eta = _linear_predictor(theta, prob)
    return float(np.dot(weight, np.logaddexp(0.0, eta) - prob.rows.y * eta))


def _linear_predictor(theta: FloatArray, prob: _Problem) -> FloatArray:
    m = prob.n_models
    c = theta[:m]
    eta: FloatArray = c[prob.rows.a] - c[prob.rows.b] + prob.rows.z @ theta[m:]
    return eta


def _grad_hess(theta: FloatArray, prob: _Problem, weight: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exact gradient and Hessian of the weighted soft-label log-loss in (c, gamma)."""
    rows, m = prob.rows, prob.n_models
    p = expit(_linear_predictor(theta, prob))
    r = weight * (p - rows.y)
    h = weight * p * (1.0 - p)
    grad_c = np.bincount(rows.a, r, minlength=m) - np.bincount(rows.b, r, minlength=m)
    grad = np.concatenate([grad_c, rows.z.T @ r])
    n_f = rows.z.shape[1]
    hess = np.empty((m + n_f, m + n_f))
    hess[:m, :m] = laplacian(h[None, :], rows.a, rows.b, m, by_part=True)[0]
    hz = h[:, None] * rows.z
    cross = np.zeros((m, n_f))
    for k in range(n_f):
        cross[:, k] = np.bincount(rows.a, hz[:, k], minlength=m) - np.bincount(rows.b, hz[:, k], minlength=m)
    hess[:m, m:] = cross
    hess[m:, :m] = cross.T
    hess[m:, m:] = rows.z.T @ hz
    return grad, hess


def _newton(
    prob: _Problem, weight: FloatArray, theta0: FloatArray, tol: float, max_iter: int
) -> tuple[FloatArray, bool]:
    """Damped Newton on the free parameters (all but the reference model's coefficient)."""
    theta = theta0.copy()
    loss = _loss(theta, prob, weight)
    free = prob.free
    for _ in range(max_iter):
        grad, hess = _grad_hess(theta, prob, weight)
        sub = hess[np.ix_(free, free)]
        try:
            step = np.linalg.solve(sub, grad[free])
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(sub, grad[free], rcond=None)[0]
        t = 1.0
        for _ in range(MAX_HALVINGS):
            trial = theta.copy()
            trial[free] -= t * step
            trial_loss = _loss(trial, prob, weight)
            if trial_loss <= loss + 1e-12 * abs(loss):
                break
            t *= 0.5
        else:
            return theta, False
        theta, loss = trial, trial_loss
        if np.abs(step).max() < tol:
            return theta, True
    return theta, False


def style_controlled_win_rates(
    model_idx: npt.ArrayLike,
    baseline_idx: npt.ArrayLike,
    outcome: npt.ArrayLike,
    model_style: npt.ArrayLike,
    baseline_style: npt.ArrayLike,
    *,
    features: Sequence[str] = ("length", "markdown"),
    weights: npt.ArrayLike | None = None,
    n_models: int | None = None,
    reference: int | None = None,
    n_bootstrap: int = 100,
    ci_level: float = 0.90,
    seed: int = 0,
    clusters: npt.ArrayLike | None = None,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> StyleControlResult:
    """Fit the style-controlled BT model and bootstrap it.

    ``outcome`` is P(model beats baseline) per row (Arena-Hard's exploded 0/0.5/1 scores); ``weights``
    scales a row's likelihood (and counts as a frequency in the z-scoring). ``reference`` defaults to the
    baseline when every row has the same one. Rows are the resampling unit unless ``clusters`` is given.
    """
    a = np.asarray(model_idx, dtype=np.int64).ravel()
    b = np.asarray(baseline_idx, dtype=np.int64).ravel()
    y = np.asarray(outcome, dtype=np.float64).ravel()
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    _check_rows(a, b, y, w)
    m = int(max(a.max(), b.max()) + 1) if n_models is None else int(n_models)
    ref = _reference(b, reference, m)
    names = feature_names_for(features)
    z = zscore(style_features(model_style, baseline_style, features), w) if names else np.empty((len(y), 0))
    if z.shape[0] != y.shape[0]:
        raise ValueError("style arrays must have one row per battle")
    varying = np.flatnonzero(np.any(z != 0.0, axis=0))  # constant features carry no information
    rows = _unique_rows(a, b, y, w, z[:, varying])
    check_connected(rows.a, rows.b, m, _DISCONNECTED)
    n_par = m + varying.size
    prob = _Problem(rows, m, ref, np.array([k for k in range(n_par) if k != ref], dtype=np.int64))
    counts = _replicate_counts(rows, n_bootstrap, seed, clusters)
    with single_blas_thread():
        theta, converged = _newton(prob, rows.counts * rows.w, np.zeros(n_par), tol, max_iter)
        boot_theta = _bootstrap_fits(prob, theta, counts, tol, max_iter)
    stacked = np.vstack([rows.counts[None, :], counts]) * rows.w
    runaway = separation(rows.a, rows.b, stacked * rows.y, stacked * (1.0 - rows.y), m, ref)
    full_cols = np.concatenate([np.arange(m), m + varying])
    theta_full = np.zeros(m + len(names))
    theta_full[full_cols] = theta
    boot_full = np.zeros((boot_theta.shape[0], m + len(names)))
    boot_full[:, full_cols] = boot_theta
    return _summarise(theta_full, boot_full, prob, names, a, ci_level, (converged, runaway))


def _check_rows(a: IntArray, b: IntArray, y: FloatArray, w: FloatArray) -> None:
    if not (a.shape == b.shape == y.shape == w.shape) or a.size == 0:
        raise ValueError("model_idx, baseline_idx, outcome and weights must be non-empty and of equal length")
    if np.any(a == b):
        raise ValueError("a row cannot compare a model with itself")
    check_outcomes(y, w)
    if min(a.min(), b.min()) < 0:
        raise ValueError("model indices must be non-negative")


def _reference(b: IntArray, reference: int | None, n_models: int) -> int:
    if reference is None:
        uniq = np.unique(b)
        if uniq.size != 1:
            raise ValueError("several baselines present: pass reference= to choose the model fixed at 0")
        reference = int(uniq[0])
    if not 0 <= reference < n_models:
        raise ValueError(f"reference {reference} is not a model index")
    return reference


def _replicate_counts(rows: _Rows, n_bootstrap: int, seed: int, clusters: npt.ArrayLike | None) -> FloatArray:
    """Row counts (n_bootstrap, rows) of the bootstrap replicates (none without rounds)."""
    if n_bootstrap <= 0:
        return np.empty((0, rows.counts.size))
    return bootstrap_counts(rows.counts, rows.row_of_input, n_bootstrap, seed, clusters, unit="input row")


def _bootstrap_fits(
    prob: _Problem, theta: FloatArray, counts: FloatArray, tol: float, max_iter: int
) -> FloatArray:
    out = np.empty((counts.shape[0], theta.size))
    for k in range(counts.shape[0]):
        out[k], _ = _newton(prob, counts[k] * prob.rows.w, theta, tol, max_iter)
    return out


def _summarise(
    theta: FloatArray,
    boot_theta: FloatArray,
    prob: _Problem,
    names: tuple[str, ...],
    a: IntArray,
    ci_level: float,
    fit: tuple[bool, Separation],
) -> StyleControlResult:
    converged, runaway = fit
    m, ref = prob.n_models, prob.reference
    coefs = theta[:m] - theta[ref]
    win_rate = 100.0 * expit(coefs)
    if boot_theta.shape[0]:
        boot = 100.0 * expit(boot_theta[:, :m] - boot_theta[:, ref : ref + 1])
        low_q, high_q = ci_tails(ci_level)
        ci_low, median, ci_high = np.quantile(boot, [low_q, 0.5, high_q], axis=0)
        feat_median = np.median(boot_theta[:, m:], axis=0)
    else:
        boot = np.empty((0, m))
        ci_low, median, ci_high = win_rate.copy(), win_rate.copy(), win_rate.copy()
        feat_median = theta[m:].copy()
    return StyleControlResult(
        win_rate=win_rate,
        median=median,
        ci_low=ci_low,
        ci_high=ci_high,
        coefs=coefs,
        feature_names=names,
        feature_coefs=theta[m:].copy(),
        feature_coefs_median=feat_median,
        n_rows=np.bincount(a, minlength=m).astype(np.int64),
        bootstrap=boot,
        converged=converged,
        separation=runaway,
    )
