"""Bradley-Terry maximum likelihood on aggregated battles, with a fast multinomial bootstrap.

Model: P(a beats b) = sigmoid(xi_a - xi_b); a tie counts as half a win for each side (soft labels in [0, 1]
are accepted). The likelihood only depends on per-pair sums, so battles are first collapsed into unique
(pair, outcome, weight) cells; a fit then costs O(pairs) per Newton step however many battles there are.

Bootstrapping battles with replacement is the same as drawing cell counts from Multinomial(N, count/N), so
every replicate is a re-weighting of the same cells and all replicates are solved together by a batched
Newton method. Passing ``clusters`` (e.g. question ids) resamples whole clusters instead.

Ratings are reported on the Elo scale ``anchor_rating + scale / ln(base) * (xi - xi_anchor)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.special import expit

from jurist.ratings._shared import MAX_HALVINGS, check_connected, check_outcomes, laplacian
from jurist.ratings._shared import FloatArray as FloatArray  # re-exported: placement and tests use them
from jurist.ratings._shared import IntArray as IntArray
from jurist.ratings._shared import bootstrap_counts as _bootstrap_counts
from jurist.ratings._shared import ci_tails as ci_tails
from jurist.ratings._threads import single_blas_thread
from jurist.ratings.separation import Separation, no_separation, separation

_DISCONNECTED = (
    "the comparison graph has {n} disconnected groups of models; their relative ratings are "
    "undefined (pass ridge > 0 to shrink them together)"
)


class BattleCells(NamedTuple):
    """Battles collapsed into unique cells, oriented so that ``lo < hi``.

    ``score_lo`` is the (soft) score of model ``lo`` in one battle of the cell, ``weight`` the weight every
    battle of the cell carries and ``count`` how many input battles fell into it. ``battle_cell`` maps each
    input battle to its cell (used by the cluster bootstrap).
    """

    lo: IntArray
    hi: IntArray
    score_lo: FloatArray
    weight: FloatArray
    counts: FloatArray
    n_models: int
    battle_cell: IntArray


class BTResult(NamedTuple):
    """Elo-scale Bradley-Terry ratings with bootstrap percentile intervals.

    ``bootstrap`` holds the replicate ratings (n_bootstrap x n_models), each anchored like ``ratings``;
    ``converged`` is False when the point fit hit ``max_iter``; it may read True where a model won or lost
    every battle (the loss stops falling measurably thousands of Elo out), so ``separation`` says which
    models have no finite MLE, in the data and in how many replicates (:mod:`jurist.ratings.separation`):
    their intervals are then not trustworthy.
    """

    ratings: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    n_battles: IntArray
    bootstrap: FloatArray
    converged: bool
    separation: Separation


class WinRateVsAnchor(NamedTuple):
    """Win probability (percent) of every model against the anchor, with bootstrap intervals."""

    score: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray


def elo_factor(scale: float = 400.0, base: float = 10.0) -> float:
    """Elo points per unit of the natural-log BT strength (400 / ln 10 by default)."""
    return scale / math.log(base)


def aggregate_battles(
    model_a: npt.ArrayLike,
    model_b: npt.ArrayLike,
    outcome: npt.ArrayLike,
    *,
    weights: npt.ArrayLike | None = None,
    n_models: int | None = None,
) -> BattleCells:
    """Collapse battles into unique (pair, outcome, weight) cells.

    ``outcome`` is 1 when ``model_a`` wins, 0 when ``model_b`` wins, 0.5 for a tie (any value in [0, 1] is a
    soft label). ``weights`` multiplies each battle's contribution to the likelihood.
    """
    a = np.asarray(model_a, dtype=np.int64).ravel()
    b = np.asarray(model_b, dtype=np.int64).ravel()
    y = np.asarray(outcome, dtype=np.float64).ravel()
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    _check_battles(a, b, y, w)
    m = int(max(a.max(initial=-1), b.max(initial=-1)) + 1) if n_models is None else int(n_models)
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= m):
        raise ValueError("model indices must lie in [0, n_models)")
    swap = a > b
    lo = np.where(swap, b, a)
    hi = np.where(swap, a, b)
    score = np.where(swap, 1.0 - y, y)
    score_values, score_idx = np.unique(score, return_inverse=True)
    weight_values, weight_idx = np.unique(w, return_inverse=True)
    n_s, n_w = len(score_values), len(weight_values)
    if m * m * n_s * n_w >= 2**62:
        raise ValueError("too many distinct outcome/weight values to aggregate")
    key = ((lo * m + hi) * n_s + score_idx.ravel()) * n_w + weight_idx.ravel()
    keys, battle_cell, counts = np.unique(key, return_inverse=True, return_counts=True)
    weight_idx_c = keys % n_w
    rest = keys // n_w
    score_idx_c = rest % n_s
    pair = rest // n_s
    return BattleCells(
        lo=(pair // m).astype(np.int64),
        hi=(pair % m).astype(np.int64),
        score_lo=score_values[score_idx_c],
        weight=weight_values[weight_idx_c],
        counts=counts.astype(np.float64),
        n_models=m,
        battle_cell=battle_cell.ravel().astype(np.int64),
    )


def _check_battles(a: IntArray, b: IntArray, y: FloatArray, w: FloatArray) -> None:
    if not (a.shape == b.shape == y.shape == w.shape):
        raise ValueError("model_a, model_b, outcome and weights must have the same length")
    if np.any(a == b):
        raise ValueError("a model cannot battle itself")
    check_outcomes(y, w)


class _Pairs(NamedTuple):
    """Unique unordered pairs and the sparse map from cells to pairs."""

    i: IntArray
    j: IntArray
    cell_to_pair: sp.csr_matrix


def _pairs_of(cells: BattleCells) -> _Pairs:
    pair_key = cells.lo * cells.n_models + cells.hi
    keys, cell_pair = np.unique(pair_key, return_inverse=True)
    n_cells = len(pair_key)
    mapping = sp.csr_matrix(
        (np.ones(n_cells), (np.arange(n_cells), cell_pair.ravel())), shape=(n_cells, len(keys))
    )
    return _Pairs(
        (keys // cells.n_models).astype(np.int64), (keys % cells.n_models).astype(np.int64), mapping
    )


def _pair_sums(cells: BattleCells, pairs: _Pairs, counts: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per-pair total weight ``n`` and score of the lower model ``s`` for a (B, cells) count matrix."""
    weighted = counts * cells.weight
    n = np.asarray((pairs.cell_to_pair.T @ weighted.T).T)
    s = np.asarray((pairs.cell_to_pair.T @ (weighted * cells.score_lo).T).T)
    return n, s


