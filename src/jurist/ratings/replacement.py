"""The statistics of a judge-replacement study: arrays in, numbers out (numpy only, seeded).

A candidate judge re-judges decisions a retired reference judge made. Two questions are asked of it:

* item level, where the old per-item verdicts exist: how often the two judges pick the same side
  (agreement) and how far above chance (Cohen's kappa over three outcomes: model, baseline, tie), each
  with a 95% interval from a bootstrap that resamples *questions* (every decision on a question moves
  together, since the panel's models answer the same questions and a hard question is hard for all);
* leaderboard level: how the candidate orders the panel's models against the retired judge's scores
  (Spearman rho, Kendall tau-b), and a monotone re-anchoring map from the candidate's scale onto the
  retired one (isotonic regression by pool-adjacent-violators, read between its knots by linear
  interpolation and flat beyond them), whose uncertainty comes from refitting it on panels resampled by
  models and by questions.

Inputs are per-item scores in [0, 1] from the model's side (1: the model beats the baseline, 0.5: tie),
NaN where an item was not judged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TIE_TOLERANCE = 1e-9
"""A per-item score this close to 0.5 is a tie (AlpacaEval's identical outputs are exactly 1.5)."""
OUTCOMES = (-1, 0, 1)
"""Baseline wins, tie, model wins: the three outcomes kappa is computed over."""


class Interval(NamedTuple):
    """A point estimate with its interval (NaN when there is nothing to estimate)."""

    estimate: float
    low: float
    high: float


def decisions(scores: npt.ArrayLike) -> FloatArray:
    """Each item's outcome: 1 (model wins), 0 (tie), -1 (baseline wins), NaN (not judged)."""
    p = np.asarray(scores, dtype=np.float64)
    out = np.sign(p - 0.5)
    out[np.abs(p - 0.5) <= TIE_TOLERANCE] = 0.0
    out[np.isnan(p)] = np.nan
    return out


def _quantiles(values: FloatArray, level: float) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def _cluster_index(clusters: Sequence[str]) -> tuple[IntArray, int]:
    names = sorted(set(clusters))
    position = {name: i for i, name in enumerate(names)}
    return np.array([position[c] for c in clusters], dtype=np.int64), len(names)


def _agreement_and_kappa(stats: FloatArray) -> tuple[FloatArray, FloatArray]:
    """From summed per-cluster statistics (rows: replicates; columns: n, agree, old counts of the three
    outcomes, new counts): agreement and kappa per replicate."""
    n, agree = stats[:, 0], stats[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        po = agree / n
        old, new = stats[:, 2:5] / n[:, None], stats[:, 5:8] / n[:, None]
        pe = (old * new).sum(axis=1)
        kappa = np.where(np.isclose(pe, 1.0), 1.0, (po - pe) / (1.0 - pe))
    return po, kappa


def agreement_kappa(
    old: npt.ArrayLike,
    new: npt.ArrayLike,
    clusters: Sequence[str],
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Interval, Interval, int]:
    """(agreement, Cohen's kappa, items compared) of two judges' outcomes (:func:`decisions`), each with
    a percentile interval from a bootstrap over ``clusters`` (one per item: its question)."""
    a, b = np.asarray(old, dtype=np.float64), np.asarray(new, dtype=np.float64)
    keep = ~(np.isnan(a) | np.isnan(b))
    if not keep.any():
        empty = Interval(math.nan, math.nan, math.nan)
        return empty, empty, 0
    a, b = a[keep], b[keep]
    index, n_clusters = _cluster_index([c for c, k in zip(clusters, keep, strict=True) if k])
    columns = [np.ones_like(a), (a == b).astype(np.float64)]
    columns += [(a == v).astype(np.float64) for v in OUTCOMES] + [
        (b == v).astype(np.float64) for v in OUTCOMES
    ]
    per_item = np.stack(columns, axis=1)
    per_cluster = np.zeros((n_clusters, per_item.shape[1]))
    np.add.at(per_cluster, index, per_item)
    po, kappa = _agreement_and_kappa(per_cluster.sum(axis=0, keepdims=True))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_bootstrap)
    boot_po, boot_kappa = _agreement_and_kappa(counts.astype(np.float64) @ per_cluster)
    return (
        Interval(float(po[0]), *_quantiles(boot_po, level)),
        Interval(float(kappa[0]), *_quantiles(boot_kappa, level)),
        int(a.size),
    )


def ranks(values: npt.ArrayLike) -> FloatArray:
    """Ranks from 1 (lowest), ties given their mean rank."""
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    out = np.empty(x.size)
    out[order] = np.arange(1, x.size + 1, dtype=np.float64)
    for value in np.unique(x):
        tied = x == value
        if tied.sum() > 1:
            out[tied] = out[tied].mean()
    return out


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's rho (Pearson's r of the mean ranks); NaN when either side does not vary."""
    rx, ry = ranks(x), ranks(y)
    if rx.size < 2 or np.all(rx == rx[0]) or np.all(ry == ry[0]):
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def kendall(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Kendall's tau-b; NaN when either side does not vary."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    i, j = np.triu_indices(a.size, k=1)
    da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n_a, n_b = float(np.count_nonzero(da)), float(np.count_nonzero(db))
    if n_a == 0 or n_b == 0:
        return math.nan
    return float((da * db).sum() / math.sqrt(n_a * n_b))


# -- the re-anchoring map ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MonotoneMap:
    """A non-decreasing map given by its knots; read by linear interpolation, flat beyond the knots."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __call__(self, value: npt.ArrayLike) -> FloatArray:
        found: FloatArray = np.interp(np.asarray(value, dtype=np.float64), np.array(self.x), np.array(self.y))
        return found


