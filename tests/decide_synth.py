"""Synthetic run directories of checkpoints with known strengths, for the paired-decision tests.

Each question q has a difficulty; a checkpoint of strength s wins each of its two games against the
baseline with probability sigmoid(s - difficulty_q), drawn from a seeded generator, so the true win rate
of every checkpoint is known and two checkpoints share each question's difficulty (what pairing gains).
The files are what a pairwise jurist run writes: run.json and battles.jsonl. :class:`StrengthJudge`
plays the same rule as a judge, live, for real sweeps of checkpoints served by the stand-in vLLM.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
from aiohttp import web

from mock_openai import MockOpenAI
from mock_verdicts import _ANSWER

JUDGE = "judge-synth"


def run_fields(name: str, model: str, n: int, *, judge: str = JUDGE, version: str = "1") -> dict[str, Any]:
    return {
        "status": "finished",
        "bench": name,
        "bench_name": name,
        "bench_info": {"version": version},
        "n_questions": n,
        "samples": 1,
        "models": [model],
        "baseline": "base",
        "baselines": ["base"],
        "judges": [judge],
        "judge_kind": "pairwise",
        "rule_suite": None,
        "protocols": {judge: "jurist-pairwise"},
        "judge_prompt": None,
        "judge_preset": None,
        "score_family": "pairwise",
        "scoring": {"metrics": ["winrate"]},
        "model_specs": {judge: {"model": judge, "temperature": 0.0}},
    }


def win_probabilities(strength: float, difficulty: np.ndarray[Any, np.dtype[np.float64]]) -> Any:
    return 1.0 / (1.0 + np.exp(-(strength - difficulty)))


def write_checkpoint(
    root: Path,
    model: str,
    strength: float,
    difficulty: np.ndarray[Any, np.dtype[np.float64]],
    seed: int,
    *,
    task: str = "synth",
    judge: str = JUDGE,
) -> Path:
    """A run directory of ``model`` judged against ``base`` in two games per question."""
    rng = np.random.default_rng(seed)
    p = win_probabilities(strength, difficulty)
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for q, p_q in enumerate(p):
        for game in range(2):
            won = bool(rng.random() < p_q)
            a, b = (model, "base") if game == 0 else ("base", model)
            winner = (
                ("model_a" if game == 0 else "model_b") if won else ("model_b" if game == 0 else "model_a")
            )
            lines.append(
                {"model_a": a, "model_b": b, "winner": winner, "weight": 1, "uid": f"q{q:04d}",
                 "sample": 0, "category": "c", "judge": judge, "source": "synth"}
            )  # fmt: skip
    (root / "battles.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    fields = run_fields(task, model, len(difficulty), judge=judge)
    (root / "run.json").write_text(json.dumps(fields), encoding="utf-8")
    return root


def true_win_rate(strength: float, difficulty: np.ndarray[Any, np.dtype[np.float64]]) -> float:
    """The checkpoint's expected win rate on these questions, in percent."""
    return 100.0 * float(np.mean(win_probabilities(strength, difficulty)))


STRENGTH_JUDGE = "judge-strengths"
_TAG = re.compile(r"^\[([^\] ]+)")
_QUESTION = re.compile(r"question (\d+)")


class StrengthJudge(MockOpenAI):
    """The mock server with one more judge, ``judge-strengths``, that follows known strengths: in a game
    of a checkpoint's answer (tagged ``[name ...]`` by its server) against the baseline's, the checkpoint
    wins with probability sigmoid(strengths[name] - difficulty[q]) for question ``question q``, by a draw
    seeded with the checkpoint, the question and the position (so a repeat and a resume agree). Every other
    model is answered as the mock answers it; ``stats.requests_by_model`` counts the judge's requests."""

    def __init__(
        self, strengths: dict[str, float], difficulty: np.ndarray[Any, np.dtype[np.float64]]
    ) -> None:
        super().__init__()
        self.strengths = strengths
        self.difficulty = difficulty

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        if model != STRENGTH_JUDGE:
            return super()._reply(model, messages, body)
        user = next(m["content"] for m in messages if m["role"] == "user")
        answers = dict(_ANSWER.findall(user))
        names = {side: _tag(text) for side, text in answers.items()}
        side = next(s for s, name in names.items() if name in self.strengths)
        question = int(_QUESTION.findall(user)[0])
        p = float(win_probabilities(self.strengths[names[side]], self.difficulty[question : question + 1])[0])
        won = random.Random(f"{names[side]}|{question}|{side}").random() < p
        label = ("A>B" if side == "A" else "B>A") if won else ("B>A" if side == "A" else "A>B")
        verdict = f"My final verdict is [[{label}]]"
        content = json.dumps({"verdict": label}) if body.get("response_format") else verdict
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        payload = {
            "id": "synth",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return web.json_response(payload)  # fmt: skip


def _tag(answer: str) -> str:
    """The name an answer is tagged with (``[step_100 from PATH] ...``: step_100)."""
    found = _TAG.match(answer.strip())
    return found.group(1) if found else ""


def synth_task(root: Path, n: int) -> tuple[str, str]:
    """A pairwise question file of ``n`` questions (``question q``) and the baseline's answers file, in
    ``root``; returns their names (relative: a sweep's task name is a folder name too)."""
    questions = [{"uid": f"q{q:03d}", "category": "c", "prompt": f"question {q}"} for q in range(n)]
    (root / "synth.jsonl").write_text("".join(json.dumps(row) + "\n" for row in questions))
    answers = [{"uid": f"q{q:03d}", "model": "base", "answer": f"[base] question {q}"} for q in range(n)]
    (root / "base.jsonl").write_text("".join(json.dumps(row) + "\n" for row in answers))
    return "synth.jsonl", "base.jsonl"
