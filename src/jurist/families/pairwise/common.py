"""What the pairwise methods share: battles seen from a baseline's side, per-judge scoring, the anchor
index, bootstrap designs and per-model rows.

Kept apart so that the methods (win rate, Bradley-Terry, style control, LC) read battles one way.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError
from jurist.ratings import OUTCOME, Battle, Row, r

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Oriented:
    """Battles seen from the non-baseline side: model, baseline, P(model wins), weight and uid columns.

    Battles between two baselines or two non-baselines are left out (they say nothing about a win rate
    against a baseline). Rows are sorted by (uid, sample, model, baseline, P, weight): style control's
    z-scored features and bootstrap, and LC's sums, then see the same rows in the same order whatever
    order the battles were written in.
    """

    def __init__(self, battles: list[Battle], baselines: set[str]) -> None:
        rows: list[tuple[str, int, str, str, float, float]] = []
        for battle in battles:
            a, b = battle["model_a"], battle["model_b"]
            p_a = OUTCOME[battle["winner"]]
            sample = battle.get("sample", 0)
            sample = sample if type(sample) is int else 0
            weight = float(battle.get("weight", 1))
            if b in baselines and a not in baselines:
                rows.append((str(battle["uid"]), sample, a, b, p_a, weight))
            elif a in baselines and b not in baselines:
                rows.append((str(battle["uid"]), sample, b, a, 1.0 - p_a, weight))
        rows.sort()
        self.uid: list[str] = [row[0] for row in rows]
        self.sample: list[int] = [row[1] for row in rows]
        """The model's answer's sample (the baseline answers once: its sample 0)."""
        self.model: list[str] = [row[2] for row in rows]
        self.baseline: list[str] = [row[3] for row in rows]
        self.p: list[float] = [row[4] for row in rows]
        self.weight: list[float] = [row[5] for row in rows]

    def __len__(self) -> int:
        return len(self.model)

    def counts(self, keep: list[int]) -> tuple[dict[str, int], dict[str, int]]:
        """Questions and battles per model (both sides) over the rows in ``keep``."""
        uids: dict[str, set[str]] = defaultdict(set)
        battles: dict[str, int] = defaultdict(int)
        for k in keep:
            for name in (self.model[k], self.baseline[k]):
                uids[name].add(self.uid[k])
                battles[name] += 1
        return {name: len(u) for name, u in uids.items()}, dict(battles)


def per_judge(battles: list[Battle], score: Callable[[list[Battle]], list[Row]]) -> list[Row]:
    """Score each judge's battles separately; rows carry the judge, sorted best first within a judge."""
    by_judge: dict[str, list[Battle]] = defaultdict(list)
    for battle in battles:
        by_judge[battle.get("judge", "")].append(battle)
    rows: list[Row] = []
    for judge in sorted(by_judge):
        for row in score(by_judge[judge]):
            rows.append({"model": row.pop("model"), "judge": judge, **row})
    key = "rating" if rows and "rating" in rows[0] else "score"
    rows.sort(key=lambda r: (r["judge"], -(r[key] if r[key] is not None else -math.inf)))
    return rows


def anchor(names: list[str], baselines: list[str]) -> int:
    """Index of the first baseline that has battles: the model every rating is measured against."""
    for baseline in baselines:
        if baseline in names:
            return names.index(baseline)
    raise JuristError(f"none of the baselines ({', '.join(baselines)}) has battles here; pass --baseline")


def explode(weights: npt.NDArray[np.float64]) -> npt.NDArray[np.int64] | None:
    """Row indices repeating each row ``weight`` times (Arena-Hard's exploded rows); None if not integral."""
    import numpy as np

    if not np.all(weights == np.round(weights)):
        return None
    return np.repeat(np.arange(weights.size), weights.astype(np.int64))


def bootstrap_design(
    columns: list[npt.NDArray[Any]], weights: npt.NDArray[np.float64], uids: list[str], resample: str
) -> tuple[list[npt.NDArray[Any]], npt.NDArray[np.float64] | None, npt.NDArray[Any] | None]:
    """Columns, weights and bootstrap clusters for the bootstrap unit.

    ``questions``: weighted rows resampled by question. ``entries``: each row repeated ``weight`` times and
    resampled row by row, as Arena-Hard's exploded rows (fractional weights stay weights).
    """
    import numpy as np

    if resample != "entries":
        return columns, weights, np.array(uids)
    rows = explode(weights)
    if rows is None:
        return columns, weights, None
    return [column[rows] for column in columns], None, None


def model_counts(battles: list[Battle]) -> tuple[dict[str, int], dict[str, int]]:
    """Questions and battles per model, either side."""
    uids: dict[str, set[str]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    for battle in battles:
        for side in ("model_a", "model_b"):
            uids[battle[side]].add(str(battle["uid"]))
            counts[battle[side]] += 1
    return {model: len(u) for model, u in uids.items()}, dict(counts)


def model_rows(
    names: list[str],
    baselines: list[str],
    columns: dict[str, Any],
    questions: dict[str, int],
    battles: dict[str, int],
) -> list[Row]:
    """One row per model: its numbers (``columns``: name -> values by model index), counts, baseline flag."""
    return [
        {
            "model": name,
            **{key: r(values[i]) for key, values in columns.items()},
            "n": questions.get(name, 0),
            "n_battles": battles.get(name, 0),
            **({"baseline": True} if name in baselines else {}),
        }
        for i, name in enumerate(names)
    ]
