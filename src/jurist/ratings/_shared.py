"""Graph and bootstrap helpers shared by the Bradley-Terry (``bt``) and style-control fits.

Both fits are logistic models on a comparison graph of models, solved by damped Newton and bootstrapped by
re-weighting aggregated rows. The pieces below are the parts they have in common; keeping one copy means
the two methods cannot drift apart (e.g. in how a bootstrap replicate is drawn from a seed, which fixes
the numbers a run reports). Pure numpy/scipy: no I/O, no state.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MAX_HALVINGS = 40
"""Step halvings a damped Newton update tries before it gives up on decreasing the loss."""


def ci_tails(ci_level: float) -> tuple[float, float]:
    """Lower and upper quantile levels of a central interval (0.95 -> 0.025, 0.975)."""
    if not 0.0 < ci_level < 1.0:
        raise ValueError(f"ci_level must be in (0, 1), got {ci_level}")
    tail = (1.0 - ci_level) / 2.0
    return tail, 1.0 - tail


DRAWS_PER_BLOCK = 1 << 17
"""Multinomial draw counts held at once (1 MB of int64, as much again as floats in a product). All the
rounds at once held 80 MB at 50k questions for a win rate's 100 rounds, and the judge card's 2,000
rounds over 10k questions 320 MB, each at the peak of a whole run; one block at a time is also faster
(0.29 s against 0.48 s for the win rate)."""


def multinomial_draws(rng: np.random.Generator, n: int, rounds: int) -> Iterator[IntArray]:
    """A bootstrap's multinomial draw counts over ``n`` equally likely items, a block of rounds at a
    time: the same rows, in the same order, as one ``size=rounds`` draw (the generator fills rows one
    after another), so a seed gives the same interval whatever the block size."""
    pvals = np.full(n, 1.0 / n)
    step = max(1, DRAWS_PER_BLOCK // n)
    for start in range(0, rounds, step):
        yield rng.multinomial(n, pvals, size=min(step, rounds - start))


def check_outcomes(y: FloatArray, w: FloatArray) -> None:
    """Refuse outcomes outside [0, 1] and negative or non-finite weights: either would make the
    log-likelihood of both fits unbounded or meaningless (a soft label must be a probability)."""
    if np.any((y < 0.0) | (y > 1.0)) or not np.all(np.isfinite(y)):
        raise ValueError("outcomes must lie in [0, 1]")
    if np.any(w < 0.0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")


def laplacian(h: FloatArray, i: IntArray, j: IntArray, n_models: int, *, by_part: bool = False) -> FloatArray:
    """Batched weighted graph Laplacians (B, M, M) of the edge weights ``h`` (B, edges) on edges (i, j).

    This is the model block of both fits' Hessians; edges may repeat and come in either orientation.
    ``by_part`` picks the floating-point summation order: False adds every contribution of an entry in one
    pass (Bradley-Terry's order), True sums the i-diagonal, j-diagonal, i->j and j->i parts on their own and
    then combines them (style control's order). The two differ in the last bits where a model sits on both
    sides of the edges, and each fit keeps its own so that its reported numbers stay exactly as they were.
    """
    n_rep = h.shape[0]
    size = n_rep * n_models * n_models
    base = (np.arange(n_rep) * n_models * n_models)[:, None]
    idx = [(base + rows * n_models + cols).ravel() for rows, cols in ((i, i), (j, j), (i, j), (j, i))]
    hv = h.ravel()
    if by_part:
        diag_i, diag_j, off_ij, off_ji = (np.bincount(k, weights=hv, minlength=size) for k in idx)
        flat = np.asarray(diag_i + diag_j - off_ij - off_ji, dtype=np.float64)
    else:
        vals = np.concatenate([hv, hv, -hv, -hv])
        flat = np.asarray(np.bincount(np.concatenate(idx), weights=vals, minlength=size), dtype=np.float64)
    return flat.reshape(n_rep, n_models, n_models)


def check_connected(i: IntArray, j: IntArray, n_models: int, message: str) -> None:
    """Raise ValueError(``message`` with ``{n}`` = number of groups) unless the graph is connected.

    Without a ridge or prior, strengths of models in different groups are not comparable (the likelihood
    is flat along the difference between the groups), so a fit must refuse such data rather than report an
    arbitrary gauge.
    """
    import scipy.sparse as sp  # here, not at the top: scipy is 0.1 s of a run's start that fits nothing
    from scipy.sparse.csgraph import connected_components

    graph = sp.coo_matrix((np.ones(len(i)), (i, j)), shape=(n_models, n_models))
    n_comp, _ = connected_components(graph, directed=False)
    if n_comp > 1:
        raise ValueError(message.format(n=n_comp))


def bootstrap_counts(
    counts: FloatArray,
    row_of_input: IntArray,
    n_bootstrap: int,
    seed: int,
    clusters: npt.ArrayLike | None,
    *,
    unit: str,
) -> FloatArray:
    """Replicate counts (n_bootstrap, rows) of aggregated rows, for resampled inputs or resampled clusters.

    ``counts`` says how many inputs each aggregated row stands for and ``row_of_input`` maps every input
    to its row. Without ``clusters``, Multinomial(N, counts/N) over the rows is exactly the distribution of
    the row counts of N inputs drawn with replacement, so no input-level resampling is needed. With
    ``clusters`` (one id per input, e.g. question ids) whole clusters are drawn with replacement and the
    rows of their inputs added up. ``unit`` names an input in the error message.
    """
    rng = np.random.default_rng(seed)
    if clusters is None:
        total = int(round(counts.sum()))
        return rng.multinomial(total, counts / counts.sum(), size=n_bootstrap).astype(np.float64)
    _, cluster_idx = np.unique(np.asarray(clusters).ravel(), return_inverse=True)
    if cluster_idx.size != row_of_input.size:
        raise ValueError(f"clusters must give one id per {unit}")
    n_clusters = int(cluster_idx.max()) + 1
    import scipy.sparse as sp

    incidence = sp.csr_matrix(
        (np.ones(cluster_idx.size), (cluster_idx.ravel(), row_of_input)),
        shape=(n_clusters, len(counts)),
    )
    draws = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_bootstrap)
    return np.asarray((incidence.T @ draws.T.astype(np.float64)).T)
