"""Agreement between judges: pure functions, arrays in and numbers out (numpy, plus scipy for ranks).

Missing verdicts (None, or NaN in float arrays) are dropped pairwise: an item counts only when both judges
gave a label, because a failed call says nothing about whether the judges would have agreed.

Degenerate kappa: when chance agreement is 1 (both judges used one and the same label for every item),
kappa is 0/0. We return 1.0 there, since observed agreement is then perfect too, rather than NaN as
sklearn does; with no comparable items every statistic is NaN.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

FIVE_LABELS: tuple[str, ...] = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
"""Arena-Hard's verdict scale, ordered from strongly-A to strongly-B (the order weighted kappa uses)."""
THREE_LABELS: tuple[str, ...] = ("A", "tie", "B")
"""The direction-only scale: which response won, or a tie."""

_FIVE_TO_THREE = {"A>>B": "A", "A>B": "A", "A=B": "tie", "B>A": "B", "B>>A": "B"}
_THREE = {"A": "A", "tie": "tie", "B": "B"}

Weights = Literal["linear", "quadratic"] | None
LabelsLike = npt.ArrayLike | Sequence[Hashable | None]
"""One label per item: strings, numbers or a numpy array; None (or NaN) marks a missing verdict."""


class RankCorrelation(NamedTuple):
    """Spearman rho and Kendall tau-b between two leaderboards, with two-sided p-values."""

    spearman: float
    spearman_p: float
    kendall: float
    kendall_p: float
    n: int


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _paired(a: LabelsLike, b: LabelsLike) -> tuple[list[Hashable], list[Hashable]]:
    """Both label sequences as lists, keeping positions where neither is missing."""
    left = np.asarray(a, dtype=object).ravel().tolist()
    right = np.asarray(b, dtype=object).ravel().tolist()
    if len(left) != len(right):
        raise ValueError(f"label arrays differ in length: {len(left)} vs {len(right)}")
    kept = [(x, y) for x, y in zip(left, right, strict=True) if not _is_missing(x) and not _is_missing(y)]
    return [x for x, _ in kept], [y for _, y in kept]


def agreement_rate(a: LabelsLike, b: LabelsLike) -> float:
    """Share (0..1) of items on which two judges gave the same label; NaN with no comparable items."""
    left, right = _paired(a, b)
    if not left:
        return math.nan
    return sum(x == y for x, y in zip(left, right, strict=True)) / len(left)


def confusion_matrix(
    a: LabelsLike, b: LabelsLike, labels: Sequence[Hashable] | None = None
) -> tuple[npt.NDArray[np.float64], list[Hashable]]:
    """Counts ``m[i, j]`` of items judge a labelled ``labels[i]`` and judge b ``labels[j]``.

    ``labels`` fixes the category order (required for weighted kappa); without it the sorted union of the
    observed labels is used. A label outside ``labels`` raises ``ValueError``.
    """
    left, right = _paired(a, b)
    if labels is None:
        cats: list[Hashable] = sorted(set(left) | set(right), key=repr)
    else:
        cats = list(labels)
    index = {label: i for i, label in enumerate(cats)}
    if len(index) != len(cats):
        raise ValueError("labels contain duplicates")
    matrix = np.zeros((len(cats), len(cats)), dtype=np.float64)
    for x, y in zip(left, right, strict=True):
        if x not in index or y not in index:
            raise ValueError(f"label {x if x not in index else y!r} is not one of {cats}")
        matrix[index[x], index[y]] += 1.0
    return matrix, cats


