"""Weighted soft-label logistic regression with an optional L1 penalty (liblinear's objective), and the
grouped cross-validation that picks its penalty: the solver behind AlpacaEval's length-controlled win rate.

Solved with scipy to a tight tolerance instead of liblinear, so results do not depend on liblinear's
stopping rule; pure numpy/scipy, arrays in and numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize
from scipy.special import expit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_CS: tuple[float, ...] = tuple(float(c) for c in np.logspace(-4, 4, 10))
_LOG_CLIP = 1e-15


def _soft_loss_grad(
    beta: FloatArray, x: FloatArray, y: FloatArray, w: FloatArray
) -> tuple[float, FloatArray]:
    eta = x @ beta
    loss = float(np.dot(w, np.logaddexp(0.0, eta) - y * eta))
    return loss, x.T @ (w * (expit(eta) - y))


def fit_soft_logistic(
    x: FloatArray, y: FloatArray, w: FloatArray, *, l1_c: float | None = None
) -> FloatArray:
    """Minimise ``sum|beta| + C * sum_i w_i * logloss_i`` (or the plain weighted loss when C is None).

    The L1 problem is solved as a smooth bound-constrained one (beta = u - v, u, v >= 0) with L-BFGS-B and
    polished by Newton steps on the non-zero coefficients.
    """
    n_feat = x.shape[1]
    if l1_c is None:
        return _newton_polish(np.zeros(n_feat), x, y, w, np.ones(n_feat, dtype=bool), np.zeros(n_feat))

    def objective(uv: FloatArray) -> tuple[float, FloatArray]:
        loss, grad = _soft_loss_grad(uv[:n_feat] - uv[n_feat:], x, y, w)
        return l1_c * loss + float(uv.sum()), np.concatenate([l1_c * grad + 1.0, -l1_c * grad + 1.0])

    res = minimize(
        objective,
        np.zeros(2 * n_feat),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (2 * n_feat),
        options={"maxiter": 10_000, "ftol": 1e-15, "gtol": 1e-12},
    )
    beta = np.asarray(res.x[:n_feat] - res.x[n_feat:], dtype=np.float64)
    active = np.abs(beta) > 1e-8
    return _newton_polish(beta * active, x, y, w, active, np.sign(beta) / l1_c)


def _newton_polish(
    beta: FloatArray,
    x: FloatArray,
    y: FloatArray,
    w: FloatArray,
    active: npt.NDArray[np.bool_],
    l1_grad: FloatArray,
) -> FloatArray:
    """Newton on the active coefficients of ``loss + l1_grad . beta`` (signs fixed), with step halving."""
    if not active.any():
        return beta
    xa = x[:, active]
    b = beta[active].copy()
    lin = l1_grad[active]

    def total(v: FloatArray) -> float:
        return _soft_loss_grad(v, xa, y, w)[0] + float(np.dot(lin, v))

    current = total(b)
    for _ in range(100):
        _, grad = _soft_loss_grad(b, xa, y, w)
        p = expit(xa @ b)
        hess = xa.T @ ((w * p * (1.0 - p))[:, None] * xa)
        step = np.linalg.lstsq(hess, grad + lin, rcond=None)[0]
        t = 1.0
        while t > 1e-10:
            trial = b - t * step
            value = total(trial)
            if value <= current + 1e-13 * abs(current):
                break
            t *= 0.5
        else:
            break
        b, current = trial, value
        if np.abs(step).max() < 1e-12:
            break
    out = np.zeros_like(beta)
    out[active] = b
    return out


def _heldout_logloss(beta: FloatArray, x: FloatArray, y: FloatArray, w: FloatArray) -> float:
    q = np.clip(expit(x @ beta), _LOG_CLIP, 1.0 - _LOG_CLIP)
    return float(-np.mean(w * (y * np.log(q) + (1.0 - y) * np.log(1.0 - q))))


def grouped_folds(n_rows: int, n_splits: int) -> IntArray:
    """Fold of each row: rows are taken last-first, round-robin (sklearn GroupKFold for equal groups)."""
    return ((n_rows - 1 - np.arange(n_rows)) % n_splits).astype(np.int64)


def cv_l1_c(
    x: FloatArray, y: FloatArray, w: FloatArray, *, cs: Sequence[float] = DEFAULT_CS, n_splits: int = 5
) -> float:
    """The C with the lowest mean held-out weighted log-loss over grouped folds (first one on ties)."""
    folds = grouped_folds(len(y), n_splits)
    scores = np.zeros(len(cs))
    for k in range(n_splits):
        train, test = folds != k, folds == k
        for ci, c in enumerate(cs):
            beta = fit_soft_logistic(x[train], y[train], w[train], l1_c=c)
            scores[ci] += _heldout_logloss(beta, x[test], y[test], w[test])
    return float(cs[int(np.argmin(scores))])
