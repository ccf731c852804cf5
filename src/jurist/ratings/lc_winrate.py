"""AlpacaEval 2 win rate and length-controlled (LC) win rate.

Win rate: preferences are P(model output beats the baseline output) in [0, 1] (AlpacaEval stores
``1 + p``); the win rate is ``100 * mean(p)`` with ``100 * sem(p)`` as its standard error.

LC win rate (Dubois et al. 2024) fits, for one model against the baseline, the soft-label logistic GLM

    logit q(x) = phi * tanh(std_delta_len(x)) + psi * gamma_x + theta * not_gamed_baseline

with no intercept, where ``std_delta_len = (len_baseline - len_model) / std`` in characters (std over this
model's rows) and ``gamma_x`` is a fixed per-instruction difficulty. Rows of two length-gamed baselines
(``not_gamed_baseline = 0``, weight ``lambda / 2`` each) may be appended so that the shared length and
difficulty slopes must also explain that padding or truncating the baseline does not change its quality.
As upstream, the fit is L1-penalised logistic regression with C chosen by 5-fold grouped cross-validation
over ``logspace(-4, 4, 10)`` (weighted continuous log-loss); here it is solved to tight tolerance with scipy
instead of liblinear. LC is the prediction at equal length: ``100 * mean_x sigmoid(theta + psi * gamma_x)``.

When the official difficulties are not available they can be estimated from the models at hand by the joint
GLM ``phi_m * tanh(std_delta_len) + theta_m + gamma_x`` (``estimate_instruction_difficulty``); results say
whether that happened (``difficulty_source``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from jurist.ratings._threads import single_blas_thread
from jurist.ratings.soft_logistic import DEFAULT_CS, cv_l1_c, fit_soft_logistic, grouped_folds

__all__ = [
    "DEFAULT_CS",
    "GLMWeights",
    "GamedRows",
    "LCWinRate",
    "alpaca_preference_to_probability",
    "cv_l1_c",
    "estimate_instruction_difficulty",
    "fit_soft_logistic",
    "gamed_rows",
    "grouped_folds",
    "length_controlled_win_rate",
    "length_controlled_win_rates",
    "standardized_length_gap",
    "win_rate",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
DifficultySource = Literal["given", "estimated", "none"]


class GLMWeights(NamedTuple):
    """Fitted LC-GLM coefficients: length slope phi, difficulty slope psi and quality theta."""

    length: float
    difficulty: float
    quality: float


class GamedRows(NamedTuple):
    """Annotations of length-gamed baselines: soft preference, standardised length gap, instruction index."""

    preference: FloatArray
    std_delta_len: FloatArray
    instruction: IntArray


class LCWinRate(NamedTuple):
    """Raw and length-controlled win rates (percent) of one model against the baseline."""

    win_rate: float
    standard_error: float
    length_controlled_win_rate: float
    lc_standard_error: float
    weights: GLMWeights
    l1_c: float
    difficulty_source: DifficultySource
    n: int


def alpaca_preference_to_probability(preference: npt.ArrayLike) -> FloatArray:
    """AlpacaEval's stored preference (1 = baseline wins, 2 = model wins, 0 legacy tie) -> P(model wins)."""
    pref = np.asarray(preference, dtype=np.float64)
    prob: FloatArray = np.where(pref == 0.0, 0.5, pref - 1.0)
    return prob


def win_rate(probability: npt.ArrayLike) -> tuple[float, float]:
    """``(100 * mean, 100 * standard error of the mean)`` of the non-NaN preferences."""
    p = np.asarray(probability, dtype=np.float64)
    p = p[~np.isnan(p)]
    if p.size == 0:
        return float("nan"), float("nan")
    sem = float(p.std(ddof=1) / np.sqrt(p.size)) if p.size > 1 else float("nan")
    return 100.0 * float(p.mean()), 100.0 * sem


def standardized_length_gap(baseline_len: npt.ArrayLike, model_len: npt.ArrayLike) -> FloatArray:
    """``(len_baseline - len_model) / std`` with the unbiased std over these rows (0 when constant)."""
    gap = np.asarray(baseline_len, dtype=np.float64) - np.asarray(model_len, dtype=np.float64)
    std = float(gap.std(ddof=1)) if gap.size > 1 else 0.0
    return gap / std if std > 0 else np.zeros_like(gap)


def gamed_rows(
    preference: npt.ArrayLike,
    gamed_len: npt.ArrayLike,
    baseline_len: npt.ArrayLike,
    instruction: npt.ArrayLike,
) -> GamedRows:
    """Build the rows of one gamed baseline (its length gap standardised over its own rows)."""
    return GamedRows(
        preference=np.asarray(preference, dtype=np.float64),
        std_delta_len=standardized_length_gap(baseline_len, gamed_len),
        instruction=np.asarray(instruction, dtype=np.int64),
    )


# ---------------------------------------------------------------------------------------------------------
# The LC GLM.


