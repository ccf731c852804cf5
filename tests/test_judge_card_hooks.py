"""The judge card's probe hook and its gold labels beyond JudgeBench.

A judge kind names its probes module in the registry (judging never imports the card): a kind registered
from outside with its probes is carded end to end like a built-in one; a kind that names none gets a note.
Gold agreement reads an LMArena calibration run's human votes and a question's ``gold_label`` (where
imported human annotations go), for the pairwise kind and the preference kind alike.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena_synth import build_arena, write_jsonl
from conftest import write_models_file
from jurist.audit import CARD_FILE
from jurist.audit.asking import Asker
from jurist.audit.card import ProbeResult
from jurist.audit.gold import gold_label, preference_gold
from jurist.audit.hooks import HOOK, Ask, KindProbes, ProbeContext
from jurist.audit.pairwise import PairwiseCard, gold_probe
from jurist.audit.probe_run import JudgeCardRun, request_sets
from jurist.audit.verdicts import Game, Preference, Verdicts
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question
from jurist.benchmarks.lmarena import SIDE_A, SIDE_B, benchmark_file
from jurist.benchmarks.registry import register as register_benchmark
from jurist.benchmarks.registry import unregister as unregister_benchmark
from jurist.config import ModelSpec
from jurist.judging import kinds
from jurist.judging.kinds import JudgeKindSetup, judge_kind_probes
from jurist.judging.pairwise import PairwiseJudge
from jurist.judging.pairwise import judge_kind as pairwise_kind
from jurist.ratings import ProbeInterval
from jurist.store.jsonl import read_jsonl
from jurist.store.run_dir import RunDir


# -- the hook ------------------------------------------------------------------------------------------------
def test_each_builtin_kind_names_a_probes_module_with_the_hook() -> None:
    assert {name: judge_kind_probes(name) for name in ("pairwise", "preference", "rubric")} == {
        "pairwise": "jurist.audit.pairwise",
        "preference": "jurist.audit.preference",
        "rubric": "jurist.audit.rubric",
    }
    for name in ("pairwise", "preference", "rubric"):
        module = importlib.import_module(str(judge_kind_probes(name)))
        assert callable(getattr(module, HOOK))
    assert judge_kind_probes("no-such-kind") is None


class ToyKind(PairwiseJudge):
    """A new judge kind: pairwise games under a name of its own, whose card measures verbosity only."""

    name = "toy-kind"


class ToyProbes(PairwiseCard):
    request_sets = (("verbosity",),)


def card_probes(kind: PairwiseJudge, context: ProbeContext) -> KindProbes:
    """This module is the toy kinds' probes module: the hook their registry lines name."""
    if kind.name == "overlap-kind":
        return OverlapProbes()
    return MergeProbes() if kind.name == "merge-kind" else ToyProbes(kind, context)


class MergeProbes:
    """Calibration read from gold labels (free) and measured against the swapped game (asked)."""

    request_sets = (("position", "calibration"),)

    def add(self, record: Mapping[str, Any]) -> int:
        return 100

    def free(self) -> list[ProbeResult]:
        return [ProbeResult("calibration", ProbeInterval(0.1, 0.05, 0.15, 20), extra={"against": "gold"})]

    def asks(self, asker: Asker, per_probe: int) -> dict[tuple[str, ...], Ask]:
        async def ask() -> list[ProbeResult]:
            swapped = {"against": "the swapped game"}
            return [
                ProbeResult("position", ProbeInterval(0.0, -0.05, 0.05, per_probe)),
                ProbeResult("calibration", ProbeInterval(0.3, 0.2, 0.4, per_probe), extra=swapped),
            ]

        return {("position", "calibration"): ask}


class OverlapProbes:
    """A free probe that tells whether the asked probe was already under way while it was worked out."""

    request_sets: Sequence[tuple[str, ...]] = (("verbosity",),)

    def __init__(self) -> None:
        self.asking = threading.Event()

    def add(self, record: Mapping[str, Any]) -> int:
        return 100

    def free(self) -> list[ProbeResult]:
        overlapped = self.asking.wait(timeout=5)  # the requests go out while this runs (in a thread)
        return [ProbeResult("position", note=f"asked meanwhile: {overlapped}")]

    def asks(self, asker: Asker, per_probe: int) -> dict[tuple[str, ...], Ask]:
        async def ask() -> list[ProbeResult]:
            self.asking.set()
            await asyncio.sleep(0.05)  # a reply's round trip
            return [ProbeResult("verbosity", ProbeInterval(0.0, -0.1, 0.1, per_probe))]

        return {("verbosity",): ask}


