"""A re-ask sends the first reply back cut like the stored ``raw`` (head and tail), never 20 MB whole."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import write_models_file
from jurist.config import ModelSpec
from jurist.engine.wire.transport import Completion
from jurist.judging.pairwise import RAW_KEEP, cap_raw, judge_game, reask_context
from jurist.judging.protocols import jurist_pairwise_protocol
from jurist.run.pipeline import RunResult
from jurist.store.jsonl import read_jsonl
from mock_openai import MockOpenAI

RUNAWAY = "Let me think again about both answers. " * 540_000  # ~20 MB, and no verdict anywhere


class ScriptedJudge:
    """Replies from a script and keeps every message list it was sent."""

    def __init__(self, replies: list[str]) -> None:
        self.spec = ModelSpec(alias="judge", model="judge")
        self.replies = list(replies)
        self.sent: list[list[dict[str, Any]]] = []

    async def complete(self, messages: list[dict[str, Any]], **_: Any) -> Completion:
        self.sent.append(messages)
        return Completion(self.replies.pop(0), None, 10, 10, 0.0, 1)


def test_a_runaway_first_reply_goes_back_cut_to_head_and_tail() -> None:
    assert len(RUNAWAY) > 20_000_000
    judge = ScriptedJudge([RUNAWAY, "My final verdict is [[B>A]]"])
    game = asyncio.run(
        judge_game(judge, jurist_pairwise_protocol(), "Why is the sky blue?", "Rayleigh.", "Mie.")  # type: ignore[arg-type]
    )
    assert game["label"] == "B>A" and len(judge.sent) == 2
    sent_back = judge.sent[1][-2]
    assert sent_back["role"] == "assistant"
    text = sent_back["content"]
    assert len(text) < 2 * RAW_KEEP + 100  # not 20 MB
    assert text.startswith(RUNAWAY[:RAW_KEEP]) and text.endswith(RUNAWAY[-RAW_KEEP:])
    assert f"[... {len(RUNAWAY) - 2 * RAW_KEEP} characters cut by jurist ...]" in text
    # What went back is exactly what the judgment keeps, with the reply's true length beside it.
    assert game["raw"] == text and game["raw_chars"] == len(RUNAWAY)


def test_an_ordinary_reply_goes_back_whole() -> None:
    """A reply short enough to be stored whole is resent whole: re-asks (and their cache keys) unchanged."""
    reply = "Both have merits. " * 1000
    assert reask_context(reply) == reply == cap_raw(reply)[0]
    judge = ScriptedJudge([reply, "[[A=B]]"])
    asyncio.run(judge_game(judge, jurist_pairwise_protocol(), "q", "a", "b"))  # type: ignore[arg-type]
    assert judge.sent[1][-2]["content"] == reply


def test_a_run_whose_judge_runs_away_resends_little(
    tmp_path: Path, mock_server: Callable[..., MockOpenAI], run_quiet: Callable[..., RunResult]
) -> None:
    """End to end against the mock: one game's first reply is 3 MB without a verdict; its re-ask carries
    the capped text, and the judgment stands."""
    prompt = "Explain tides in one sentence."
    questions = tmp_path / "question.jsonl"
    questions.write_text(f'{{"uid": "q1", "prompt": "{prompt}"}}\n')
    # Only a judge prompt holds the candidate's answer "[strong] <prompt>": the answer request is spared.
    server = mock_server(faults={f"[strong] {prompt}": ["runaway"]}, runaway_chars=3_000_000)
    aliases: dict[str, dict[str, Any]] = {"strong": {}, "base": {}, "judge-good": {}}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, aliases)
    result = run_quiet(
        bench=str(questions), models_file=models, models=["strong"], judges=["judge-good"],
        baseline="base", out=tmp_path / "r",
    )  # fmt: skip
    assert result.exit_code == 0
    reasks = [body for body in server.stats.bodies if len(body["messages"]) > 2]
    assert len(reasks) == 1
    assert len(reasks[0]["messages"][-2]["content"]) < 2 * RAW_KEEP + 100
    (judgment,) = read_jsonl(tmp_path / "r" / "judgments" / "judge-good" / "strong.jsonl")
    game = next(g for g in judgment["games"] if "reask_raw" in g)
    assert game["raw_chars"] == 3_000_000 and game["label"] is not None and not judgment["invalid"]