def _design(std_delta: FloatArray, difficulty: FloatArray | None, not_gamed: FloatArray) -> FloatArray:
    cols = [np.tanh(std_delta)]
    cols.append(difficulty if difficulty is not None else np.zeros_like(std_delta))
    cols.append(not_gamed)
    return np.column_stack(cols)


def length_controlled_win_rate(
    preference: npt.ArrayLike,
    model_len: npt.ArrayLike,
    baseline_len: npt.ArrayLike,
    *,
    instruction: npt.ArrayLike | None = None,
    instruction_difficulty: npt.ArrayLike | None = None,
    gamed: Sequence[GamedRows] = (),
    regularize_lambda: float = 0.2,
    penalty: Literal["l1_cv", "l1", "none"] = "l1_cv",
    l1_c: float = 100.0,
    n_splits: int = 5,
    difficulty_source: DifficultySource | None = None,
) -> LCWinRate:
    """LC win rate of one model from its per-instruction preferences and output lengths (characters).

    ``instruction`` maps each row to an index of ``instruction_difficulty`` (default: row i -> i). Without
    difficulties the term is dropped (AlpacaEval's "minimal" GLM). ``gamed`` rows are only used when
    ``regularize_lambda`` > 0; each row gets weight ``regularize_lambda / len(gamed)``. ``penalty``: "l1_cv"
    (upstream), "l1" with a fixed ``l1_c``, or "none" (plain MLE).
    """
    p = np.asarray(preference, dtype=np.float64).ravel()
    keep = ~np.isnan(p)
    wr, se = win_rate(p)
    gap_model = np.asarray(model_len, dtype=np.float64).ravel()[keep]
    std_delta = standardized_length_gap(np.asarray(baseline_len, dtype=np.float64).ravel()[keep], gap_model)
    rows = np.arange(p.size) if instruction is None else np.asarray(instruction, dtype=np.int64).ravel()
    gamma = None if instruction_difficulty is None else np.asarray(instruction_difficulty, dtype=np.float64)
    model_gamma = None if gamma is None else gamma[rows[keep]]
    x = _design(std_delta, model_gamma, np.ones(int(keep.sum())))
    y, w = p[keep], np.ones(int(keep.sum()))
    if gamed and regularize_lambda > 0:
        # Gamed rows come first, as upstream concatenates them (it only matters for the CV folds).
        gx, gy, gw = _gamed_design(gamed, gamma, regularize_lambda)
        x, y, w = np.vstack([gx, x]), np.concatenate([gy, y]), np.concatenate([gw, w])
    with single_blas_thread():
        c = _choose_c(x, y, w, penalty, l1_c, n_splits)
        beta = fit_soft_logistic(x, y, w, l1_c=c)
    length, difficulty, quality = (float(v) for v in beta)
    test_gamma = np.zeros(int(keep.sum())) if model_gamma is None else model_gamma
    pred = expit(quality + difficulty * test_gamma)
    lc, lc_se = win_rate(pred)
    source: DifficultySource = difficulty_source or ("none" if gamma is None else "given")
    return LCWinRate(
        wr,
        se,
        lc,
        lc_se,
        GLMWeights(length, difficulty, quality),
        float(c or np.inf),
        source,
        int(keep.sum()),
    )


def _choose_c(
    x: FloatArray, y: FloatArray, w: FloatArray, penalty: str, l1_c: float, n_splits: int
) -> float | None:
    if penalty == "none":
        return None
    if penalty == "l1":
        return l1_c
    if penalty == "l1_cv":
        return cv_l1_c(x, y, w, n_splits=n_splits)
    raise ValueError(f"unknown penalty {penalty!r}")


