"""How a rubric grader's reply is read: strictly, never evaluated; JSON with the fields its reference checks,
else no grade (the rubric kind then re-asks once and records the item "unscored").

simple-evals' and eval_framework's readings of a criterion's ``criteria_met``, WritingBench's 1-10 score;
a benchmark bringing its own grader (a plugin) may read its replies with any of them.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE_START = re.compile(r"^```(?:json)?\s*")
_FENCE_END = re.compile(r"\s*```$")
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _unfenced(text: str) -> str:
    """``text`` without a surrounding Markdown code fence (```json ... ```), trimmed."""
    return _FENCE_END.sub("", _FENCE_START.sub("", text.strip())).strip()


def _json_object(text: str, *, embedded: bool) -> dict[str, Any] | None:
    """The JSON object ``text`` is (fences removed); with ``embedded``, else the outermost ``{...}`` in it."""
    cleaned = _unfenced(text)
    candidates = [cleaned]
    if embedded:
        match = _OBJECT.search(cleaned)
        if match:
            candidates.append(match.group(0))
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def read_criteria_met(text: str) -> dict[str, Any] | None:
    """simple-evals' reading: the reply (fences removed) is a JSON object whose ``criteria_met`` is a JSON
    boolean; ``explanation`` is kept when it is a string."""
    data = _json_object(text, embedded=False)
    if data is None or not isinstance(data.get("criteria_met"), bool):
        return None
    explanation = data.get("explanation")
    return {"met": data["criteria_met"], "explanation": explanation if isinstance(explanation, str) else None}


def read_criteria_met_ef(text: str) -> dict[str, Any] | None:
    """eval_framework's reading: also the outermost ``{...}`` inside prose; ``criteria_met`` may be the
    strings true/yes/false/no; ``explanation`` must be a string."""
    data = _json_object(text, embedded=True)
    if data is None:
        return None
    met, explanation = data.get("criteria_met"), data.get("explanation")
    if isinstance(met, str):
        met = {"true": True, "yes": True, "false": False, "no": False}.get(met.lower())
    if not isinstance(met, bool) or not isinstance(explanation, str):
        return None
    return {"met": met, "explanation": explanation}


def read_score(text: str) -> dict[str, Any] | None:
    """WritingBench's reading, stricter on type: a JSON object with an integer ``score`` in 1..10 (not
    7.0, not "7", not true) and a string ``reason``."""
    data = _json_object(text, embedded=False)
    if data is None:
        return None
    score, reason = data.get("score"), data.get("reason")
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 10:
        return None
    if not isinstance(reason, str):
        return None
    return {"score": score, "reason": reason}
