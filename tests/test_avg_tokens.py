"""The ``avg tokens`` column: each row's mean over the answers (every sample once) to the questions its
judge scored, read from the run's answer index or, without one, from the answers file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.families.pairwise.tokens import TokenLengths, add_avg_tokens
from jurist.ratings import Battle, Row
from jurist.store.line_index import AnswerIndex
from jurist.store.run_dir import RunDir


def answers_file(path: Path) -> None:
    """q0..q3 with two samples each; q3's sample 1 was written twice (the later record counts)."""
    rows = []
    for i in range(4):
        for sample in (0, 1):
            rows.append(
                {"uid": f"q{i}", "sample": sample, "answer": "x", "metadata": {"token_len": 10 * i + sample}}
            )
    rows.append({"uid": "q3", "sample": 1, "answer": "x", "metadata": {"token_len": 99}})
    rows.append({"uid": "q4", "sample": 0, "answer": "hello world"})  # no token_len: counted (2 tokens)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def battles(model: str, uids: list[str], judge: str = "j") -> list[Battle]:
    return [Battle(uid=uid, model_a="base", model_b=model, judge=judge) for uid in uids]  # type: ignore[typeddict-item]


def test_rows_average_the_samples_of_the_questions_they_score(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    answers_file(run.answers("m"))
    expected = {
        ("j", "some"): (0 + 1 + 20 + 21) / 4,  # q0 and q2
        ("k", "all"): (0 + 1 + 10 + 11 + 20 + 21 + 30 + 99 + 2) / 9,  # q3 sample 1 once, as rewritten
    }
    for indexes in (None, {"m": AnswerIndex(run.answers("m"))}):
        lengths = TokenLengths(run, [], indexes)
        rows: list[Row] = [{"model": "m", "judge": "j"}, {"model": "m", "judge": "k"}]  # type: ignore[typeddict-item]
        add_avg_tokens(
            rows, battles("m", ["q0", "q2"]) + battles("m", [f"q{i}" for i in range(5)], "k"), lengths
        )
        assert rows[0]["avg_tokens"] == round(expected[("j", "some")], 1)
        assert rows[1]["avg_tokens"] == round(expected[("k", "all")], 1)


def test_a_model_with_no_answers_has_no_average(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    rows: list[Row] = [{"model": "ghost", "judge": "j"}]  # type: ignore[typeddict-item]
    add_avg_tokens(rows, battles("ghost", ["q0"]), TokenLengths(run, []))
    assert rows[0]["avg_tokens"] is None


def test_without_the_tokenizer_uncounted_answers_are_left_out_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurist.tokens as tokens

    def no_ranks(text: str) -> int:
        raise RuntimeError("no offline copy of the o200k_base token ranks")

    monkeypatch.setattr(tokens, "count_tokens", no_ranks)
    run = RunDir(tmp_path / "run")
    answers_file(run.answers("m"))
    answers_file(run.answers("n"))
    notes: list[str] = []
    lengths = TokenLengths(run, notes)
    rows: list[Row] = [{"model": "m", "judge": "j"}, {"model": "n", "judge": "j"}]  # type: ignore[typeddict-item]
    add_avg_tokens(rows, battles("m", ["q3", "q4"]) + battles("n", ["q4"]), lengths)
    assert rows[0]["avg_tokens"] == round((30 + 99) / 2, 1)  # q4 has no stored length: left out
    assert rows[1]["avg_tokens"] is None
    assert len(notes) == 1 and notes[0].startswith("avg_tokens left out for answers without stored token_len")