def _probed_card(kind_name: str) -> dict[str, Any]:
    """The card of one judge of a kind registered under ``kind_name`` with this module's probes."""
    kinds.register(kind_name, pairwise_kind, probes=__name__)
    try:
        kind = type("Kind", (PairwiseJudge,), {"name": kind_name})
        spec = ModelSpec(model="j", temperature=0.0)
        card = JudgeCardRun({"j": kind(pairwise_kind(_setup(spec)).protocol, spec)}, {}, seed=0, sample=None)
        card.add("j", {})
        client: Any = _Client()
        document: dict[str, Any] = asyncio.run(
            card.probe(lambda _: client, lambda _: lambda *a: None, lambda: False)
        )
        return document
    finally:
        kinds.unregister(kind_name)


def test_the_probes_read_from_the_runs_games_are_worked_out_while_the_requests_are_out() -> None:
    probes = _probed_card("overlap-kind")["judges"]["j"]["probes"]
    assert probes["position"]["note"] == "asked meanwhile: True"
    assert list(probes) == ["position", "verbosity"]  # the card's order: read ones first, then asked


def test_a_probe_read_from_gold_labels_is_kept_over_the_same_probe_asked() -> None:
    probes = _probed_card("merge-kind")["judges"]["j"]["probes"]
    assert probes["calibration"]["against"] == "gold" and probes["calibration"]["estimate"] == 0.1
    assert probes["position"]["n"] == 10  # the set was still asked, for position


def toy_kind(setup: JudgeKindSetup) -> ToyKind:
    built = pairwise_kind(setup)
    return ToyKind(built.protocol, setup.spec, strong_weight=setup.strong_weight)


@pytest.fixture
def toy_registered() -> Iterator[None]:
    def toy(options: BenchmarkOptions) -> Benchmark:
        questions = [Question(uid=f"toy-{i}", prompt=f"toy question {i}?") for i in range(50)]
        return Benchmark(
            name="toy-carded",
            questions=questions,
            shipped_answers={"toy-ref": {q.uid: f"reference answer {q.uid}" for q in questions}},
            baseline="toy-ref",
            judge_kind="toy-kind",
            judge_protocol="jurist-pairwise",
        )

    kinds.register("toy-kind", toy_kind, probes=__name__)
    register_benchmark("toy-carded", toy)
    yield
    kinds.unregister("toy-kind")
    unregister_benchmark("toy-carded")


