"""jurist's IFEval checkers against the reference evaluator's own output on the GPT-4 demo, row by row.

The expected rows (shared/data/ifeval/expected_gpt4/) were made by google-research's evaluator with
``random.seed(0)`` and ``langdetect.DetectorFactory.seed = 0``; see SOURCE.md there.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from jurist.rules.evaluate import InstructionResult, check_response
from jurist.rules.ifeval_checks import IFEVAL, IFEVAL_IDS
from jurist.rules.ifeval_words import frequency_letter

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ifeval"
EXPECTED = DATA / "expected_gpt4"

# Upstream's LetterFrequencyChecker replaces a letter outside a..z ("#" at row 19, "!" at row 22) with
# random.choice(string.ascii_letters), a fresh draw for each of its strict and loose passes: the expected
# outcome is one of 52 draws from the global random state, not a property of the response. jurist draws
# from a generator seeded by the given letter instead, so these two instructions cannot be compared.
RANDOM_LETTER = {(19, "keywords:letter_frequency"), (22, "keywords:letter_frequency")}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def gpt4() -> dict[str, Any]:
    """Inputs, responses, the reference's rows, and jurist's results with their wall time (one pass)."""
    inputs = _jsonl(DATA / "input_data_gpt4_20231107_145030.jsonl")
    responses = _jsonl(DATA / "input_response_data_gpt4_20231107_145030.jsonl")
    assert [r["prompt"] for r in responses] == [row["prompt"] for row in inputs]
    check_response(IFEVAL, "warm up the tokenizer and langdetect", ["language:response_language"], [{}], "")
    start = time.perf_counter()
    results = [
        check_response(IFEVAL, answer["response"], row["instruction_id_list"], row["kwargs"], row["prompt"])
        for row, answer in zip(inputs, responses, strict=True)
    ]
    seconds = time.perf_counter() - start
    return {
        "inputs": inputs,
        "responses": responses,
        "results": results,
        "seconds": seconds,
        "strict": _jsonl(EXPECTED / "eval_results_strict.jsonl"),
        "loose": _jsonl(EXPECTED / "eval_results_loose.jsonl"),
        "summary": json.loads((EXPECTED / "expected_summary.json").read_text(encoding="utf-8")),
    }


def test_the_registry_holds_the_25_reference_ids() -> None:
    from jurist.rules.registry import checkers

    assert len(IFEVAL) == 25 and set(IFEVAL) == IFEVAL_IDS
    assert dict(checkers("ifeval")) == dict(IFEVAL)


def test_every_row_matches_the_reference_strict_and_loose(gpt4: dict[str, Any]) -> None:
    """Per-instruction strict and loose lists equal the reference's, except the two random letters."""
    mismatches = []
    for index, (row, results) in enumerate(zip(gpt4["inputs"], gpt4["results"], strict=True)):
        assert [r.instruction_id for r in results] == row["instruction_id_list"]
        for mode in ("strict", "loose"):
            expected = gpt4[mode][index]
            assert expected["prompt"] == row["prompt"]
            for position, result in enumerate(results):
                if (index, result.instruction_id) in RANDOM_LETTER:
                    continue
                got = getattr(result, mode)
                if got != expected["follow_instruction_list"][position]:
                    mismatches.append((index, row["key"], mode, result.instruction_id, got, result.error))
    assert mismatches == []
    assert all(r.error is None for results in gpt4["results"] for r in results)


def _with_reference_letters(gpt4: dict[str, Any], mode: str) -> list[list[bool]]:
    """jurist's outcomes, with the reference's own outcome put in place of the two random-letter ones."""
    table = []
    for index, results in enumerate(gpt4["results"]):
        expected = gpt4[mode][index]["follow_instruction_list"]
        table.append(
            [
                expected[p] if (index, r.instruction_id) in RANDOM_LETTER else getattr(r, mode)
                for p, r in enumerate(results)
            ]
        )
    return table


@pytest.mark.parametrize(
    ("mode", "prompts", "instructions"), [("strict", 417, 698), ("loose", 431, 714)], ids=["strict", "loose"]
)
def test_totals_and_per_id_counts_are_the_reference_figures(
    gpt4: dict[str, Any], mode: str, prompts: int, instructions: int
) -> None:
    table = _with_reference_letters(gpt4, mode)
    assert len(table) == 541 and sum(len(row) for row in table) == 834
    assert sum(all(row) for row in table) == prompts
    assert sum(sum(row) for row in table) == instructions
    correct: Counter[str] = Counter()
    for row, results in zip(table, gpt4["results"], strict=True):
        correct.update(r.instruction_id for r, followed in zip(results, row, strict=True) if followed)
    per_id = gpt4["summary"][mode]["per_instruction_id"]
    assert {key: correct[key] for key in per_id} == {key: v["correct"] for key, v in per_id.items()}


def test_the_random_letter_rows_are_reproducible(gpt4: dict[str, Any]) -> None:
    """jurist's seeded stand-ins: "#" counts "k" (0 in row 19's answer, 4 wanted: not followed; the
    reference drew a followed letter there) and "!" counts "a" (38 in row 22's, 6 wanted: followed)."""
    inputs = gpt4["inputs"]
    assert inputs[19]["kwargs"][1]["letter"] == "#" and inputs[22]["kwargs"][0]["letter"] == "!"
    assert (frequency_letter("#"), frequency_letter("!")) == ("k", "a")
    row19: InstructionResult = gpt4["results"][19][1]
    row22: InstructionResult = gpt4["results"][22][0]
    assert (row19.strict, row19.loose, row22.strict, row22.loose) == (False, False, True, True)
    strict_prompts = sum(all(r.strict for r in results) for results in gpt4["results"])
    loose_instructions = sum(r.loose for results in gpt4["results"] for r in results)
    assert (strict_prompts, loose_instructions) == (416, 713)  # inside the reference's unseeded range


def test_strict_only_checks_give_the_strict_outcomes_and_no_loose_ones(gpt4: dict[str, Any]) -> None:
    """``loose=False`` (a reward server counting strict): the same strict outcome and error for every
    instruction of the 541 answers, and no loose outcome (None: not computed)."""
    for row, answer, both in zip(gpt4["inputs"], gpt4["responses"], gpt4["results"], strict=True):
        args = (IFEVAL, answer["response"], row["instruction_id_list"], row["kwargs"], row["prompt"])
        strict = check_response(*args, loose=False)
        assert [(r.instruction_id, r.strict, r.loose) for r in strict] == [
            (r.instruction_id, r.strict, None) for r in both
        ]
        for only, full in zip(strict, both, strict=True):
            assert only.error is None or only.error == full.error


def test_time_per_answer_is_reported(gpt4: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Strict plus loose for all 541 answers, first pass (regex caches cold) and a second one (printed,
    not asserted: machines differ)."""
    start = time.perf_counter()
    for row, answer in zip(gpt4["inputs"], gpt4["responses"], strict=True):
        check_response(IFEVAL, answer["response"], row["instruction_id_list"], row["kwargs"], row["prompt"])
    again = time.perf_counter() - start
    first, warm = (1000 * seconds / len(gpt4["inputs"]) for seconds in (gpt4["seconds"], again))
    with capsys.disabled():
        print(f"\nIFEval strict + loose, 541 GPT-4 answers: {first:.2f} ms per answer, {warm:.2f} warm")
