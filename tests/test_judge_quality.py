"""Judge quality has one definition of each measure (ratings/judge_quality.py): its oracles here, and the
run's sanity table, the judge card and JudgeBench's accuracy reading the same games to the same numbers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from jurist.audit.pairwise import position_probes
from jurist.audit.verdicts import Game, verdicts_of
from jurist.benchmarks import score_games
from jurist.judging import battles_from_judgment
from jurist.ratings import (
    first_position_rate,
    first_position_wins,
    game_points,
    judge_sanity,
    pair_decision,
    pair_points,
    swap_agreements,
    swap_consistency,
)

FIVE = ("A>>B", "A>B", "A=B", "B>A", "B>>A")


def test_first_position_wins_counts_decisive_games_only() -> None:
    wins = first_position_wins(["A>>B", "A>B", "B>A", "B>>A", "A=B", None])
    assert wins[:4].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert np.isnan(wins[4:]).all()
    assert first_position_rate(["A>B", "A>>B", "B>A", "A=B", None]) == pytest.approx(2 / 3)
    assert math.isnan(first_position_rate(["A=B", None]))


def test_swap_agreement_counts_a_tie_in_both_orders_and_no_missing_verdict() -> None:
    first = ["A>B", "A=B", "A>B", None, "B>A"]
    second = ["A>B", "A=B", "B>A", None, None]
    assert swap_agreements(first, second).tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert swap_consistency(first, second) == pytest.approx(0.4)
    assert math.isnan(swap_consistency([], []))
    with pytest.raises(ValueError, match="1 first games for 0"):
        swap_agreements(["A>B"], [])


@pytest.mark.parametrize("label", ["A>B", "B>A"])
def test_the_pair_rule_is_judgebench_table(label: str) -> None:
    """Upstream's rule written out: right+right, right+tie and right+failure count as right; right+wrong
    (a position bias), tie+tie, failure+failure and anything with a wrong game and no right one do not."""
    wrong = "B>A" if label == "A>B" else "A>B"
    right_pairs = [(label, label), (label, "A=B"), ("A=B", label), (label, None), (None, label)]
    not_right = [(label, wrong), (wrong, label), ("A=B", "A=B"), (None, None), (wrong, "A=B"), (wrong, wrong)]
    for games in right_pairs:
        assert pair_points(label, games) > 0 and pair_decision(label, games) == label
    for games in not_right:
        assert pair_points(label, games) <= 0 and pair_decision(label, games) != label
    assert pair_decision(label, (wrong, wrong)) == wrong
    assert pair_decision(label, (label, wrong)) == "A=B"
    assert [game_points(d, label) for d in (label, wrong, "A=B", None)] == [1, -1, 0, 0]


def test_a_game_in_the_pair_order_and_from_a_model() -> None:
    game = Game(1, "base", "m", "B>>A")
    assert game.decision("base") == "B>A" and game.decision("m") == "A>B"
    assert game.seen_from("m") == "A>>B" and game.seen_from("base") == "B>>A"
    assert game.seen_from("other") is None
    assert Game(2, "m", "base", "A=B").decision("base") == "A=B"
    assert Game(2, "m", "base", None).decision("base") is None


def _judged(n: int, seed: int) -> list[dict[str, Any]]:
    """Two swapped games a question (the baseline shown first, then the model), a judge leaning to A."""
    rng = np.random.default_rng(seed)
    records = []
    for k in range(n):
        one, two = (str(label) for label in rng.choice(FIVE, size=2, p=[0.15, 0.35, 0.15, 0.25, 0.1]))
        games = [
            {"game": 1, "a": "base", "b": "m", "label": one},
            {"game": 2, "a": "m", "b": "base", "label": two},
        ]
        records.append(
            {"uid": f"q{k}", "sample": 0, "judge": "j", "model": "m", "baseline": "base", "games": games}
        )
    return records


def test_sanity_card_and_judgebench_read_the_same_games_alike() -> None:
    records = _judged(80, seed=7)
    battles = [battle for record in records for battle in battles_from_judgment(record)]
    (row,) = judge_sanity(battles)
    verdicts = [verdicts_of(record) for record in records]
    position, consistency = position_probes(verdicts, seed=0)
    assert position.interval is not None and consistency.interval is not None
    shown = [game["label"] for record in records for game in record["games"]]
    decisive = [label for label in shown if label != "A=B"]
    by_hand_first = sum(label.startswith("A") for label in decisive) / len(decisive)
    winners = [[v.games[0].winner(), v.games[1].winner()] for v in verdicts]
    by_hand_same = sum(a == b for a, b in winners) / len(winners)
    assert row["first_position_rate"] == round(by_hand_first, 4)
    assert position.interval.estimate + 0.5 == pytest.approx(by_hand_first)
    assert row["consistency"] == round(by_hand_same, 4)
    assert consistency.interval.estimate == pytest.approx(by_hand_same)
    items = [("math", "A>B", tuple(game.decision("base") for game in v.games)) for v in verdicts]
    score = score_games("j", "m", items)
    assert score.consistency == pytest.approx(100 * by_hand_same)
    right = sum(pair_decision("A>B", games) == "A>B" for _, _, games in items)
    assert score.overall == pytest.approx(100 * right / len(items))
