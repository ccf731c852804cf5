"""Judgments of two judge prompts in one file: the judge kind's key tells them apart, so switching back
finds the first prompt's judgments and scores them, not the other prompt's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def scored_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> tuple[dict[str, Any], Any]:
    """A finished judged run (6 questions, one model, one judge): its arguments and result."""
    from conftest import write_models_file

    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args: dict[str, Any] = {"models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    args |= {"out": tmp_path / "run", "limit": 6, "n_bootstrap": 20}
    first = run_quiet(**args)
    assert first.exit_code == 0
    return args, first


def test_a_judge_prompt_switched_back_finds_its_own_judgments_and_scores_them_again(
    scored_run: tuple[dict[str, Any], Any], run_quiet: Any, tmp_path: Path
) -> None:
    """Judgments of two judge prompts in one file: switching back to the first sends nothing, and its
    judgments are the ones scored, not the other prompt's."""
    args, first = scored_run
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("[system]\nBe fair.\n[user]\n{question}\nA: {answer_a}\nB: {answer_b}\nVerdict?\n")
    other = run_quiet(**args, judge_prompt=prompt)
    assert other.requests > 0  # the mock judge's verdicts do not parse with this prompt: no matter
    back = run_quiet(**args)
    assert back.exit_code == 0 and back.requests == 0
    assert back.leaderboard == first.leaderboard
