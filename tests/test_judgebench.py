"""JudgeBench loading and the exact two-game metric, checked against upstream's recomputed numbers."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurist.benchmarks.judgebench import (
    Decision,
    Pair,
    load_pairs,
    normalize_decision,
    score_decisions,
    source_group,
    unswap,
)
from jurist.errors import InputError
from jurist.interop.judgebench import score_stored_outputs
from jurist.ratings import game_points, pair_points

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "judgebench"
OUTPUTS = DATA / "outputs"
needs_data = pytest.mark.skipif(not OUTPUTS.is_dir(), reason="shared JudgeBench fixtures not present")

# SOURCE.md "Recomputed scores": knowledge / reasoning / math / coding / overall.
EXPECTED = {
    "arena_hard:o1-mini-2024-09-12": (58.44, 62.24, 82.14, 78.57, 65.71),
    "reward_model:internlm/internlm2-20b-reward": (62.34, 69.39, 66.07, 50.00, 63.43),
    "reward_model:Skywork/Skywork-Reward-Gemma-2-27B": (59.74, 66.33, 83.93, 50.00, 64.29),
    "reward_model:Skywork/Skywork-Reward-Llama-3.1-8B": (59.09, 64.29, 76.79, 50.00, 62.29),
    "reward_model:internlm/internlm2-7b-reward": (56.49, 61.22, 71.43, 50.00, 59.43),
}


def _record(pair_id: str = "p1", **overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "pair_id": pair_id,
        "original_id": 7,
        "source": "mmlu-pro-law",
        "question": "q",
        "response_model": "m",
        "response_A": "a",
        "response_B": "b",
        "label": "A>B",
    }
    record.update(overrides)
    return record


def _pair(pair_id: str, source: str, label: str) -> Pair:
    return Pair(pair_id, None, source, "q", "m", "a", "b", label)  # type: ignore[arg-type]


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------- stored outputs


@needs_data
def test_stored_outputs_match_recomputed_upstream_numbers() -> None:
    scores = {s.judge: s for s in score_stored_outputs(OUTPUTS)}
    assert set(scores) == set(EXPECTED)
    for judge, expected in EXPECTED.items():
        s = scores[judge]
        got = tuple(round(x, 2) for x in (s.knowledge, s.reasoning, s.math, s.coding, s.overall))
        assert got == expected, judge
        assert s.n == 350 and s.failed == 0 and s.response_model == "gpt-4o-2024-05-13"


@needs_data
def test_o1_mini_consistency_matches_upstream_inconsistent_count() -> None:
    # Reference B5: d1 != d2 (after un-swapping) in 110 of 350 pairs, and no game failed.
    (score,) = score_stored_outputs(next(OUTPUTS.glob("*o1-mini*.jsonl.gz")))
    assert score.consistency == pytest.approx(100 * 240 / 350)


@needs_data
def test_not_unswapping_game_two_breaks_the_numbers() -> None:
    # Guard: a reward model scores each response alone, so its swapped game says the opposite letter.
    # Scoring game 2 without un-swapping must therefore destroy accuracy; score_decisions with
    # game2_order="as_shown" must reproduce the stored-output score.
    path = next(OUTPUTS.glob("*internlm2-20b*.jsonl.gz"))
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    pairs = [_pair(r["pair_id"], r["source"], r["label"]) for r in rows]
    raw = [tuple(j["decision"] for j in r["judgments"]) for r in rows]
    right = score_decisions(pairs, raw, judge="x")
    assert round(right.overall, 2) == 63.43 and right.consistency == 100.0
    wrong = score_decisions(pairs, raw, judge="x", game2_order="unswapped")
    assert wrong.overall == 0.0 and wrong.consistency == 0.0


@needs_data
def test_load_both_splits_counts() -> None:
    gpt = load_pairs("gpt", data_dir=DATA)
    claude = load_pairs(DATA / "data" / "dataset=judgebench,response_model=claude-3-5-sonnet-20240620.jsonl")
    for pairs, n, groups, a_first in (
        (gpt, 350, {"knowledge": 154, "reasoning": 98, "math": 56, "coding": 42}, 193),
        (claude, 270, {"knowledge": 154, "reasoning": 51, "math": 34, "coding": 31}, 143),
    ):
        assert len(pairs) == n
        assert {g: sum(p.group == g for p in pairs) for g in groups} == groups
        assert sum(p.label == "A>B" for p in pairs) == a_first
    assert all(p.original_id is None for p in gpt if p.group != "knowledge")
    assert all(isinstance(p.original_id, int) for p in gpt if p.group == "knowledge")


def test_stored_outputs_jsonl_and_null_judgments(tmp_path: Path) -> None:
    def row(pid: str, label: str, j1: object, j2: object) -> dict[str, Any]:
        return {**_record(pid, label=label), "judge_name": "arena_hard", "judgments": [j1, j2]}

    def entry(decision: str | None) -> dict[str, Any]:
        return {"judgment": {"judge_model": "org/judge"}, "decision": decision}

    out = tmp_path / "outputs"
    out.mkdir()
    _write(
        out / "dataset=judgebench,response_model=m,judge_name=arena_hard,judge_model=org_judge.jsonl",
        [
            row("1", "A>B", entry("A>>B"), entry("B>A")),  # right, right -> correct, consistent
            row("2", "A>B", entry("A>B"), entry("A>B")),  # right, wrong -> s=0, inconsistent
            row("3", "B>A", entry("B>A"), None),  # right, failed -> correct, inconsistent
            row("4", "B>A", None, None),  # both failed, no judge_model on the line
            row("5", "B>A", entry("A=B"), entry("A=B")),  # tie, tie -> s=0, consistent
        ],
    )
    (score,) = score_stored_outputs(out)
    assert score.judge == "arena_hard:org/judge"
    assert score.n == 5 and score.failed == 3
    assert score.overall == pytest.approx(40.0) and score.knowledge == pytest.approx(40.0)
    assert math.isnan(score.reasoning)
    assert score.consistency == pytest.approx(40.0)


def test_stored_outputs_single_game(tmp_path: Path) -> None:
    rows = [
        {**_record("1"), "judge_name": "rm", "judgments": [{"decision": "A>B"}]},
        {**_record("2", label="B>A"), "judge_name": "rm", "judgments": [{"decision": "A>B"}]},
    ]
    (score,) = score_stored_outputs(_write(tmp_path / "x,judge_model=foo.jsonl", rows))
    assert score.judge == "rm:foo" and score.overall == 50.0 and math.isnan(score.consistency)


def test_stored_outputs_bad_decision_names_line_and_field(tmp_path: Path) -> None:
    rows = [{**_record("1"), "judge_name": "j", "judgments": [{"decision": "A>B"}, {"decision": "maybe"}]}]
    with pytest.raises(InputError, match=r"line 1, field 'judgments\[1\].decision'"):
        score_stored_outputs(_write(tmp_path / "o.jsonl", rows))


# ---------------------------------------------------------------------------------------------- metric rule


def test_unswap_and_points() -> None:
    assert (
        unswap("A>B") == "B>A" and unswap("B>A") == "A>B" and unswap("A=B") == "A=B" and unswap(None) is None
    )
    assert normalize_decision("B>>A") == "B>A"
    assert [game_points(d, "A>B") for d in ("A>B", "B>A", "A=B", None)] == [1, -1, 0, 0]
    assert pair_points("B>A", ["B>A", None]) == 1
    assert pair_points("B>A", ["B>A", "A>B"]) == 0


def test_position_biased_and_consistent_random_judges() -> None:
    rng = np.random.default_rng(1)
    labels = rng.choice(["A>B", "B>A"], size=400)
    pairs = [_pair(str(i), "livebench-math", lab) for i, lab in enumerate(labels)]
    # Always prefers whatever is shown first: right in exactly one order, so every pair sums to 0.
    assert score_decisions(pairs, [("A>B", "A>B")] * len(pairs)).overall == 0.0
    assert score_decisions(pairs, [("A>B", "A>B")] * len(pairs)).consistency == 0.0
    # One coin flip per pair, reported consistently in both orders: exactly the coin's hit rate.
    coin: list[Decision] = list(rng.choice(["A>B", "B>A"], size=400))
    consistent = {p.pair_id: (c, unswap(c)) for p, c in zip(pairs, coin, strict=True)}
    hits = 100 * float(np.mean([c == lab for c, lab in zip(coin, labels, strict=True)]))
    scored = score_decisions(pairs, consistent)
    assert scored.overall == pytest.approx(hits) and scored.math == pytest.approx(hits)
    assert scored.consistency == 100.0


@pytest.mark.parametrize(
    ("p_right", "p_wrong", "p_tie", "p_fail"), [(0.7, 0.3, 0.0, 0.0), (0.6, 0.2, 0.15, 0.05)]
)
def test_simulated_judge_matches_closed_form(
    p_right: float, p_wrong: float, p_tie: float, p_fail: float
) -> None:
    """Independent games: P(correct) = P(s>0) = r^2 + 2 r (t+f); P(consistent) = r^2 + w^2 + t^2."""
    n = 60_000
    rng = np.random.default_rng(20250101)
    sources = np.array(["mmlu-pro-law", "livebench-reasoning", "livebench-math", "livecodebench"])
    labels = rng.choice(["A>B", "B>A"], size=n)
    pairs = [_pair(str(i), sources[i % 4], lab) for i, lab in enumerate(labels)]
    outcome = rng.choice(4, size=(n, 2), p=[p_right, p_wrong, p_tie, p_fail])

    def verdict(code: int, label: str, swapped: bool) -> str | None:
        truth = unswap(label) if swapped else label  # type: ignore[arg-type]
        return [truth, unswap(truth), "A=B", None][code]  # type: ignore[arg-type]

    decisions = [
        (verdict(o[0], lab, False), verdict(o[1], lab, True))
        for o, lab in zip(outcome.tolist(), labels.tolist(), strict=True)
    ]
    score = score_decisions(pairs, decisions)
    expected = 100 * (p_right**2 + 2 * p_right * (p_tie + p_fail))
    sd = 100 * math.sqrt(expected / 100 * (1 - expected / 100) / n)
    assert abs(score.overall - expected) < 5 * sd
    for group in ("knowledge", "reasoning", "math", "coding"):
        assert abs(getattr(score, group) - expected) < 5 * 2 * sd
    consistent = 100 * (p_right**2 + p_wrong**2 + p_tie**2)
    assert abs(score.consistency - consistent) < 5 * 100 * math.sqrt(0.25 / n)
    assert abs(score.failed - 2 * n * p_fail) < 5 * math.sqrt(2 * n * p_fail * (1 - p_fail)) + 1e-9


def test_score_decisions_validates_shape() -> None:
    pairs = [_pair("1", "livecodebench", "A>B"), _pair("2", "livecodebench", "B>A")]
    with pytest.raises(ValueError, match="2 pairs"):
        score_decisions(pairs, [("A>B", "B>A")])
    with pytest.raises(ValueError, match="no decisions"):
        score_decisions(pairs, {"1": ("A>B", "B>A")})
    with pytest.raises(ValueError, match="mix single-game"):
        score_decisions(pairs, [("A>B",), ("A>B", "B>A")])
    with pytest.raises(ValueError, match="unknown decision"):
        score_decisions(pairs, [("A>B", "B>A"), ("yes", None)])


# ---------------------------------------------------------------------------------------------- loading


def test_source_group() -> None:
    assert source_group("mmlu-pro-law") == "knowledge"
    assert source_group("livebench-reasoning") == "reasoning"
    assert source_group("livebench-math") == "math"
    assert source_group("livecodebench") == "coding"
    with pytest.raises(ValueError):
        source_group("gsm8k")


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"label": "A=B"}, "label"),
        ({"source": "gsm8k"}, "source"),
        ({"original_id": "x"}, "original_id"),
        ({"response_B": 3}, "response_B"),
        ({"pair_id": ""}, "pair_id"),
    ],
)
def test_load_pairs_errors_name_file_line_field(tmp_path: Path, override: dict[str, Any], field: str) -> None:
    path = _write(tmp_path / "pairs.jsonl", [_record("ok"), {**_record("bad"), **override}])
    with pytest.raises(InputError, match=rf"pairs\.jsonl: line 2, field '{field}'"):
        load_pairs(path)


def test_load_pairs_missing_field_bad_json_and_duplicates(tmp_path: Path) -> None:
    record = _record()
    del record["question"]
    with pytest.raises(InputError, match="line 1, field 'question': missing"):
        load_pairs(_write(tmp_path / "a.jsonl", [record]))
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps(_record()) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match="b.jsonl: line 2: invalid JSON"):
        load_pairs(bad)
    with pytest.raises(InputError, match="duplicate of line 1"):
        load_pairs(_write(tmp_path / "c.jsonl", [_record("x"), _record("x")]))
    with pytest.raises(InputError, match="cannot open"):
        load_pairs(tmp_path / "missing.jsonl")


def test_load_pairs_gzip_and_types(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(_record("1")) + "\n\n" + json.dumps(_record("2", original_id=None)) + "\n")
    first, second = load_pairs(path)
    assert first == Pair("1", 7, "mmlu-pro-law", "q", "m", "a", "b", "A>B")
    assert second.original_id is None and second.group == "knowledge"
