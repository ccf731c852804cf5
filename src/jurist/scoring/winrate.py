"""The weighted win rate against the baseline (Arena-Hard v2's headline) and the ratings.json document.

Groups battle records into arrays for the pure ``ratings`` code; ``jurist run`` and ``jurist show`` both
score through here, so a run's ratings.json and a re-scored one agree to the digit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from jurist.scoring.common import OUTCOME


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
    of all entries (Arena-Hard). The baseline is listed at 50.
    """
    import numpy as np

    from jurist.ratings.winrate import win_rate_from_entries

    # Per question, the weighted sum of P(model wins) and the total weight as one complex number (its real
    # and imaginary parts add as two floats would): one object a question, not a list and two floats,
    # which held 8 MB at 50k questions at the peak of a run (scoring).
    sums: dict[tuple[str, str], dict[str, complex]] = defaultdict(lambda: defaultdict(complex))
    seen_baselines: dict[str, set[str]] = defaultdict(set)
    for battle in battles:
        a, b = battle["model_a"], battle["model_b"]
        if b in baselines and a not in baselines:
            model, baseline, p_model = a, b, OUTCOME[battle["winner"]]
        elif a in baselines and b not in baselines:
            model, baseline, p_model = b, a, 1.0 - OUTCOME[battle["winner"]]
        else:
            continue
        judge = battle.get("judge", "")
        weight = float(battle.get("weight", 1))
        sums[(judge, model)][battle["uid"]] += complex(p_model * weight, weight)
        seen_baselines[judge].add(baseline)
    invalid = invalid or {}
    rows: list[dict[str, Any]] = []
    for (judge, model), per_question in sorted(sums.items()):
        totals = np.fromiter(per_question.values(), dtype=np.complex128, count=len(per_question))
        result = win_rate_from_entries(
            totals.real, totals.imag, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level
        )
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
                    "n": 0,
                    "invalid": 0,
                    "baseline": True,
                }
            )
    for (judge, model), count in invalid.items():
        if (judge, model) not in sums and count:
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
