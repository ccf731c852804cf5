"""The runs bench/check_behaviour.py records, one or more per scoring family, and the mock that answers them.

Every run is small (seconds) and judged by the mock server's fixed rules, so a re-run knows every answer
already. The judge prompts here are fake texts written for this check with the placeholders jurist reads
(never upstream's wording): AlpacaEval's one-token logprob judge, HealthBench's rubric grader and
WritingBench's critic, each answered by a rule on what the prompt shows.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from mock_openai import MockOpenAI
from mock_verdicts import STRENGTH

COMMON = ("--models-file", "inputs/models.yaml", "--out", "run", "--no-progress", "--no-check")

ALPACA_MARK = "FAKE ONE-TOKEN PREFERENCE JUDGE written for jurist's behaviour check"
ALPACA_TEMPLATE = (
    f"<|im_start|>system\n{ALPACA_MARK}; it is not AlpacaEval's prompt.\n<|im_end|>\n"
    "<|im_start|>user\nInstruction: {instruction}\n\n<<first>>\n{output_1}\n<</first>>\n\n"
    "<<second>>\n{output_2}\n<</second>>\n\nName the better output: m (first) or M (second).\n<|im_end|>"
)
GRADER_MARK = "FAKE RUBRIC GRADER for jurist's behaviour check"
GRADER_FILE = (
    "# A --judge-prompt file in simple-evals' form, fake texts written for jurist's behaviour check.\n"
    f"GRADER_TEMPLATE = {json.dumps(GRADER_MARK + ' <<conversation>> @@ITEM@@ <<rubric_item>> @@END@@')}\n"
)
CRITIC_MARK = "FAKE WRITING CRITIC for jurist's behaviour check"
CRITIC_FIELDS = (
    " @@QUERY@@ {query} @@RESPONSE@@ {response} @@CRITERIA@@ {criteria} @@END@@"
    " Reply as JSON score and reason."
)
CRITIC_FILE = (
    "# A --judge-prompt file in WritingBench's form, fake texts written for jurist's behaviour check.\n"
    'evaluate_system = "You grade one criterion (fake system line)."\n'
    f"evaluate_prompt = {json.dumps(CRITIC_MARK + CRITIC_FIELDS)}\n"
)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def _strength(answer: str) -> float:
    """A mock answer is ``[model] prompt``; any other text (a benchmark's own answer) is strength 2."""
    if answer.startswith("[") and "]" in answer:
        return float(STRENGTH.get(answer[1 : answer.index("]")], 2))
    return 2.0


def alpaca_reply(user: str) -> tuple[str, dict[str, Any]]:
    """m or M with top logprobs P(m) = 0.9 p, P(M) = 0.9 (1 - p), p = sigmoid(strength gap + 0.4)."""
    first = _strength(_between(user, "<<first>>\n", "\n<</first>>"))
    second = _strength(_between(user, "<<second>>\n", "\n<</second>>"))
    p = 1.0 / (1.0 + math.exp(-(first - second + 0.4)))
    top = [("m", math.log(0.9 * p)), ("M", math.log(0.9 * (1 - p))), ("The", math.log(0.1))]
    alternatives = [{"token": token, "logprob": value, "bytes": None} for token, value in top]
    token = "m" if p >= 0.5 else "M"
    return token, {
        "content": [{"token": token, "logprob": -0.1, "bytes": None, "top_logprobs": alternatives}]
    }


def grader_reply(user: str) -> str:
    """About two items in three met; about one in eleven answered unreadably (jurist re-asks, then counts
    the item unscored)."""
    item = _digest(_between(user, "@@ITEM@@", "@@END@@"))
    if item[1] % 11 == 0:
        return "Hard to say, maybe. {not json}"
    met = item[0] % 3 != 0
    return "```json\n" + json.dumps({"explanation": f"rule says {met}", "criteria_met": met}) + "\n```"


def critic_reply(user: str) -> str:
    score = _digest(_between(user, "@@CRITERIA@@", "@@END@@"))[0] % 10 + 1
    return json.dumps({"score": score, "reason": "by rule"})


class GoldenMock(MockOpenAI):
    """tests/mock_openai.py's server, which also answers this module's three fake judge prompts."""

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        logprobs = None
        if ALPACA_MARK in system:
            content, logprobs = alpaca_reply(user)
        elif user.startswith(GRADER_MARK):
            content = grader_reply(user)
        elif user.startswith(CRITIC_MARK):
            content = critic_reply(user)
        else:
            return super()._reply(model, messages, body)
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        usage = {"prompt_tokens": len(user) // 4, "completion_tokens": len(content) // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        payload = {"id": "golden", "object": "chat.completion", "created": 0, "model": model,
                   "choices": [{**choice, "logprobs": logprobs}], "usage": usage}  # fmt: skip
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")


def golden_mock() -> GoldenMock:
    return GoldenMock(keep_bodies=False)


API_BASE = "{api_base}"
"""Where a recorded models file names the mock's URL (a free port each time)."""


def models_file(aliases: dict[str, dict[str, Any]]) -> str:
    """A models file serving every alias from the mock (as tests/conftest.py's write_models_file), the
    mock's URL left as :data:`API_BASE`."""
    data = {}
    for alias, extra in aliases.items():
        entry: dict[str, Any] = {
            "model": alias, "api_type": "openai", "endpoints": [{"api_base": API_BASE, "api_key": None}],
            "parallel": 8, "max_tokens": 64, "temperature": 0.0, "timeout": 20,
        }  # fmt: skip
        data[alias] = entry | extra
    return str(yaml.safe_dump(data))


def judgebench_pairs(n: int, seed: int = 11) -> str:
    """Synthetic JudgeBench pairs the mock's judges can tell apart: the right response is tagged
    [strong], the wrong one [weak]; four sources, so every category has pairs."""
    rng = random.Random(seed)
    sources = ("mmlu-pro-law", "livebench-reasoning", "livebench-math", "livecodebench")
    lines = []
    for i in range(n):
        label = rng.choice(["A>B", "B>A"])
        right, wrong = f"[strong] solution {i}", f"[weak] solution {i}"
        a, b = (right, wrong) if label == "A>B" else (wrong, right)
        row = {"pair_id": f"g{i:04d}", "original_id": None, "source": sources[i % 4],
               "question": f"synthetic question {i}?", "response_model": "synthetic",
               "response_A": a, "response_B": b, "label": label}  # fmt: skip
        lines.append(json.dumps(row) + "\n")
    return "".join(lines)


def arena_battles() -> str:
    """A synthetic human-voted arena (tests/arena_synth.py, fixed seed) as JSONL."""
    from arena_synth import build_arena

    arena = build_arena(n_models=20, n_battles=6000, n_rare=2, seed=7)
    return "".join(json.dumps(row) + "\n" for row in arena.rows)


def ifbench_questions(data: Path, n: int = 20) -> str:
    """The first ``n`` IFBench questions of the shared data whose checkers need no NLTK tagger (no offline
    source of it here: jurist refuses a run that needs it)."""
    lines = (data / "ifbench" / "IFBench_test.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if "words:start_verb" not in json.loads(line)["instruction_id_list"]]
    return "".join(line + "\n" for line in kept[:n])


INPUTS: dict[str, Callable[[Path], str]] = {
    "alpaca_judge.txt": lambda data: ALPACA_TEMPLATE,
    "healthbench_grader.py": lambda data: GRADER_FILE,
    "writingbench_critic.py": lambda data: CRITIC_FILE,
    "pairs.jsonl": lambda data: judgebench_pairs(48),
    "pairs-12.jsonl": lambda data: judgebench_pairs(12),
    "arena.jsonl": lambda data: arena_battles(),
    "ifbench.jsonl": ifbench_questions,
}


@dataclass(frozen=True)
class Case:
    """One recorded run: ``jurist run ARGS`` in its folder, the mock serving ``aliases``."""

    name: str
    family: str
    about: str
    args: tuple[str, ...]
    aliases: dict[str, dict[str, Any]]
    inputs: tuple[str, ...] = ()
    shown: tuple[str, ...] = ("run",)
    """The folders ``jurist show`` is asked about (relative to the case folder)."""


def _aliases(*names: str, **extra: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: extra.get(name.replace("-", "_"), {}) for name in names}


def write_inputs(case: Case, folder: Path, data: Path) -> None:
    """The files ``case`` reads from its ``inputs/`` folder (``data``: the shared benchmark data)."""
    for name in case.inputs:
        (folder / name).write_text(INPUTS[name](data), encoding="utf-8")


CASES = (
    Case("starter", "pairwise", "jurist's own 24 questions, three models against the references",
         ("run", "--bench", "starter", "--model", "strong,worse,mixed", "--judge", "judge-good", *COMMON),
         _aliases("strong", "worse", "mixed", "judge-good")),
    Case("starter-bt-style", "pairwise", "Bradley-Terry with length and markdown style control",
         ("run", "--bench", "starter", "--model", "better,worse,mixed", "--judge", "judge-good",
          "--method", "bt", "--style-control", "length,markdown", *COMMON),
         _aliases("better", "worse", "mixed", "judge-good")),
    Case("starter-ensemble", "pairwise", "two judges pooled, one of them right 70% of the time",
         ("run", "--bench", "starter", "--model", "better,mixed", "--judge", "judge-good,judge-p70",
          "--ensemble", *COMMON),
         _aliases("better", "mixed", "judge-good", "judge-p70")),
    Case("starter-small", "pairwise", "a small starter run: committed as a test fixture",
         ("run", "--bench", "starter", "--limit", "8", "--model", "strong,mixed", "--judge", "judge-good",
          *COMMON),
         _aliases("strong", "mixed", "judge-good")),
    Case("starter-small-bt", "pairwise", "a small Bradley-Terry run with style control: a test fixture",
         ("run", "--bench", "starter", "--limit", "8", "--model", "better,worse", "--judge", "judge-p70",
          "--method", "bt", "--style-control", "length", *COMMON),
         _aliases("better", "worse", "judge-p70")),
    Case("alpaca-eval", "pairwise", "AlpacaEval 2.0, LC headline (estimated offline), logprob judge",
         ("run", "--bench", "alpaca-eval", "--limit", "30", "--model", "strong,better,worse",
          "--judge", "judge-lp", "--judge-prompt", "inputs/alpaca_judge.txt", *COMMON),
         _aliases("strong", "better", "worse", "judge-lp"), ("alpaca_judge.txt",)),
    Case("arena-hard-v2", "pairwise", "Arena-Hard v2.0, both categories, official style control",
         ("run", "--bench", "arena-hard-v2.0", "--limit", "16", "--sample", "stratified",
          "--model", "better,mixed", "--judge", "judge-good", *COMMON),
         _aliases("better", "mixed", "judge-good")),
    Case("healthbench", "rubric", "HealthBench, 5 conversations, unreadable grades counted unscored",
         ("run", "--bench", "healthbench", "--limit", "5", "--model", "m", "--judge", "grader",
          "--judge-prompt", "inputs/healthbench_grader.py", "--format", "json", *COMMON),
         _aliases("m", "grader"), ("healthbench_grader.py",)),
    Case("writingbench", "rubric", "WritingBench, 4 queries, two answers each",
         ("run", "--bench", "writingbench", "--limit", "4", "--samples", "2", "--model", "m",
          "--judge", "critic", "--judge-prompt", "inputs/writingbench_critic.py", *COMMON),
         _aliases("m", "critic", critic={"temperature": None}), ("writingbench_critic.py",)),
    Case("ifeval", "rule", "IFEval, 25 prompts, the mock's echoes checked by rule",
         ("run", "--bench", "ifeval", "--limit", "25", "--model", "m", *COMMON), _aliases("m")),
    Case("ifbench", "rule", "IFBench, 20 prompts needing no NLTK tagger, two answers each",
         ("run", "--bench", "ifbench", "-B", "file=inputs/ifbench.jsonl", "--samples", "2", "--model", "m",
          *COMMON),
         _aliases("m"), ("ifbench.jsonl",)),
    Case("tasks-rules", "rule", "--tasks: IFEval and IFBench in one process, one combined table",
         ("run", "--tasks", "ifeval,ifbench", "-B", "ifbench:file=inputs/ifbench.jsonl", "--limit", "8",
          "--model", "m", *COMMON),
         _aliases("m"), ("ifbench.jsonl",), ("run", "run/ifeval", "run/ifbench")),
    Case("lmarena-placement", "placement", "a synthetic arena file, 40 battles judged, placement fitted",
         ("run", "--bench", "inputs/arena.jsonl", "-B", "n=40", "-B", "seed=3", "--model", "better",
          "--judge", "judge-good", *COMMON),
         _aliases("better", "judge-good"), ("arena.jsonl",)),
    Case("lmarena-calibration", "placement", "a judge's temperature fitted on 60 human battles",
         ("run", "--bench", "inputs/arena.jsonl", "-B", "calibration=60", "--judge", "judge-p80", *COMMON),
         _aliases("judge-p80"), ("arena.jsonl",)),
    Case("judgebench", "judge accuracy", "48 synthetic pairs, two chance judges",
         ("run", "--bench", "judgebench", "-B", "split=inputs/pairs.jsonl",
          "--judge", "judge-p70,judge-p80-t10", *COMMON),
         _aliases("judge-p70", "judge-p80-t10"), ("pairs.jsonl",)),
    Case("judgebench-small", "judge accuracy", "12 synthetic pairs, one chance judge: a test fixture",
         ("run", "--bench", "judgebench", "-B", "split=inputs/pairs-12.jsonl", "--judge", "judge-p70",
          *COMMON),
         _aliases("judge-p70"), ("pairs-12.jsonl",)),
)  # fmt: skip