def _loss(xi: FloatArray, i: IntArray, j: IntArray, n: FloatArray, s: FloatArray, ridge: float) -> FloatArray:
    d = xi[:, i] - xi[:, j]
    loss = (n * np.logaddexp(0.0, -d) + (n - s) * d).sum(axis=1)
    return loss + 0.5 * ridge * (xi * xi).sum(axis=1)  # type: ignore[no-any-return]


def _scatter_pairs(values: FloatArray, i: IntArray, j: IntArray, n_models: int) -> FloatArray:
    """Per-model sums of +values at i and -values at j, for each of B rows."""
    n_rep = values.shape[0]
    offsets = (np.arange(n_rep) * n_models)[:, None]
    idx = np.concatenate([(offsets + i).ravel(), (offsets + j).ravel()])
    vals = np.concatenate([values.ravel(), -values.ravel()])
    flat = np.asarray(np.bincount(idx, weights=vals, minlength=n_rep * n_models), dtype=np.float64)
    return flat.reshape(n_rep, n_models)


def newton_bt(
    i: IntArray,
    j: IntArray,
    n: FloatArray,
    s: FloatArray,
    n_models: int,
    *,
    xi0: FloatArray | None = None,
    ridge: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Solve B independent BT problems on the same pairs at once.

    ``n`` and ``s`` are (B, pairs): total weight and score of ``i`` per pair. The Hessian is a weighted graph
    Laplacian, singular along the all-ones vector; a rank-one term fixes that gauge (it keeps sum(xi) where
    it started) unless ``ridge > 0`` makes the problem strictly convex. Steps are halved until the loss
    drops, so the iteration cannot diverge. Returns (xi of shape (B, M), converged flags).
    """
    n_rep = n.shape[0]
    xi = np.zeros((n_rep, n_models)) if xi0 is None else np.array(np.broadcast_to(xi0, (n_rep, n_models)))
    gauge = ridge * np.eye(n_models) if ridge > 0 else np.full((n_models, n_models), 1.0 / n_models)
    converged = np.zeros(n_rep, dtype=bool)
    loss = _loss(xi, i, j, n, s, ridge)
    for _ in range(max_iter):
        active = ~converged
        if not active.any():
            break
        xa, na, sa = xi[active], n[active], s[active]
        p = expit(xa[:, i] - xa[:, j])
        grad = _scatter_pairs(na * p - sa, i, j, n_models) + ridge * xa
        hess = laplacian(na * p * (1.0 - p), i, j, n_models) + gauge
        step = _solve(hess, grad)
        xa_new, loss_new = _backtrack(xa, step, loss[active], i, j, na, sa, ridge)
        xi[active] = xa_new
        loss[active] = loss_new
        done = np.abs(step).max(axis=1) < tol
        converged[np.flatnonzero(active)[done]] = True
    return xi, converged


def _solve(hess: FloatArray, grad: FloatArray) -> FloatArray:
    """Batched Newton step; a replicate whose graph fell apart (singular Hessian) gets the min-norm step."""
    try:
        step = np.asarray(np.linalg.solve(hess, grad[:, :, None]), dtype=np.float64)[:, :, 0]
    except np.linalg.LinAlgError:
        step = np.asarray(np.linalg.pinv(hess, hermitian=True) @ grad[:, :, None], dtype=np.float64)[:, :, 0]
    return step


def _backtrack(
    x: FloatArray,
    step: FloatArray,
    loss: FloatArray,
    i: IntArray,
    j: IntArray,
    n: FloatArray,
    s: FloatArray,
    ridge: float,
) -> tuple[FloatArray, FloatArray]:
    """Damped Newton update: halve each replicate's step until its loss does not increase."""
    t = np.ones(x.shape[0])
    for _ in range(MAX_HALVINGS):
        trial = x - t[:, None] * step
        trial_loss = _loss(trial, i, j, n, s, ridge)
        worse = trial_loss > loss + 1e-12 * np.abs(loss)
        if not worse.any():
            return trial, trial_loss
        t[worse] *= 0.5
    keep = trial_loss > loss
    trial[keep] = x[keep]
    trial_loss[keep] = loss[keep]
    return trial, trial_loss


def bt_mle(cells: BattleCells, *, ridge: float = 0.0, tol: float = 1e-10, max_iter: int = 100) -> FloatArray:
    """Point estimate of the natural-log strengths xi (sum zero when ``ridge == 0``)."""
    xi, _ = _fit_cells(cells, cells.counts[None, :], ridge=ridge, tol=tol, max_iter=max_iter)
    out: FloatArray = xi[0]
    return out


def _fit_cells(
    cells: BattleCells,
    counts: FloatArray,
    *,
    ridge: float,
    tol: float,
    max_iter: int,
    xi0: FloatArray | None = None,
    pairs: _Pairs | None = None,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    pairs = _pairs_of(cells) if pairs is None else pairs
    if ridge <= 0:
        check_connected(pairs.i, pairs.j, cells.n_models, _DISCONNECTED)
    n, s = _pair_sums(cells, pairs, counts)
    with single_blas_thread():
        return newton_bt(
            pairs.i, pairs.j, n, s, cells.n_models, xi0=xi0, ridge=ridge, tol=tol, max_iter=max_iter
        )


def bootstrap_counts(
    cells: BattleCells, n_bootstrap: int, seed: int, clusters: npt.ArrayLike | None = None
) -> FloatArray:
    """Replicate cell counts (n_bootstrap, cells) for resampled battles, or for resampled ``clusters``
    (one id per input battle); see :func:`jurist.ratings._shared.bootstrap_counts`."""
    return _bootstrap_counts(cells.counts, cells.battle_cell, n_bootstrap, seed, clusters, unit="battle")


def bradley_terry(
    model_a: npt.ArrayLike,
    model_b: npt.ArrayLike,
    outcome: npt.ArrayLike,
    *,
    weights: npt.ArrayLike | None = None,
    n_models: int | None = None,
    anchor: int = 0,
    anchor_rating: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    n_bootstrap: int = 100,
    ci_level: float = 0.95,
    seed: int = 0,
    clusters: npt.ArrayLike | None = None,
    ridge: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> BTResult:
    """Fit Elo-scale Bradley-Terry ratings and percentile bootstrap intervals.

    Inputs are per-battle integer model indices, outcomes (1 a wins, 0 b wins, 0.5 tie) and optional
    weights. The anchor model gets ``anchor_rating`` in the point estimate and in every replicate.
    """
    low_q, high_q = ci_tails(ci_level)
    cells = aggregate_battles(model_a, model_b, outcome, weights=weights, n_models=n_models)
    if cells.counts.size == 0:
        raise ValueError("no battles to fit")
    if not 0 <= anchor < cells.n_models:
        raise ValueError(f"anchor {anchor} is not a model index")
    pairs = _pairs_of(cells)
    xi, conv = _fit_cells(cells, cells.counts[None, :], ridge=ridge, tol=tol, max_iter=max_iter, pairs=pairs)
    factor = elo_factor(scale, base)
    ratings = anchor_rating + factor * (xi[0] - xi[0, anchor])
    counts = bootstrap_counts(cells, n_bootstrap, seed, clusters) if n_bootstrap > 0 else None
    runaway = _separation(cells, pairs, counts, anchor) if ridge <= 0 else no_separation(cells.n_models)
    if counts is not None:
        boot_xi, _ = _fit_cells(
            cells, counts, ridge=ridge, tol=tol, max_iter=max_iter, xi0=xi[0], pairs=pairs
        )
        boot = anchor_rating + factor * (boot_xi - boot_xi[:, anchor : anchor + 1])
        ci_low, ci_high = np.quantile(boot, [low_q, high_q], axis=0)
    else:
        boot = np.empty((0, cells.n_models))
        ci_low, ci_high = ratings.copy(), ratings.copy()
    return BTResult(
        ratings=ratings,
        ci_low=ci_low,
        ci_high=ci_high,
        n_battles=_battles_per_model(cells),
        bootstrap=boot,
        converged=bool(conv[0]),
        separation=runaway,
    )


def _separation(cells: BattleCells, pairs: _Pairs, counts: FloatArray | None, anchor: int) -> Separation:
    """Which models run off to infinity on all battles (row 0) and in each bootstrap replicate."""
    stacked = cells.counts[None, :] if counts is None else np.vstack([cells.counts[None, :], counts])
    n, s = _pair_sums(cells, pairs, stacked)
    return separation(pairs.i, pairs.j, s, n - s, cells.n_models, anchor)


def _battles_per_model(cells: BattleCells) -> IntArray:
    per_lo = np.bincount(cells.lo, weights=cells.counts, minlength=cells.n_models)
    per_hi = np.bincount(cells.hi, weights=cells.counts, minlength=cells.n_models)
    return np.asarray(np.rint(per_lo + per_hi), dtype=np.int64)


def elo_win_probability(
    rating: npt.ArrayLike, opponent_rating: npt.ArrayLike, *, scale: float = 400.0, base: float = 10.0
) -> FloatArray:
    """P(player beats opponent) implied by two Elo-scale ratings: 1 / (1 + base^((R_opp - R) / scale))."""
    diff = (np.asarray(opponent_rating, dtype=np.float64) - np.asarray(rating, dtype=np.float64)) / scale
    return expit(-diff * math.log(base))  # type: ignore[no-any-return]


def win_rate_vs_anchor(
    result: BTResult,
    anchor: int,
    *,
    ci_level: float = 0.95,
    scale: float = 400.0,
    base: float = 10.0,
) -> WinRateVsAnchor:
    """Each model's BT win probability against ``anchor`` in percent, with intervals from the replicates."""
    score = 100.0 * elo_win_probability(result.ratings, result.ratings[anchor], scale=scale, base=base)
    if result.bootstrap.shape[0] == 0:
        return WinRateVsAnchor(score, score.copy(), score.copy())
    boot = 100.0 * elo_win_probability(
        result.bootstrap, result.bootstrap[:, anchor : anchor + 1], scale=scale, base=base
    )
    low_q, high_q = ci_tails(ci_level)
    low, high = np.quantile(boot, [low_q, high_q], axis=0)
    return WinRateVsAnchor(score, low, high)