def _gamed_design(
    gamed: Sequence[GamedRows], gamma: FloatArray | None, regularize_lambda: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    xs, ys, ws = [], [], []
    for g in gamed:
        keep = ~np.isnan(g.preference)
        diff = None if gamma is None else gamma[g.instruction[keep]]
        xs.append(_design(g.std_delta_len[keep], diff, np.zeros(int(keep.sum()))))
        ys.append(g.preference[keep])
        ws.append(np.full(int(keep.sum()), regularize_lambda / len(gamed)))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


# ---------------------------------------------------------------------------------------------------------
# Instruction difficulty, estimated jointly when the official one is missing.


def estimate_instruction_difficulty(
    preferences: npt.ArrayLike,
    model_lens: npt.ArrayLike,
    baseline_len: npt.ArrayLike,
    *,
    ridge: float = 1e-3,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> FloatArray:
    """Per-instruction difficulty from the joint GLM ``phi_m tanh(std_delta_len) + theta_m + gamma_x``.

    ``preferences`` and ``model_lens`` are (models, instructions) with NaN for missing preferences. Do not
    include the baseline against itself (its constant 0.5 rows would flatten gamma). A tiny ridge keeps
    gamma finite for instructions every model wins or loses; gamma is returned with median 0 (the gauge an
    L1 fit picks; theta absorbs any shift, so LC without gamed rows does not depend on it).
    """
    p = np.atleast_2d(np.asarray(preferences, dtype=np.float64))
    lens = np.atleast_2d(np.asarray(model_lens, dtype=np.float64))
    base = np.asarray(baseline_len, dtype=np.float64)
    n_models, n_instr = p.shape
    observed = ~np.isnan(p)
    tanh_gap = np.zeros_like(p)
    for m in range(n_models):
        tanh_gap[m, observed[m]] = np.tanh(standardized_length_gap(base[observed[m]], lens[m, observed[m]]))
    y = np.where(observed, p, 0.0)
    mask = observed.astype(np.float64)
    with single_blas_thread():
        gamma = _joint_newton(y, mask, tanh_gap, ridge, tol, max_iter)
    centred: FloatArray = gamma - np.median(gamma)
    return centred


def _joint_newton(
    y: FloatArray, mask: FloatArray, t: FloatArray, ridge: float, tol: float, max_iter: int
) -> FloatArray:
    """Newton for the (phi, theta, gamma) joint GLM; parameters ordered [phi (M), theta (M), gamma (N)]."""
    n_models, n_instr = y.shape
    phi, theta, gamma = np.zeros(n_models), np.zeros(n_models), np.zeros(n_instr)

    def loss_of(ph: FloatArray, th: FloatArray, ga: FloatArray) -> float:
        eta = ph[:, None] * t + th[:, None] + ga[None, :]
        return float((mask * (np.logaddexp(0.0, eta) - y * eta)).sum() + 0.5 * ridge * (ga @ ga))

    loss = loss_of(phi, theta, gamma)
    for _ in range(max_iter):
        eta = phi[:, None] * t + theta[:, None] + gamma[None, :]
        prob = expit(eta)
        r = mask * (prob - y)
        h = mask * prob * (1.0 - prob)
        grad = np.concatenate([(r * t).sum(1), r.sum(1), r.sum(0) + ridge * gamma])
        hess = _joint_hessian(h, t, ridge)
        step = np.linalg.solve(hess, grad)
        s_phi, s_theta, s_gamma = step[:n_models], step[n_models : 2 * n_models], step[2 * n_models :]
        stepsize = 1.0
        while stepsize > 1e-10:
            trial = (phi - stepsize * s_phi, theta - stepsize * s_theta, gamma - stepsize * s_gamma)
            value = loss_of(*trial)
            if value <= loss + 1e-12 * abs(loss):
                break
            stepsize *= 0.5
        else:
            break
        (phi, theta, gamma), loss = trial, value
        if np.abs(step).max() < tol:
            break
    return gamma


def _joint_hessian(h: FloatArray, t: FloatArray, ridge: float) -> FloatArray:
    n_models, n_instr = h.shape
    size = 2 * n_models + n_instr
    hess = np.zeros((size, size))
    phi_idx = np.arange(n_models)
    theta_idx = n_models + phi_idx
    gamma_off = 2 * n_models
    hess[phi_idx, phi_idx] = (h * t * t).sum(1)
    hess[phi_idx, theta_idx] = hess[theta_idx, phi_idx] = (h * t).sum(1)
    hess[theta_idx, theta_idx] = h.sum(1)
    hess[:n_models, gamma_off:] = h * t
    hess[n_models:gamma_off, gamma_off:] = h
    hess[gamma_off:, :gamma_off] = hess[:gamma_off, gamma_off:].T
    diag = gamma_off + np.arange(n_instr)
    hess[diag, diag] = h.sum(0) + ridge
    return hess


def length_controlled_win_rates(
    preferences: npt.ArrayLike,
    model_lens: npt.ArrayLike,
    baseline_len: npt.ArrayLike,
    *,
    instruction_difficulty: npt.ArrayLike | None = None,
    gamed: Sequence[GamedRows] = (),
    regularize_lambda: float = 0.2,
    penalty: Literal["l1_cv", "l1", "none"] = "l1_cv",
    n_splits: int = 5,
) -> list[LCWinRate]:
    """LC win rates of several models on the same instructions (rows = models, columns = instructions).

    Without ``instruction_difficulty`` it is first estimated jointly from these models and every result is
    flagged ``difficulty_source="estimated"``. Pass the baseline-vs-itself row only if you want its trivial
    result; it is excluded from the difficulty estimate automatically when all its preferences are 0.5.
    """
    p = np.atleast_2d(np.asarray(preferences, dtype=np.float64))
    lens = np.atleast_2d(np.asarray(model_lens, dtype=np.float64))
    source: DifficultySource = "given"
    if instruction_difficulty is None:
        informative = ~np.all(np.isnan(p) | (p == 0.5), axis=1)
        gamma = estimate_instruction_difficulty(p[informative], lens[informative], baseline_len)
        source = "estimated"
    else:
        gamma = np.asarray(instruction_difficulty, dtype=np.float64)
    return [
        length_controlled_win_rate(
            p[m],
            lens[m],
            baseline_len,
            instruction_difficulty=gamma,
            gamed=gamed,
            regularize_lambda=regularize_lambda,
            penalty=penalty,
            n_splits=n_splits,
            difficulty_source=source,
        )
        for m in range(p.shape[0])
    ]