def test_a_registered_kind_is_carded_by_the_probes_its_registry_line_names(
    toy_registered: None, tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    aliases = {"strong": {}, "judge-longer": {}}
    models = write_models_file(tmp_path / "models.yaml", server.base_url, aliases)
    run = {"bench": "toy-carded", "models_file": models, "models": ["strong"], "judges": ["judge-longer"]}
    result = run_quiet(**run, out=tmp_path / "run")
    assert result.exit_code == 0
    audit = json.loads((tmp_path / "run" / CARD_FILE).read_text())["judges"]["judge-longer"]
    assert audit["kind"] == "toy-kind" and audit["judge_requests"] == 100
    assert set(audit["probes"]) == {"position", "consistency", "verbosity"}  # its one request set
    assert audit["probe_requests"] == 10 == audit["probes"]["verbosity"]["n"]  # the whole tenth, one set
    assert audit["probes"]["verbosity"]["flagged"] and not audit["probes"]["position"]["flagged"]
    assert server.stats.requests_by_model["judge-longer"] == 110


def test_a_kind_that_names_no_probes_gets_a_card_with_a_note() -> None:
    kinds.register("probeless", pairwise_kind)
    try:

        class Probeless(PairwiseJudge):
            name = "probeless"

        spec = ModelSpec(model="j", temperature=0.0)
        kind = Probeless(pairwise_kind(_setup(spec)).protocol, spec)
        assert request_sets(kind, spec) == 0
        card = JudgeCardRun({"j": kind}, {}, seed=0, sample=None)
        card.add("j", _pairwise_record("q", baseline="base", won="m"))
        document = asyncio.run(card.probe(lambda _: _Client(), lambda _: lambda *a: None, lambda: False))  # type: ignore[arg-type, return-value]
    finally:
        kinds.unregister("probeless")
    audit = document["judges"]["j"]
    assert audit["probes"] == {} and audit["notes"] == [
        "judge kind 'probeless' declares no judge-card probes"
    ]


def test_request_sets_come_from_the_hook() -> None:
    warm, cold = ModelSpec(model="j", temperature=0.7), ModelSpec(model="j", temperature=0.0)
    kind = pairwise_kind(_setup(warm))
    assert (request_sets(kind, warm), request_sets(kind, cold)) == (3, 2)  # self-consistency left out at 0


class _Client:
    spec = ModelSpec(model="j", temperature=0.0)


def _setup(spec: ModelSpec) -> JudgeKindSetup:
    return JudgeKindSetup(spec, None, "jurist-pairwise", None, None)


def _pairwise_record(uid: str, *, baseline: str, won: str | None) -> dict[str, Any]:
    """Two games between ``m`` and ``baseline`` both naming ``won`` (None: both ties)."""
    games = []
    for number, (a, b) in enumerate(((baseline, "m"), ("m", baseline)), start=1):
        label = "A=B" if won is None else "A>B" if won == a else "B>A"
        games.append({"game": number, "a": a, "b": b, "label": label})
    return {"model": "m", "baseline": baseline, "uid": uid, "sample": 0, "games": games}


# -- gold labels ---------------------------------------------------------------------------------------------
def test_gold_labels_from_human_votes_and_annotations() -> None:
    vote = {"model_a": "x", "model_b": "y", "question_id": "q"}
    calibration_a = Question(uid="a", prompt="p", metadata={**vote, "human_winner": "model_a"})
    calibration_b = Question(uid="b", prompt="p", metadata={**vote, "human_winner": "model_b"})
    tie = Question(uid="t", prompt="p", metadata={**vote, "human_winner": "tie"})
    placement = Question(uid="p", prompt="p", metadata={**vote, "human_winner": "model_a", "opponent": "x"})
    annotated = Question(uid="g", prompt="p", metadata={"gold_label": "B>A"})
    found = [gold_label(q) for q in (calibration_a, calibration_b, tie, placement, annotated)]
    assert found == ["A>B", "B>A", None, None, "B>A"]


def test_pairwise_gold_agreement_on_human_votes_counts_by_judgebench_rule() -> None:
    questions = {
        f"q{i}": Question(
            uid=f"q{i}", prompt="p", metadata={"human_winner": "model_a" if i < 6 else "model_b"}
        )
        for i in range(10)
    }
    # q0-q5: the humans preferred side A (the baseline); the judge agrees on q0-q3, ties q4, disagrees q5;
    # q6-q9: side B preferred, the judge agrees on all four; one game each (a calibration run's)
    won = {
        **{f"q{i}": SIDE_A for i in range(4)},
        "q4": None,
        "q5": SIDE_B,
        **{f"q{i}": SIDE_B for i in range(6, 10)},
    }
    records = []
    for uid, winner in won.items():
        label = "A=B" if winner is None else "A>B" if winner == SIDE_A else "B>A"
        records.append(Verdicts(SIDE_B, SIDE_A, uid, 0, (Game(1, SIDE_A, SIDE_B, label),)))
    found = gold_probe(records, questions, seed=0)
    assert found is not None and found.interval is not None
    assert (found.interval.estimate, found.interval.n) == (0.8, 10)
    assert found.extra["against"] == "the human votes" and 0.0 < found.extra["kappa"] < 1.0


def test_preference_gold_agreement_and_calibration_against_annotations() -> None:
    # gold "B>A": the model's answer (shown as B in the pair's order) is better
    labels = ["B>A"] * 6 + ["A>B"] * 4
    questions = {
        f"q{i}": Question(uid=f"q{i}", prompt="p", metadata={"gold_label": lab})
        for i, lab in enumerate(labels)
    }
    p_model = [0.9, 0.8, 0.7, 0.6, 0.4, None, 0.1, 0.2, 0.5, 0.3]
    records = [Preference("m", "base", f"q{i}", 0, p) for i, p in enumerate(p_model)]
    gold, calibrated = preference_gold(records, questions, seed=0)
    assert gold.name == "gold_agreement" and gold.interval is not None
    # right: q0-q3 (model preferred, gold B>A), q6, q7, q9 (baseline preferred, gold A>B); q4 wrong, q5 no
    # verdict (wrong, as JudgeBench counts it), q8 a tie (wrong)
    assert (gold.interval.estimate, gold.interval.n) == (0.7, 10)
    assert gold.extra["against"] == "gold labels"
    outcomes = [1.0] * 5 + [0.0] * 4  # q5 has no probability: left out of calibration
    stated = [p for p in p_model if p is not None]
    brier = sum((p - y) ** 2 for p, y in zip(stated, outcomes, strict=True)) / len(stated)
    assert calibrated.name == "calibration" and calibrated.interval is not None
    assert calibrated.interval.estimate == pytest.approx(brier) and calibrated.interval.n == 9
    assert preference_gold(records, {}, seed=0) == []  # no labels: no gold probes


def test_an_arena_calibration_run_carries_gold_agreement_with_the_human_votes(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    arena = build_arena(n_models=30, n_battles=20_000, n_rare=3, seed=5)
    server = mock_server()
    models = write_models_file(tmp_path / "models.yaml", server.base_url, {"judge-p80": {}})
    bench_file = write_jsonl(arena, tmp_path / "arena.jsonl")
    options = {"calibration": "60"}
    out = tmp_path / "calibration"
    result = run_quiet(bench=str(bench_file), bench_options=dict(options), models_file=models, out=out,
                       judges=["judge-p80"])  # fmt: skip
    assert result.exit_code == 0
    gold = json.loads((out / CARD_FILE).read_text())["judges"]["judge-p80"]["probes"]["gold_agreement"]
    # the oracle: each judged game against the human vote of its question, in the pair's order
    human = {q.uid: q.metadata["human_winner"] for q in benchmark_file(bench_file, dict(options)).questions}
    right = 0
    for record in read_jsonl(RunDir(out).judgments("judge-p80", SIDE_B)):
        (game,) = record["games"]
        label = game.get("label")
        named = (
            None
            if label not in ("A>B", "A>>B", "B>A", "B>>A")
            else game["a"]
            if label[0] == "A"
            else game["b"]
        )
        right += named == (SIDE_A if human[record["uid"]] == "model_a" else SIDE_B)
    assert gold["n"] == 60 and gold["estimate"] == pytest.approx(right / 60, abs=1e-4)
    assert gold["against"] == "the human votes" and "kappa" in gold


# -- sweeps --------------------------------------------------------------------------------------------------
def test_a_card_summary_keeps_each_probe_and_its_judges_warnings(tmp_path: Path) -> None:
    from jurist.audit import write_card
    from jurist.run import card_summary

    assert card_summary(tmp_path) is None  # no card: nothing to keep
    probe = {"estimate": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 12, "threshold": 0.1, "flagged": True}
    unmeasured = {"estimate": None, "ci_low": None, "ci_high": None, "n": 0, "flagged": False, "note": "x"}
    write_card(tmp_path, {
        "schema": "jurist.judge_card/1", "seed": 0, "sample": 50,
        "judges": {"j-a": {"probes": {"verbosity": probe, "injection": unmeasured}},
                   "j-ab": {"probes": {}}},
        "warnings": ["j-a: verbosity bias +1.00 [1.00, 1.00] toward the longer answer"],
    })  # fmt: skip
    assert card_summary(tmp_path) == {
        "j-a": {
            "probes": {
                "verbosity": {"estimate": 1.0, "ci": [1.0, 1.0], "n": 12, "flagged": True},
                "injection": {"estimate": None, "ci": None, "n": 0, "flagged": False},
            },
            "warnings": ["j-a: verbosity bias +1.00 [1.00, 1.00] toward the longer answer"],
        },
        "j-ab": {"probes": {}, "warnings": []},  # a judge whose name starts like another's gets none of its
    }


def test_a_question_files_gold_labels_reach_the_card(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    """Human annotations carried as ``gold_label`` in a question file: gold agreement by JudgeBench's rule
    over the two stored games, as counted again here from the judgments."""
    server = mock_server()
    labels = {f"q{i}": "B>A" if i % 3 else "A>B" for i in range(12)}
    questions = tmp_path / "question.jsonl"
    questions.write_text("".join(json.dumps({"uid": u, "prompt": f"question {u}?", "gold_label": g}) + "\n"
                                 for u, g in labels.items()))  # fmt: skip
    aliases = {"strong": {}, "baseline": {}, "judge-good": {}}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, aliases)
    result = run_quiet(bench=str(questions), models_file=models, models=["strong"], baseline="baseline",
                       judges=["judge-good"], out=tmp_path / "run")  # fmt: skip
    assert result.exit_code == 0
    gold = json.loads((tmp_path / "run" / CARD_FILE).read_text())["judges"]["judge-good"]["probes"]
    right = 0
    for record in read_jsonl(RunDir(tmp_path / "run").judgments("judge-good", "strong")):
        better = "baseline" if labels[record["uid"]] == "A>B" else "strong"
        points = 0
        for game in record["games"]:
            label = game.get("label")
            if label in ("A>B", "A>>B", "B>A", "B>>A"):
                points += 1 if (game["a"] if label[0] == "A" else game["b"]) == better else -1
        right += points > 0
    found = gold["gold_agreement"]
    assert (found["n"], found["against"]) == (12, "gold labels")
    assert found["estimate"] == pytest.approx(right / 12, abs=1e-4) and 0 < right < 12