def isotonic_map(x: npt.ArrayLike, y: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> MonotoneMap:
    """The least-squares non-decreasing fit of ``y`` on ``x`` (pool-adjacent-violators); equal ``x`` are
    pooled first, so the knots' x are distinct."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ws = np.ones_like(xs) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = ~(np.isnan(xs) | np.isnan(ys)) & (ws > 0)
    xs, ys, ws = xs[keep], ys[keep], ws[keep]
    if xs.size == 0:
        raise ValueError("an isotonic map needs at least one (x, y) pair")
    unique, inverse = np.unique(xs, return_inverse=True)
    w = np.bincount(inverse, weights=ws)
    v = np.bincount(inverse, weights=ws * ys) / w
    blocks: list[list[float]] = []  # [value, weight, count]
    for value, weight in zip(v, w, strict=True):
        blocks.append([float(value), float(weight), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (v2, w2, c2), (v1, w1, c1) = blocks.pop(), blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    fitted = np.repeat([b[0] for b in blocks], [int(b[2]) for b in blocks])
    return MonotoneMap(tuple(float(u) for u in unique), tuple(float(f) for f in fitted))


class PanelScores(NamedTuple):
    """The panel as matrices: rows are models, columns questions (NaN: not judged)."""

    candidate: FloatArray
    """The candidate judge's per-item scores in [0, 1], model's side."""
    retired: FloatArray
    """The retired judge's per-item scores on the same items; a row of NaN where only its published
    score is known (then ``published`` is used for that model)."""
    published: FloatArray
    """Each model's published score on the retired judge's scale (0-100)."""


def _row_means(matrix: FloatArray, weights: FloatArray) -> FloatArray:
    """Per model: the weighted mean of its judged items, times 100."""
    judged = ~np.isnan(matrix)
    w = weights[None, :] * judged
    with np.errstate(invalid="ignore", divide="ignore"):
        means: FloatArray = 100.0 * np.where(judged, matrix, 0.0).dot(weights) / w.sum(axis=1)
    return means


def panel_targets(panel: PanelScores, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(candidate score, retired score) per model under question ``weights``: the retired judge's score
    on the same items where its verdicts exist, else its published score."""
    cand = _row_means(panel.candidate, weights)
    masked = np.where(np.isnan(panel.candidate), np.nan, panel.retired)
    retired = _row_means(masked, weights)
    retired = np.where(np.isnan(retired), panel.published, retired)
    return cand, retired


@dataclass(frozen=True)
class LeaderboardFit:
    """The leaderboard-level figures and the map, with their bootstrap replicates."""

    candidate: FloatArray
    retired: FloatArray
    spearman: Interval
    kendall: Interval
    mean_abs_difference: float
    """Mean |candidate - retired| over the panel's models, raw (before the map)."""
    rank_displacement: IntArray
    """Per model: its rank under the candidate minus its rank under the retired judge (1 = best)."""
    map: MonotoneMap
    replicates: tuple[MonotoneMap, ...]
    loo_abs_error: FloatArray
    """Per model: |map fitted without it (x) - retired score|: how well the map carries a model it has
    not seen, the figure a held-out model's anchored score stands on."""


def _rank_best_first(values: FloatArray) -> FloatArray:
    return ranks(-values)


def fit_leaderboard(
    panel: PanelScores, *, n_bootstrap: int = 500, seed: int = 0, level: float = 0.95
) -> LeaderboardFit:
    """Rank agreement with bootstrap intervals (questions resampled), and the re-anchoring map with
    replicates refitted on panels resampled by models and questions."""
    n_models, n_questions = panel.candidate.shape
    cand, retired = panel_targets(panel, np.ones(n_questions))
    rng = np.random.default_rng(seed)
    rhos, taus, maps = [], [], []
    for _ in range(n_bootstrap):
        weights = rng.multinomial(n_questions, np.full(n_questions, 1.0 / n_questions)).astype(np.float64)
        c_b, r_b = panel_targets(panel, weights)
        rhos.append(spearman(c_b, r_b))
        taus.append(kendall(c_b, r_b))
        models = rng.integers(0, n_models, size=n_models)
        maps.append(isotonic_map(c_b[models], r_b[models]))
    loo = np.array(
        [
            abs(float(isotonic_map(np.delete(cand, i), np.delete(retired, i))(cand[i])) - retired[i])
            for i in range(n_models)
        ]
    )
    displacement = (_rank_best_first(cand) - _rank_best_first(retired)).astype(np.int64)
    return LeaderboardFit(
        candidate=cand,
        retired=retired,
        spearman=Interval(spearman(cand, retired), *_quantiles(np.array(rhos), level)),
        kendall=Interval(kendall(cand, retired), *_quantiles(np.array(taus), level)),
        mean_abs_difference=float(np.nanmean(np.abs(cand - retired))),
        rank_displacement=displacement,
        map=isotonic_map(cand, retired),
        replicates=tuple(maps),
        loo_abs_error=loo,
    )


def anchor_score(
    score: float,
    standard_error: float,
    point: MonotoneMap,
    replicates: Sequence[MonotoneMap],
    *,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """A score on the candidate's scale carried to the retired judge's: the point map at ``score``, and an
    interval from the map's replicates each read at the score redrawn from its own sampling error, so
    both the run's and the map's uncertainty are in it."""
    estimate = float(point(score))
    if not replicates:
        return Interval(estimate, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    spread = 0.0 if math.isnan(standard_error) else standard_error
    draws = score + spread * rng.standard_normal(len(replicates))
    values = np.array([float(m(x)) for m, x in zip(replicates, draws, strict=True)])
    return Interval(estimate, *_quantiles(values, level))


def chose_longer(scores: npt.ArrayLike, model_longer: npt.ArrayLike) -> float:
    """Among decisive items whose two outputs differ in length, the share where the judge chose the longer
    output (``model_longer``: 1 where the model's output is the longer, -1 where the baseline's, 0 same)."""
    d, longer = decisions(scores), np.asarray(model_longer, dtype=np.float64)
    keep = ~np.isnan(d) & (d != 0) & (longer != 0)
    if not keep.any():
        return math.nan
    return float(np.mean(d[keep] == longer[keep]))