def cohen_kappa(
    a: LabelsLike, b: LabelsLike, *, labels: Sequence[Hashable] | None = None, weights: Weights = None
) -> float:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), optionally linearly or quadratically weighted.

    Weighted kappa treats ``labels`` as ordered and penalises a disagreement by its distance
    (|i-j| or (i-j)^2, scaled to 0..1); unweighted kappa counts every disagreement equally.
    """
    matrix, cats = confusion_matrix(a, b, labels)
    total = matrix.sum()
    if total == 0:
        return math.nan
    k = len(cats)
    if weights is None:
        disagreement = 1.0 - np.eye(k)
    elif weights in ("linear", "quadratic"):
        if labels is None:
            raise ValueError("weighted kappa needs an explicit ordered labels= sequence")
        grid = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
        disagreement = grid if weights == "linear" else grid**2
        disagreement = disagreement / max(float(disagreement.max()), 1.0)
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    observed = matrix / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    expected_disagreement = float((disagreement * expected).sum())
    observed_disagreement = float((disagreement * observed).sum())
    if expected_disagreement <= 1e-15:
        # Chance alone would agree perfectly: both judges used one shared label, so they also agree.
        return 1.0
    return 1.0 - observed_disagreement / expected_disagreement


def collapse_five_to_three(labels: LabelsLike) -> npt.NDArray[np.object_]:
    """Map A>>B/A>B -> "A", A=B -> "tie", B>A/B>>A -> "B"; three-way labels and missing pass through."""
    values = np.asarray(labels, dtype=object)
    flat = values.ravel().tolist()
    out: list[object] = []
    for value in flat:
        if _is_missing(value):
            out.append(None)
        elif value in _FIVE_TO_THREE:
            out.append(_FIVE_TO_THREE[value])
        elif value in _THREE:
            out.append(value)
        else:
            raise ValueError(f"unknown verdict {value!r}; expected one of {FIVE_LABELS} or {THREE_LABELS}")
    result = np.empty(len(out), dtype=object)
    result[:] = out
    return result.reshape(values.shape)


def kappa_five(a: LabelsLike, b: LabelsLike, *, weights: Weights = None) -> float:
    """Kappa on the five-level scale A>>B .. B>>A (pass weights for an ordinal, distance-aware version)."""
    return cohen_kappa(a, b, labels=FIVE_LABELS, weights=weights)


def kappa_three(a: LabelsLike, b: LabelsLike) -> float:
    """Kappa on the A / tie / B scale; five-level verdicts are collapsed first, so strength is ignored."""
    return cohen_kappa(collapse_five_to_three(a), collapse_five_to_three(b), labels=THREE_LABELS)


def rank_correlation(scores_a: npt.ArrayLike, scores_b: npt.ArrayLike) -> RankCorrelation:
    """How similarly two judges rank the same models: ``scores_x[i]`` is model i's score under judge x.

    Models with a NaN score in either leaderboard are dropped. Fewer than two models, or a leaderboard
    where every model ties, gives NaN (a ranking that does not vary cannot correlate).
    """
    from scipy import stats

    left = np.asarray(scores_a, dtype=np.float64).ravel()
    right = np.asarray(scores_b, dtype=np.float64).ravel()
    if left.shape != right.shape:
        raise ValueError(f"leaderboards differ in length: {left.size} vs {right.size}")
    keep = ~(np.isnan(left) | np.isnan(right))
    left, right = left[keep], right[keep]
    n = int(left.size)
    if n < 2 or np.all(left == left[0]) or np.all(right == right[0]):
        return RankCorrelation(math.nan, math.nan, math.nan, math.nan, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho, rho_p = stats.spearmanr(left, right)
        tau, tau_p = stats.kendalltau(left, right)
    return RankCorrelation(float(rho), float(rho_p), float(tau), float(tau_p), n)


def align_leaderboards(
    a: Mapping[str, float], b: Mapping[str, float]
) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The models both leaderboards score (sorted), with their scores as aligned arrays."""
    names = sorted(set(a) & set(b))
    return (
        names,
        np.array([a[m] for m in names], dtype=np.float64),
        np.array([b[m] for m in names], dtype=np.float64),
    )


def ensemble_mean(scores: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> npt.NDArray[np.float64]:
    """Combine judges by averaging: ``scores[j, i]`` is judge j's score for item i; returns one per item.

    NaN (a judge's failure) is left out of that item's mean, and the remaining weights renormalise; an
    item no judge scored stays NaN. ``weights`` (one per judge, non-negative) default to equal.
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2:
        raise ValueError(f"scores must be 2-D (judges x items), got shape {matrix.shape}")
    w = np.ones(matrix.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape[0] != matrix.shape[0] or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite, non-negative and one per judge")
    present = ~np.isnan(matrix)
    mass = (w[:, None] * present).sum(axis=0)
    total = (w[:, None] * np.where(present, matrix, 0.0)).sum(axis=0)
    out = np.full(matrix.shape[1], np.nan)
    np.divide(total, mass, out=out, where=mass > 0)
    return out
