"""Judge sanity: does a judge's verdict survive swapping the answers' positions?

Each question is judged twice, the second time with the answers swapped. A judge whose two verdicts
disagree, that favours whichever answer comes first, or that gives nearly one verdict to everything
produces scores that measure the judge rather than the models; these numbers say so next to every
pairwise leaderboard. Position bias and consistency are the judge card's own measures
(:mod:`jurist.ratings.judge_quality`), read here from the run's battles.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from jurist.ratings.battles import Battle, Row, r
from jurist.ratings.binomial import Alternative, binomial_p_value
from jurist.ratings.judge_quality import first_position_rate, swap_consistency

LABELS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
"""Verdicts relative to the positions shown to the judge (A is ``model_a``); ``>>`` is a strong one."""

_GameKey = tuple[str, Any, str, str]


def _label(battle: Battle) -> str:
    """The position-relative verdict of one game; weight above 1 marks a strong one."""
    winner = battle["winner"]
    if winner == "tie":
        return "A=B"
    strong = float(battle.get("weight", 1)) > 1
    if winner == "model_a":
        return "A>>B" if strong else "A>B"
    return "B>>A" if strong else "B>A"


def _decision(battle: Battle, first: str) -> str:
    """A game's verdict in its pair's own order (``first``'s answer as A), whatever position each answer
    was shown in, so the two swapped games of a question compare directly."""
    winner = battle["winner"]
    if winner == "tie":
        return "A=B"
    return "A>B" if str(battle[winner]) == first else "B>A"


def _key(battle: Battle) -> _GameKey:
    """The two games of one question share this: uid, sample and the unordered model pair."""
    a, b = battle["model_a"], battle["model_b"]
    low, high = (a, b) if a <= b else (b, a)
    return (str(battle["uid"]), battle.get("sample", 0), low, high)


def _not_swapped_pairs(games: dict[_GameKey, list[Battle]]) -> str | None:
    """Why a judge's battles cannot be checked for position bias (None when they can)."""
    if any(
        float(g.get("weight", 1)) != round(float(g.get("weight", 1))) for gs in games.values() for g in gs
    ):
        return "fractional weights (soft preferences, e.g. an AlpacaEval import): no position-swapped games"
    for pair in games.values():
        if len(pair) > 2 or (len(pair) == 2 and pair[0]["model_a"] != pair[1]["model_b"]):
            return "its battles are not pairs of position-swapped games"
    if not any(len(pair) == 2 for pair in games.values()):
        return "one game per question: no position-swapped pairs to compare"
    return None


def _games(games: dict[_GameKey, list[Battle]]) -> int:
    """How many judged games the battles hold: one battle a game, except a soft preference, which splits
    its one game into battles whose weights sum to 1 (AlpacaEval: a game per judge request), so the count
    matches the judge requests that made them."""
    battles = [battle for pair in games.values() for battle in pair]
    weights = [float(battle.get("weight", 1)) for battle in battles]
    if all(weight == round(weight) for weight in weights):
        return len(battles)
    return round(sum(weight for weight in weights))


def _row(judge: str, games: dict[_GameKey, list[Battle]]) -> Row:
    n_games = _games(games)
    row: Row = {
        "judge": judge,
        "consistency": None,
        "tie_rate": None,
        "first_position_rate": None,
        "label": None,
        "label_share": None,
        "n_questions": 0,
        "n_games": n_games,
        "n_decisive": 0,
        "note": _not_swapped_pairs(games),
    }
    if row["note"] is not None:
        return row
    shown = [_label(game) for pair in games.values() for game in pair]
    labels = Counter(shown)
    swapped = [(key[2], pair) for key, pair in games.items() if len(pair) == 2]
    consistency = swap_consistency(
        [_decision(pair[0], first) for first, pair in swapped],
        [_decision(pair[1], first) for first, pair in swapped],
    )
    first_rate = first_position_rate(shown)
    label, count = max(labels.items(), key=lambda item: (item[1], -LABELS.index(item[0])))
    row.update(
        consistency=r(consistency),
        tie_rate=r(labels["A=B"] / n_games),
        first_position_rate=None if math.isnan(first_rate) else r(first_rate),
        label=label,
        label_share=r(count / n_games),
        n_questions=len(swapped),
        n_decisive=n_games - labels["A=B"],
    )
    return row


def judge_sanity(battles: list[Battle]) -> list[Row]:
    """Per judge (battle field ``judge``): position consistency, tie rate, first-position wins and the most
    frequent verdict, from the two position-swapped games of each question. Judges whose battles are not
    such pairs get None values and a ``note`` saying why."""
    by_judge: dict[str, dict[_GameKey, list[Battle]]] = defaultdict(lambda: defaultdict(list))
    for battle in battles:
        by_judge[str(battle.get("judge", ""))][_key(battle)].append(battle)
    return [_row(judge, games) for judge, games in sorted(by_judge.items())]


ALPHA = 0.01
"""Significance level of the tests behind a warning: a fair judge is wrongly flagged once in a hundred."""


def _p_value(successes: int, n: int, null: float, alternative: Alternative) -> float:
    return binomial_p_value(successes, n, null, alternative)


def _beyond_chance(share: float, n: int, alpha: float = ALPHA) -> bool:
    """Whether ``share`` of ``n`` decisive games in one position is too lopsided for a fair coin: a
    binomial test, so 15 of 16 (p = 0.0005) warns while 4 of 5 (p = 0.38) does not."""
    return n > 0 and _p_value(round(share * n), n, 0.5, "two-sided") < alpha


def _position_warning(judge: str, row: Row) -> str | None:
    """Position bias, judged by a binomial test against a fair coin, so the sample size counts: a bias
    beyond chance is a warning; every decisive game in one position, on too few games to be sure (three
    or more), is said with its p-value rather than passed over."""
    first, decisive = row["first_position_rate"], row["n_decisive"]
    if first is None or 0.2 <= first <= 0.8:
        return None
    position, share = ("A", first) if first > 0.8 else ("B", 1.0 - first)
    if _beyond_chance(first, decisive):
        return (
            f"judge {judge} prefers position {position} in {share:.0%} of decisive games: its scores "
            "mostly reflect position bias, not quality"
        )
    if share == 1.0 and decisive >= 3:
        p = _p_value(decisive, decisive, 0.5, "two-sided")
        return (
            f"judge {judge} prefers position {position} in all {decisive} decisive games: too few games "
            f"to tell a bias from chance (binomial p = {p:.2g}), but its scores may reflect position, "
            "not quality"
        )
    return None


def sanity_warnings(rows: list[Row]) -> list[str]:
    """One plain sentence per degenerate judge (and way it is degenerate). Each is a one-sided binomial
    test at :data:`ALPHA` (a fair judge agrees with itself half the time or more, gives no label to more
    than 80% of games, and favours no position), so a handful of games warns only when it must."""
    warnings: list[str] = []
    for row in rows:
        if row["consistency"] is None:
            continue
        judge = row["judge"] or "(unnamed)"
        questions = row["n_questions"]
        agree = round(row["consistency"] * questions)
        if row["consistency"] < 0.5 and _p_value(agree, questions, 0.5, "less") < ALPHA:
            warnings.append(
                f"judge {judge} gives the same verdict to both answer orders for only "
                f"{row['consistency']:.0%} of questions: its verdicts change with the order more often "
                "than not, so they say little about quality"
            )
        position = _position_warning(judge, row)
        if position:
            warnings.append(position)
        games, share = row["n_games"], row["label_share"]
        if share > 0.8 and _p_value(round(share * games), games, 0.8, "greater") < ALPHA:
            warnings.append(
                f"judge {judge} answers {row['label']} in {share:.0%} of games: it barely tells "
                "the answers apart, so its scores carry little information"
            )
    return warnings
