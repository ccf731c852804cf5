"""The weighted win rate against the baseline (Arena-Hard v2's headline) and the ratings.json document.

Groups battle records into arrays for the pure ``ratings`` code; ``jurist run`` and ``jurist show`` both
score through here, so a run's ratings.json and a re-scored one agree to the digit.
"""

from __future__ import annotations

import array
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from jurist.ratings import OUTCOME

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]


def win_rate_leaderboard(
    battles: Iterable[dict[str, Any]],
    baselines: set[str],
    *,
    invalid: dict[tuple[str, str], int] | None = None,
    n_bootstrap: int = 100,
    seed: int = 0,
    ci_level: float = 0.90,
) -> list[dict[str, Any]]:
    """Weighted win rate of every (judge, model) against its baseline, with a question bootstrap.

    Each battle adds ``weight`` entries of P(model beats baseline) to its question; the score is the mean
    of all entries (Arena-Hard). The bootstrap resamples questions in sorted-uid order (:class:`_Entries`).
    The baseline is listed at 50, its ``n`` the questions judged against it (as BT and style control count).
    """
    from jurist.ratings import win_rate_from_entries

    columns = _Entries()
    seen_baselines: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for battle in battles:
        a, b = battle["model_a"], battle["model_b"]
        if b in baselines and a not in baselines:
            model, baseline, p_model = a, b, OUTCOME[battle["winner"]]
        elif a in baselines and b not in baselines:
            model, baseline, p_model = b, a, 1.0 - OUTCOME[battle["winner"]]
        else:
            continue
        judge = battle.get("judge", "")
        columns.add(judge, model, str(battle["uid"]), p_model, float(battle.get("weight", 1)))
        seen_baselines[judge][baseline].add(str(battle["uid"]))  # its n: the questions judged against it
    invalid = invalid or {}
    rows: list[dict[str, Any]] = []
    for (judge, model), (won, weight) in columns.per_question():
        result = win_rate_from_entries(won, weight, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)
        rows.append(
            {
                "model": model,
                "judge": judge,
                "score": round(result.score, 4),
                "ci_low": round(result.ci_low, 4),
                "ci_high": round(result.ci_high, 4),
                "n": result.n,
                "invalid": invalid.get((judge, model), 0),
            }
        )
    for judge, names in sorted(seen_baselines.items()):
        for name in sorted(names):
            rows.append(
                {
                    "model": name,
                    "judge": judge,
                    "score": 50.0,
                    "ci_low": 50.0,
                    "ci_high": 50.0,
                    "n": len(names[name]),  # as every other table counts a model's questions
                    "invalid": 0,
                    "baseline": True,
                }
            )
    scored = set(columns.groups)
    for (judge, model), count in invalid.items():
        if (judge, model) not in scored and count:
            rows.append(
                {
                    "model": model,
                    "judge": judge,
                    "score": None,
                    "ci_low": None,
                    "ci_high": None,
                    "n": 0,
                    "invalid": count,
                }
            )
    rows.sort(key=lambda r: (r["judge"], -(r["score"] if r["score"] is not None else -1.0)))
    return rows


class _Entries:
    """Battles seen from the non-baseline side, as columns (one entry a battle: its (judge, model) group,
    its question, P(model wins) x weight, and weight), summed per (group, question) by ``np.bincount``.

    Questions are numbered in sorted-uid order and the entries of one question are summed in a fixed
    order, so the per-question sums, and the bootstrap that resamples them, do not depend on the order in
    which the battles were written (answers and judgments arrive in completion order): a run and
    ``jurist show`` of it give the same interval. Columns of 8-byte numbers, not a dict per question.
    """

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], int] = {}
        self._uids: dict[str, int] = {}
        self._group = array.array("q")
        self._question = array.array("q")
        self._won = array.array("d")
        self._weight = array.array("d")

    def add(self, judge: str, model: str, uid: str, p_model: float, weight: float) -> None:
        self._group.append(self.groups.setdefault((judge, model), len(self.groups)))
        self._question.append(self._uids.setdefault(uid, len(self._uids)))
        self._won.append(p_model * weight)
        self._weight.append(weight)

    def per_question(self) -> Iterator[tuple[tuple[str, str], tuple[FloatArray, FloatArray]]]:
        """Per (judge, model), in sorted order: the weighted wins and the weight of each of its questions,
        the questions in sorted-uid order."""
        import numpy as np

        if not self.groups:
            return
        n_questions, names = len(self._uids), sorted(self.groups)
        question_rank = np.empty(n_questions, dtype=np.int64)
        question_rank[[self._uids[uid] for uid in sorted(self._uids)]] = np.arange(n_questions)
        group_rank = np.empty(len(names), dtype=np.int64)
        group_rank[[self.groups[name] for name in names]] = np.arange(len(names))
        key = (
            group_rank[np.frombuffer(self._group, dtype=np.int64)] * n_questions
            + question_rank[np.frombuffer(self._question, dtype=np.int64)]
        )
        won = np.frombuffer(self._won, dtype=np.float64)
        weight = np.frombuffer(self._weight, dtype=np.float64)
        order = np.lexsort((weight, won, key))  # a question's entries are always added in one order
        cells, cell_of_entry = np.unique(key[order], return_inverse=True)
        won_sums = np.bincount(cell_of_entry, weights=won[order]).astype(np.float64, copy=False)
        weight_sums = np.bincount(cell_of_entry, weights=weight[order]).astype(np.float64, copy=False)
        bounds = np.searchsorted(cells // n_questions, np.arange(len(names) + 1))
        for g, name in enumerate(names):
            yield name, (won_sums[bounds[g] : bounds[g + 1]], weight_sums[bounds[g] : bounds[g + 1]])


def ratings_document(
    rows: list[dict[str, Any]],
    *,
    method: str,
    seed: int,
    n_bootstrap: int,
    ci_level: float,
    battles: list[dict[str, Any]],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``ratings.json``: the scoring settings and, per (judge, model), score, CI and battle count.

    Everything needed to recompute it is in ``battles.jsonl`` plus these settings.
    """
    n_battles: dict[tuple[str, str], int] = defaultdict(int)
    for battle in battles:
        for side in ("model_a", "model_b"):
            n_battles[(battle.get("judge", ""), battle[side])] += 1
    models = [
        {
            "model": row["model"],
            "judge": row.get("judge", ""),
            "score": row.get("score"),
            "ci_low": row.get("ci_low"),
            "ci_high": row.get("ci_high"),
            "n_battles": n_battles.get((row.get("judge", ""), row["model"]), 0),
            **({"baseline": True} if row.get("baseline") else {}),
        }
        for row in rows
    ]
    return {
        "method": method,
        "seed": seed,
        "bootstrap_rounds": n_bootstrap,
        "ci_level": ci_level,
        **(extra or {}),
        "models": models,
    }
