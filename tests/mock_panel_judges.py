"""Mock judges of planted agreement with a retired judge, on the shared data's panels (127.0.0.1 only).

:class:`PanelJudges` is the mock OpenAI server (``mock_openai.MockOpenAI``) whose judges also answer

* AlpacaEval's logprob protocol (upstream's prompt from the shared data): one token with its top logprobs,
  P(m) and P(M) set so that jurist's reader gives back the planted preference;
  ``judge-mimic-NN`` gives the stored preference of the retired judge (``gpt-4-1106-preview``'s
  annotation of that very output) on NN% of the pairs and its mirror (``3 - preference``) on the rest,
  which pairs being drawn by a hash of the instruction and the output (so a flip is fixed per pair, as a
  real judge's disagreement is); ``judge-longer`` prefers the longer output, 0.9 to 0.1;
* Arena-Hard's pairwise prompt: ``judge-arena-mimic`` makes each answer beat the baseline's with the
  model's published v0.1 score as its probability (drawn per game by a hash), ``judge-longer`` (the base
  mock's) prefers the longer answer.

Every stored preference is read from ``../shared/data`` at test time, never copied.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from aiohttp import web

from mock_openai import MockOpenAI
from mock_verdicts import _ANSWER

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ALPACA = SHARED / "alpaca-eval"
ARENA = SHARED / "arena-hard"
ARENA_V01 = ARENA / "external/meltemi-ai__arena-hard-auto-english/data/arena-hard-v0.1"
_FIRST = '"model_identifier": "m",\n        "output": """'
_SECOND = '"model_identifier": "M",\n        "output": """'
_FIRST_END = '"""\n    },\n    {\n        "model_identifier": "M"'
_SECOND_END = '"""\n    }\n}'
_INSTRUCTION = '"instruction": """'
_INSTRUCTION_END = '""",\n}\n\n## Model Outputs'


def _key(*texts: str) -> str:
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()


def _unit(*texts: str) -> float:
    """A number in [0, 1) fixed by ``texts``."""
    return int(_key(*texts)[:12], 16) / float(16**12)


@functools.lru_cache(maxsize=1)
def alpaca_preferences() -> tuple[dict[str, float], dict[str, str]]:
    """(key(instruction, model output) -> stored preference, instruction -> reference output)."""
    stored: dict[str, float] = {}
    reference: dict[str, str] = {}
    for path in sorted((ALPACA / "results").glob("*/weighted_alpaca_eval_gpt4_turbo/annotations.json.gz")):
        for row in json.loads(gzip.decompress(path.read_bytes())):
            preference = row["preference"]
            stored[_key(row["instruction"], row["output_2"])] = 1.5 if preference == 0 else float(preference)
            reference[row["instruction"]] = row["output_1"]
    return stored, reference


def mimic_share(judge: str) -> float | None:
    """``judge-mimic-85`` -> 0.85; None for another judge."""
    if judge.startswith("judge-mimic-"):
        return int(judge.removeprefix("judge-mimic-")) / 100
    return None


def planted_preference(judge: str, instruction: str, model_output: str, reference_output: str) -> float:
    """The preference in [1, 2] (2: the model's output better) the mock judge ``judge`` gives."""
    if judge == "judge-longer":
        return 1.9 if len(model_output) > len(reference_output) else 1.1
    share = mimic_share(judge)
    stored, _ = alpaca_preferences()
    preference = stored.get(_key(instruction, model_output), 1.5)
    if share is not None and _unit(judge, instruction, model_output) >= share:
        return 3.0 - preference
    return preference


def _between(text: str, start: str, end: str, *, last: bool = False) -> str:
    begin = text.index(start) + len(start)
    stop = text.rindex(end) if last else text.index(end, begin)
    return text[begin:stop]


@functools.lru_cache(maxsize=1)
def arena_models() -> tuple[dict[str, str], dict[str, float]]:
    """(key of an answer's start -> its model, model -> published v0.1 score) of the shared v0.1 panel."""
    import csv

    owner: dict[str, str] = {}
    for path in sorted((ARENA_V01 / "model_answer").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            owner[_key(row["choices"][0]["turns"][0]["content"].strip()[:200])] = path.stem
    with (ARENA / "leaderboard" / "arena_hard_leaderboard_20240731.csv").open(encoding="utf-8") as handle:
        published = {row["model"]: float(row["score"]) for row in csv.DictReader(handle)}
    return owner, published


class PanelJudges(MockOpenAI):
    """The mock server with the planted judges of the module docstring."""

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        if _FIRST in user and (mimic_share(model) is not None or model == "judge-longer"):
            return self._alpaca(model, user)
        if model == "judge-arena-mimic" and "<|The Start of Assistant A's Answer|>" in user:
            return self._arena(model, user)
        return super()._reply(model, messages, body)

    def _alpaca(self, judge: str, user: str) -> web.Response:
        instruction = _between(user, _INSTRUCTION, _INSTRUCTION_END)
        first = _between(user, _FIRST, _FIRST_END)
        second = _between(user, _SECOND, _SECOND_END, last=True)
        _, reference = alpaca_preferences()
        model_first = reference.get(instruction) != first
        model_output, reference_output = (first, second) if model_first else (second, first)
        p_model = planted_preference(judge, instruction, model_output, reference_output) - 1.0
        p_first = min(max(p_model if model_first else 1.0 - p_model, 1e-9), 1.0 - 1e-9)
        top = [("m", math.log(p_first)), ("M", math.log(1.0 - p_first))]
        token = "m" if p_first >= 0.5 else "M"
        alternatives = [{"token": t, "logprob": v} for t, v in top]
        logprobs = {
            "content": [{"token": token, "logprob": max(v for _, v in top), "top_logprobs": alternatives}]
        }
        choice = {"index": 0, "message": {"role": "assistant", "content": token}, "finish_reason": "length"}
        payload = {
            "id": "mock",
            "object": "chat.completion",
            "model": judge,
            "choices": [{**choice, "logprobs": logprobs}],
            "usage": {
                "prompt_tokens": len(user) // 4,
                "completion_tokens": 1,
                "total_tokens": len(user) // 4 + 1,
            },
        }
        return web.json_response(payload)

    def _arena(self, judge: str, user: str) -> web.Response:
        answers = dict(_ANSWER.findall(user))
        owner, published = arena_models()
        sides = {pos: owner.get(_key(text.strip()[:200]), "") for pos, text in answers.items()}
        model_pos = "A" if published.get(sides.get("A", ""), 50.0) != 50.0 else "B"
        model = sides.get(model_pos, "")
        p_model = published.get(model, 50.0) / 100.0
        wins = _unit(judge, user) < p_model
        winner = model_pos if wins else ("B" if model_pos == "A" else "A")
        label = "A>B" if winner == "A" else "B>A"
        content = f"Both answers read. My final verdict is [[{label}]]"
        payload = {
            "id": "mock",
            "object": "chat.completion",
            "model": judge,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": len(user) // 4,
                "completion_tokens": 12,
                "total_tokens": len(user) // 4 + 12,
            },
        }
        return web.json_response(payload)
