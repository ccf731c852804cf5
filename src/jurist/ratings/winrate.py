"""Weighted win rate against a single baseline, with a seeded bootstrap CI.

Arena-Hard's headline score: every judged game contributes "P(model beats baseline)" entries (a strong
verdict contributes ``weight`` identical entries, a tie 0.5); the score is the mean of all entries.
Bootstrapping resamples whole questions (the default, so the 3x duplicated entries of a strong verdict stay
together) or individual entries (Arena-Hard's own ``groupby(model).sample`` behaviour).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from jurist.ratings._shared import multinomial_draws


class WinRate(NamedTuple):
    """A win rate in percent with its bootstrap interval."""

    score: float
    ci_low: float
    ci_high: float
    n: int


def win_rate_from_entries(
    question_sums: npt.ArrayLike,
    question_counts: npt.ArrayLike,
    *,
    n_bootstrap: int = 100,
    seed: int = 0,
    ci_level: float = 0.90,
    resample: Literal["questions", "entries"] = "questions",
    entries: npt.ArrayLike | None = None,
) -> WinRate:
    """Score = 100 * sum(entries) / count(entries), CI from bootstrap quantiles.

    ``question_sums[q]`` is the sum of question q's entries and ``question_counts[q]`` their number.
    With ``resample="entries"`` the flat ``entries`` array is resampled instead (Arena-Hard's row bootstrap).
    """
    sums = np.asarray(question_sums, dtype=np.float64)
    counts = np.asarray(question_counts, dtype=np.float64)
    n_questions = int(sums.shape[0])
    if n_questions == 0 or counts.sum() <= 0:
        return WinRate(float("nan"), float("nan"), float("nan"), 0)
    score = 100.0 * float(sums.sum() / counts.sum())
    if n_bootstrap <= 0:
        return WinRate(score, score, score, n_questions)
    rng = np.random.default_rng(seed)
    if resample == "questions":
        # Multinomial draw counts per question: the same distribution as resampling question indices
        # with replacement, without materialising an (n_bootstrap x n_questions) index matrix of draws.
        boot = np.concatenate(
            [
                100.0 * (draws @ sums) / np.maximum(draws @ counts, 1e-300)
                for draws in multinomial_draws(rng, n_questions, n_bootstrap)
            ]
        )
    else:
        if entries is None:
            raise ValueError("resample='entries' needs the flat entries array")
        flat = np.asarray(entries, dtype=np.float64)
        size = flat.shape[0]
        blocks = multinomial_draws(rng, size, n_bootstrap)
        boot = np.concatenate([100.0 * (draws @ flat) / size for draws in blocks])
    tail = (1.0 - ci_level) / 2.0
    low, high = np.quantile(boot, [tail, 1.0 - tail])
    return WinRate(score, float(low), float(high), n_questions)


def row_bootstrap_intervals(
    groups: npt.ArrayLike, p_model: npt.ArrayLike, n_groups: int, *, rounds: int = 100, seed: int = 42,
    ci_level: float = 0.95,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:  # fmt: skip
    """Arena-Hard v0.1's interval (its ``show_result.py``), drawn as upstream draws it: each round takes
    ``len(rows)`` rows of the whole battles table with replacement from NumPy's legacy generator seeded
    once (``np.random.seed(42)``, then pandas' ``sample(frac=1, replace=True)``, i.e. ``choice(n, n)``),
    and rates each group (a model against the one baseline) by its win rate there, on the Elo scale (what
    upstream's Bradley-Terry fit gives against one baseline); the interval is the ratings' percentiles,
    back on the win-rate scale in percent. ``groups[i]`` is row i's group, -1 for a row that counts for
    no group (the baseline against itself: drawn, as upstream draws it, but scoring nothing);
    ``p_model[i]`` is 1, 0.5 or 0 as the group's model won, tied or lost. Returns (low, high) per group."""
    group = np.asarray(groups, dtype=np.int64)
    won = np.asarray(p_model, dtype=np.float64)
    legacy = np.random.RandomState(seed)  # randint(0, n, n) is what upstream's choice(n, n) draws
    elo = np.empty((rounds, n_groups))
    for r in range(rounds):
        drawn: npt.NDArray[np.int64] = np.asarray(legacy.randint(0, group.shape[0], size=group.shape[0]))
        counted = drawn[group[drawn] >= 0]
        wins = np.bincount(group[counted], weights=won[counted], minlength=n_groups)
        games = np.bincount(group[counted], minlength=n_groups)
        rate = np.clip(wins / np.maximum(games, 1), 1e-12, 1.0 - 1e-12)
        elo[r] = 400.0 * np.log10(rate / (1.0 - rate))
    tail = 100.0 * (1.0 - ci_level) / 2.0
    low, high = np.percentile(elo, [tail, 100.0 - tail], axis=0)
    return 100.0 / (1.0 + 10.0 ** (-low / 400.0)), 100.0 / (1.0 + 10.0 ** (-high / 400.0))
