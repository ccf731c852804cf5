"""HealthBench Professional's own file (``healthbench_professional_eval.jsonl``) read into HealthBench
questions, for ``-B professional=FILE``.

The data is published on the HF hub (``openai/healthbench-professional``) and in OpenAI's blob storage
only, so jurist never downloads it: a user passes their own copy. Its schema is not HealthBench's: each
row has an ``id``, a ``conversation`` (a list of ``{role, content}`` turns ending with the user's, or an
object holding them as ``messages``), ``rubric_items`` (``{criterion_text, points}``, tags optional), and
``use_case``, ``type``, ``difficulty``, ``specialty`` and ``physician_response``. Each row becomes a
question as HealthBench's loader makes one: the turns, the rubric (``criterion``, ``points``, ``tags``),
and as example tags ``use_case:…``, ``type:…``, ``difficulty:…``, ``specialty:…`` (jurist's naming,
so that the scores come out per use case and specialty as the theme scores do); the category is the
use case; the physician's response is kept in the metadata.

simple-evals PR #108 runs it as a guardrail, not a subset: its Professional mode needs the input path,
the GPT-5.4 grader at low reasoning effort and both length-adjustment constants, and refuses to start
without any of them (:func:`jurist.benchmarks.healthbench.benchmark` does the same).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurist.benchmarks.base import Question
from jurist.errors import InputError
from jurist.store import content_text, read_input_jsonl

TAG_FIELDS = ("use_case", "type", "difficulty", "specialty")


def _turns(path: Path, where: str, value: Any) -> list[dict[str, str]]:
    if isinstance(value, dict):
        value = value.get("messages")
    if not isinstance(value, list) or not value:
        raise InputError(path, where, "field 'conversation' is not a non-empty list of messages")
    turns = []
    for turn in value:
        if not (isinstance(turn, dict) and isinstance(turn.get("role"), str)):
            raise InputError(path, where, "field 'conversation': a message has no role")
        content = content_text(turn.get("content"))
        if content is None:
            raise InputError(path, where, "field 'conversation': a message's content is not text")
        turns.append({"role": turn["role"], "content": content})
    if turns[-1]["role"] != "user":
        raise InputError(path, where, "field 'conversation': the last message is not the user's")
    return turns


def _rubric(path: Path, where: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise InputError(path, where, "field 'rubric_items' is not a non-empty list")
    items: list[dict[str, Any]] = []
    for number, item in enumerate(value, start=1):
        text = item.get("criterion_text") if isinstance(item, dict) else None
        points = item.get("points") if isinstance(item, dict) else None
        if not isinstance(text, str) or isinstance(points, bool) or not isinstance(points, (int, float)):
            raise InputError(
                path, where, f"field 'rubric_items': item {number} needs a criterion_text and points"
            )
        tags = item.get("tags") or []
        if not (isinstance(tags, list) and all(isinstance(tag, str) for tag in tags)):
            raise InputError(path, where, f"field 'rubric_items': item {number}'s tags are not strings")
        items.append({"criterion": text, "points": points, "tags": list(tags)})
    if not any(item["points"] > 0 for item in items):
        raise InputError(path, where, "field 'rubric_items': no item has positive points, so no score exists")
    return items


def read_professional(path: Path) -> list[Question]:
    """The rows of a HealthBench Professional file as HealthBench questions (see the module docstring)."""
    from jurist.benchmarks.healthbench_rows import conversation_text

    questions: list[Question] = []
    seen: set[str] = set()
    for number, row in read_input_jsonl(path):
        where = f"line {number}"
        uid = row.get("id")
        if not isinstance(uid, str) or not uid:
            raise InputError(path, where, "field 'id' is missing")
        if uid in seen:
            raise InputError(path, where, f"field 'id': {uid!r} appears twice")
        seen.add(uid)
        turns = _turns(path, where, row.get("conversation"))
        rubric = _rubric(path, where, row.get("rubric_items"))
        tags = []
        for name in TAG_FIELDS:
            value = row.get(name)
            if value is not None and not isinstance(value, str):
                raise InputError(path, where, f"field {name!r} is not a string")
            if value:
                tags.append(f"{name}:{value}")
        physician = row.get("physician_response")
        metadata = {
            "messages": turns,
            "rubrics": rubric,
            "example_tags": tags,
            "physician_response": physician if isinstance(physician, str) else None,
        }
        shown = turns[0]["content"] if len(turns) == 1 else conversation_text(turns)
        category = str(row.get("use_case") or "default")
        questions.append(Question(uid=uid, prompt=shown, category=category, metadata=metadata))
    if not questions:
        raise InputError(path, "", "no questions")
    return questions
