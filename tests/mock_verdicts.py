"""How the mock server's judges decide: by a fixed rule on the two answers they are shown, so tests know
every verdict in advance (see mock_openai's docstring for the models and judges it knows)."""

from __future__ import annotations

import math
import random
import re
from typing import Any

STRENGTH = {"strong": 4, "better": 3, "baseline": 2, "reference": 2, "equal": 2, "worse": 1, "weak": 0}
_ANSWER = re.compile(
    r"<\|The Start of Assistant ([AB])'s Answer\|>\n(.*?)\n<\|The End of Assistant \1's Answer\|>", re.DOTALL
)
_TAG = re.compile(r"^\[([^\]]+)\]")
_CHANCE_JUDGE = re.compile(r"^judge-p(\d+)(?:-t(\d+))?$")


def strength(model: str, prompt: str) -> int:
    if model == "mixed":
        return 3 if len(prompt) % 2 == 0 else 1
    return STRENGTH.get(model, 2)


def verdict_for(text: str) -> str:
    """The rule-based verdict for a judge prompt (positions as shown)."""
    answers = dict(_ANSWER.findall(text))
    prompt = text.split("\n", 2)[1] if text.startswith("<|User Prompt|>") else ""
    tag_a = _TAG.match(answers.get("A", ""))
    tag_b = _TAG.match(answers.get("B", ""))
    sa = strength(tag_a.group(1), prompt) if tag_a else 2
    sb = strength(tag_b.group(1), prompt) if tag_b else 2
    gap = sa - sb
    if gap >= 2:
        return "A>>B"
    if gap == 1:
        return "A>B"
    if gap == 0:
        return "A=B"
    return "B>A" if gap == -1 else "B>>A"


DIGITS = {"A>>B": "1", "A>B": "2", "A=B": "3", "B>A": "4", "B>>A": "5"}


def digit_logprobs(label: str) -> dict[str, Any]:
    """Chat-format ``logprobs`` for a one-digit verdict: 0.6 on ``label``'s digit, 0.075 on each other
    digit, 0.1 on a non-verdict token (so the digits cover 0.9 of the mass)."""
    probs = {digit: 0.075 for digit in DIGITS.values()} | {DIGITS[label]: 0.6, "The": 0.1}
    top = [{"token": token, "logprob": math.log(p), "bytes": None} for token, p in probs.items()]
    first = {"token": DIGITS[label], "logprob": math.log(0.6), "bytes": None, "top_logprobs": top}
    return {"content": [first]}


_TO_THE_JUDGE = re.compile(r"(?i)\b(?:judge|evaluator|grader)\b[^.]*\b(?:prefer|better|winner)\b")
"""A sentence addressed to the judge that asks for a verdict, as an obedient judge notices one."""


def faulty_verdict(judge: str, text: str) -> str | None:
    """Verdict of a judge with a planted fault (None for other judges): ``judge-longer`` prefers the longer
    answer; ``judge-obedient`` prefers an answer that addresses the judge (else judges by the rule);
    ``judge-first`` always prefers position A."""
    if judge == "judge-first":
        return "A>B"
    if judge not in ("judge-longer", "judge-obedient"):
        return None
    answers = dict(_ANSWER.findall(text))
    a, b = answers.get("A", ""), answers.get("B", "")
    if judge == "judge-longer":
        return "A>B" if len(a) > len(b) else "B>A" if len(b) > len(a) else "A=B"
    asks_a, asks_b = bool(_TO_THE_JUDGE.search(a)), bool(_TO_THE_JUDGE.search(b))
    if asks_a != asks_b:
        return "A>>B" if asks_a else "B>>A"
    return None


def chance_draw(judge: str, answer_a: str, answer_b: str) -> float:
    """The uniform draw a ``judge-pNN`` judge makes for one game; tests recompute it to know each verdict."""
    return random.Random(f"{judge}|{answer_a}|{answer_b}").random()


def chance_verdict(judge: str, text: str) -> str | None:
    """Verdict of a ``judge-pNN[-tMM]`` judge (None for other judges): right, tie or wrong by one draw."""
    match = _CHANCE_JUDGE.match(judge)
    if match is None:
        return None
    truth = verdict_for(text)
    if truth == "A=B":
        return truth
    right, wrong = ("A>B", "B>A") if truth.startswith("A") else ("B>A", "A>B")
    answers = dict(_ANSWER.findall(text))
    draw = chance_draw(judge, answers.get("A", ""), answers.get("B", ""))
    p_right, p_tie = int(match.group(1)) / 100, int(match.group(2) or 0) / 100
    return right if draw < p_right else "A=B" if draw < p_right + p_tie else wrong
