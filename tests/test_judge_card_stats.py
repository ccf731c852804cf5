"""The judge card's statistics: intervals, JudgeBench gold agreement equal to JudgeBench's own accuracy on
the authors' stored judgments, calibration, and the flag rule of each direction."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from jurist.audit.card import ProbeResult
from jurist.audit.pairwise import calibration_probe, gold_probe, position_probes
from jurist.audit.verdicts import Game, Verdicts
from jurist.benchmarks.judgebench import Pair
from jurist.interop.judgebench import _output_files, _read_output_file, score_stored_outputs
from jurist.ratings import ProbeInterval, calibration, gold_agreement, mean_interval, pair_decision
from jurist.store.records import Question

OUTPUTS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "judgebench" / "outputs"


def test_mean_interval_is_seeded_and_resamples_clusters_whole() -> None:
    values = [1.0, 0.0] * 30
    first = mean_interval(values, seed=3)
    assert first == mean_interval(values, seed=3) and first.estimate == 0.5 and first.n == 60
    assert first.low < 0.5 < first.high
    paired = mean_interval(values, [n // 2 for n in range(60)], seed=3)  # each cluster holds a 1 and a 0
    assert paired.low == paired.high == 0.5
    assert math.isnan(mean_interval([]).estimate) and mean_interval([]).n == 0
    assert mean_interval([1.0] * 12) == ProbeInterval(1.0, 1.0, 1.0, 12)


def test_mean_interval_draws_its_rounds_in_blocks_equal_to_one_draw() -> None:
    """The card's 2,000 rounds over a run's 10k questions held 320 MB at once (the peak of a whole run);
    drawn a block at a time they hold a few MB, and the interval is the one all rounds at once give."""
    import tracemalloc

    from jurist.ratings._shared import ci_tails
    from jurist.ratings.probe_stats import CARD_LEVEL, CARD_ROUNDS

    rng = np.random.default_rng(11)
    values = rng.integers(0, 3, 20_000) * 0.5  # two games of 10k questions
    clusters = [n // 2 for n in range(20_000)]
    tracemalloc.start()
    found = mean_interval(values, clusters, seed=4)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MB at the peak"
    sums = values.reshape(-1, 2).sum(axis=1)
    draws = np.random.default_rng(4).multinomial(10_000, np.full(10_000, 1e-4), size=CARD_ROUNDS)
    drawn = draws.astype(np.float64)
    means = (drawn @ sums) / np.maximum(drawn @ np.full(10_000, 2.0), 1.0)
    low, high = np.quantile(means, ci_tails(CARD_LEVEL))
    assert (found.low, found.high) == (min(low, found.estimate), max(high, found.estimate))


def test_pair_decision_follows_judgebench_points() -> None:
    assert pair_decision("A>B", ["A>B", "A=B"]) == "A>B"
    assert pair_decision("A>B", ["A>B", "B>A"]) == "A=B"  # right then wrong: not right
    assert pair_decision("B>A", [None, "A>B"]) == "A>B"
    found = gold_agreement(["A>B", "B>A", "A>B"], [["A>B", "A>B"], ["A>B", "A>B"], ["A>B", None]])
    assert found.accuracy.estimate == pytest.approx(2 / 3) and -1.0 <= found.kappa <= 1.0


def _stored_judgments() -> dict[str, list[tuple[Pair, tuple[str | None, ...]]]]:
    found: dict[str, list[tuple[Pair, tuple[str | None, ...]]]] = defaultdict(list)
    for path in _output_files(OUTPUTS):
        for name, model, pair, games, _ in _read_output_file(path):
            found[f"{name}:{model}"].append((pair, games))
    return found


@pytest.mark.skipif(not OUTPUTS.is_dir(), reason="needs ../shared/data/judgebench/outputs")
def test_gold_agreement_equals_judgebench_accuracy_on_the_stored_outputs() -> None:
    expected = {score.judge: score for score in score_stored_outputs(OUTPUTS)}
    stored = _stored_judgments()
    assert set(stored) == set(expected) and len(stored) == 5
    for judge, judged in stored.items():
        questions = {
            pair.pair_id: Question(uid=pair.pair_id, prompt="", metadata={"pair": pair}) for pair, _ in judged
        }
        # as a jurist JudgeBench run stores them: response_A is the baseline, game 2 shows it second
        records = [
            Verdicts("response_B", "response_A", pair.pair_id, 0, (
                Game(1, "response_A", "response_B", games[0]),
                Game(2, "response_B", "response_A", games[1]),
            ))
            for pair, games in judged
        ]  # fmt: skip
        probe = gold_probe(records, questions, seed=0)
        assert probe is not None and probe.interval is not None
        assert probe.interval.n == expected[judge].n
        assert 100 * probe.interval.estimate == pytest.approx(expected[judge].overall, abs=1e-9), judge
        assert probe.interval.low <= probe.interval.estimate <= probe.interval.high
        assert -1.0 <= probe.extra["kappa"] <= 1.0


def _record(uid: str, first: str, second: str, p_first: float | None = None) -> Verdicts:
    return Verdicts("m", "base", uid, 0, (Game(1, "base", "m", first, p_first), Game(2, "m", "base", second)))


def test_calibration_against_the_swapped_game_and_brier() -> None:
    honest = [_record(str(n), "B>A", "A>B", 0.9) for n in range(20)]  # says 0.9 for m, and m wins game 2
    probe = calibration_probe(honest, {}, seed=0)
    assert probe is not None and probe.interval is not None and probe.extra["against"] == "the swapped game"
    assert probe.interval.estimate == pytest.approx(0.01) and not probe.flagged
    wrong = [_record(str(n), "B>A", "B>A", 0.95) for n in range(30)]  # sure of m; the swap says base
    flagged = calibration_probe(wrong, {}, seed=0)
    assert flagged is not None and flagged.flagged and flagged.extra["ece"] == pytest.approx(0.95)
    assert calibration_probe([_record("x", "A>B", "A>B")], {}, seed=0) is None  # no probabilities
    assert calibration(np.array([0.2, 0.8]), np.array([0.0, 1.0])).brier == pytest.approx(0.04)


def test_position_probes_from_two_games() -> None:
    always_a = [_record(str(n), "A>B", "A>B") for n in range(40)]
    position, consistency = position_probes(always_a, seed=0)
    assert position.interval is not None and position.interval.estimate == 0.5 and position.flagged
    assert consistency.interval is not None and consistency.interval.estimate == 0.0 and consistency.flagged
    assert position.warning("j") == "j: position bias +0.50 [0.50, 0.50] toward the first answer"


@pytest.mark.parametrize(
    ("name", "interval", "flagged"),
    [
        ("verbosity", ProbeInterval(0.3, 0.2, 0.4, 50), True),
        ("verbosity", ProbeInterval(-0.3, -0.4, -0.2, 50), True),
        ("verbosity", ProbeInterval(0.3, 0.05, 0.4, 50), False),  # the interval reaches the threshold
        ("injection", ProbeInterval(0.2, 0.11, 0.3, 50), True),
        ("self_consistency", ProbeInterval(0.6, 0.5, 0.79, 50), True),
        ("self_consistency", ProbeInterval(0.7, 0.5, 0.9, 50), False),
        ("position", ProbeInterval(0.5, 0.5, 0.5, 3), False),  # three games all in position A: too few
    ],
)
def test_flag_rule_per_direction(name: str, interval: ProbeInterval, flagged: bool) -> None:
    probe = ProbeResult(name, interval)
    assert probe.flagged is flagged
    if interval.n < 10:
        assert probe.beyond and "fewer than 10 items: not flagged" in probe.document()["note"]


def test_a_judgment_the_card_cannot_read_is_left_out_and_said() -> None:
    import asyncio

    from jurist.audit.probe_run import JudgeCardRun
    from jurist.config import ModelSpec
    from jurist.judging.pairwise import PairwiseJudge
    from jurist.judging.protocols import protocol_set

    spec = ModelSpec(model="j", temperature=0.0)
    protocol, _ = protocol_set("jurist-pairwise", spec, None, "jurist-pairwise")
    card = JudgeCardRun({"j": PairwiseJudge(protocol, spec)}, {}, seed=0, sample=None)
    card.add("j", {"uid": "q", "games": [{"label": "A>B"}]})  # an import with no model, baseline or sides
    card.add("j", _record_dict("q2"))

    class Client:
        spec = ModelSpec(model="j", temperature=0.0)

    document = asyncio.run(card.probe(lambda _: Client(), lambda _: lambda *a: None, lambda: False))  # type: ignore[arg-type, return-value]
    judge = document["judges"]["j"]
    assert judge["judge_requests"] == 2 and any("1 stored judgment(s)" in note for note in judge["notes"])


def _record_dict(uid: str) -> dict[str, object]:
    games = [
        {"game": 1, "a": "base", "b": "m", "label": "B>A"},
        {"game": 2, "a": "m", "b": "base", "label": "A>B"},
    ]
    return {"model": "m", "baseline": "base", "uid": uid, "sample": 0, "games": games}
