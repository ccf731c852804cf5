"""Separation in Bradley-Terry-type fits: when a model's strength has no finite maximum-likelihood value.

With no ridge or prior, the BT likelihood has a finite maximum exactly when the "beat" graph is strongly
connected: an edge u -> v wherever u scored anything against v (a win, a tie or a soft label above 0).
Where it is not, the models that never lost to the anchor's group (directly or through others) can be
moved up without bound, each step raising the likelihood; the fit then stops wherever its iteration limit
is, and the printed rating is an artefact of the solver (an interval of "+5574" Elo). The same holds for
style control's model coefficients, since a model's column enters all its rows.

The check is structural, so it is exact and costs one graph pass per fit: applied to every bootstrap
replicate, it says how many replicates put a model at infinity, and so whether a percentile interval's end
is taken from such replicates. Pure numpy/scipy: no printing, no state.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order

from jurist.ratings._shared import FloatArray, IntArray, ci_tails

FINITE, RUNS_UP, RUNS_DOWN, UNIDENTIFIED = 0, 1, -1, 2
"""Per-model codes: a finite MLE; unbounded above (never lost to the anchor's group: no loss, no tie);
unbounded below (never scored against it); both (cut off from the anchor either way)."""


class Separation(NamedTuple):
    """Where a fit's ratings run off to infinity, in the data and in its bootstrap replicates.

    ``full`` holds one code per model (:data:`FINITE`, :data:`RUNS_UP`, :data:`RUNS_DOWN`,
    :data:`UNIDENTIFIED`) for the fit on all battles; ``boot_up`` / ``boot_down`` count the replicates in
    which the model is unbounded above / below the anchor (an unidentified one counts in both), of
    ``n_bootstrap``.
    """

    full: IntArray
    boot_up: IntArray
    boot_down: IntArray
    n_bootstrap: int

    def interval_unreliable(self, ci_level: float) -> npt.NDArray[np.bool_]:
        """Per model: True when the point fit is unbounded or an end of the percentile interval at
        ``ci_level`` (numpy's linear interpolation) uses a replicate whose rating ran off."""
        bad = self.full != FINITE
        if self.n_bootstrap == 0:
            return np.asarray(bad)
        low_q, high_q = ci_tails(ci_level)
        last = self.n_bootstrap - 1
        highest_used = math.ceil(last * high_q)  # sorted ascending: runaway-up replicates are the top ones
        lowest_used = math.floor(last * low_q)
        return np.asarray(bad | (self.boot_up > last - highest_used) | (self.boot_down > lowest_used))


def no_separation(n_models: int) -> Separation:
    """Every model finite, no replicate (a ridge makes the likelihood strictly concave)."""
    zeros = np.zeros(n_models, dtype=np.int64)
    return Separation(zeros, zeros.copy(), zeros.copy(), 0)


def _edges(score_i: FloatArray, score_j: FloatArray) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Which edges carry a score forward (i over j) and backward, for one or many rows of scores."""
    tiny = 1e-12 * np.maximum(score_i + score_j, 1.0)
    return score_i > tiny, score_j > tiny


def runaway_models(
    i: IntArray, j: IntArray, score_i: FloatArray, score_j: FloatArray, n_models: int, anchor: int
) -> IntArray:
    """Per-model codes for one data set: edges (i, j) with the total (weighted) score each side made.

    ``score_i`` is what ``i`` scored against ``j`` over their battles, ``score_j`` what ``j`` scored
    against ``i`` (edges may repeat). A model with no battles at all is :data:`UNIDENTIFIED`.
    """
    forward, backward = _edges(score_i, score_j)
    rows = np.concatenate([i[forward], j[backward]])
    cols = np.concatenate([j[forward], i[backward]])
    beat = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_models, n_models))
    beaten_by_anchor = _reached(beat, anchor)  # anchor -> ... -> v: the anchor's group beat v
    beats_anchor = _reached(beat.T.tocsr(), anchor)  # v -> ... -> anchor
    codes = np.full(n_models, UNIDENTIFIED, dtype=np.int64)
    codes[beaten_by_anchor & beats_anchor] = FINITE
    codes[beats_anchor & ~beaten_by_anchor] = RUNS_UP
    codes[beaten_by_anchor & ~beats_anchor] = RUNS_DOWN
    return codes


def _reached(graph: sp.csr_matrix, start: int) -> npt.NDArray[np.bool_]:
    order = breadth_first_order(graph, start, directed=True, return_predecessors=False)
    seen = np.zeros(graph.shape[0], dtype=bool)
    seen[np.asarray(order, dtype=np.int64)] = True
    return seen


def separation(
    i: IntArray,
    j: IntArray,
    score_i: FloatArray,
    score_j: FloatArray,
    n_models: int,
    anchor: int,
) -> Separation:
    """Codes for the data (row 0 of ``score_i``/``score_j``) and runaway counts over the other rows
    (the bootstrap replicates: scores of shape (1 + B, edges)).

    A replicate whose beat graph has every edge of the data's has the data's codes; only those that lost
    an edge (a pair's only loss resampled away) are walked again, so a large arena costs little more.
    """
    full = runaway_models(i, j, score_i[0], score_j[0], n_models, anchor)
    forward, backward = _edges(score_i, score_j)
    same = np.all(forward == forward[0], axis=1) & np.all(backward == backward[0], axis=1)
    full_up = (full == RUNS_UP) | (full == UNIDENTIFIED)
    full_down = (full == RUNS_DOWN) | (full == UNIDENTIFIED)
    n_same = int(same[1:].sum())
    up = n_same * full_up.astype(np.int64)
    down = n_same * full_down.astype(np.int64)
    for row in np.flatnonzero(~same):
        codes = runaway_models(i, j, score_i[row], score_j[row], n_models, anchor)
        up += (codes == RUNS_UP) | (codes == UNIDENTIFIED)
        down += (codes == RUNS_DOWN) | (codes == UNIDENTIFIED)
    return Separation(full, up, down, score_i.shape[0] - 1)
