"""HealthBench's rows as questions, each field checked (errors name the file, the line and the field):
the conversation, the rubric and the tags, kept in a question's ``metadata``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.benchmarks.base import Question
from jurist.errors import InputError
from jurist.store import content_text, read_input_jsonl


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _messages(path: Path, where: str, value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value:
        raise InputError(path, where, "field 'prompt' is not a non-empty list of messages")
    turns = []
    for turn in value:
        if not (isinstance(turn, dict) and isinstance(turn.get("role"), str)):
            raise InputError(path, where, "field 'prompt': a message has no role")
        content = content_text(turn.get("content"))  # a string, or OpenAI's list of text parts
        if content is None:
            raise InputError(path, where, "field 'prompt': a message's content is not text")
        turns.append({"role": turn["role"], "content": content})
    return turns


def _rubric(path: Path, where: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise InputError(path, where, "field 'rubrics' is not a non-empty list")
    items = []
    for number, item in enumerate(value, start=1):
        ok = isinstance(item, dict) and isinstance(item.get("criterion"), str)
        points = item.get("points") if isinstance(item, dict) else None
        if not ok or isinstance(points, bool) or not isinstance(points, (int, float)):
            raise InputError(path, where, f"field 'rubrics': item {number} needs a criterion and points")
        tags = item.get("tags", [])
        if not _strings(tags):
            raise InputError(path, where, f"field 'rubrics': item {number}'s tags are not strings")
        items.append({"criterion": item["criterion"], "points": points, "tags": list(tags)})
    if not any(item["points"] > 0 for item in items):
        raise InputError(path, where, "field 'rubrics': no item has positive points, so no score exists")
    return items


def read_questions(path: Path) -> list[Question]:
    """HealthBench rows as questions: ``metadata`` holds the conversation, the rubric and the tags."""
    questions: list[Question] = []
    seen: set[str] = set()
    for number, row in read_input_jsonl(path):
        where = f"line {number}"
        uid = row.get("prompt_id")
        if not isinstance(uid, str) or not uid:
            raise InputError(path, where, "field 'prompt_id' is missing")
        if uid in seen:
            raise InputError(path, where, f"field 'prompt_id': {uid!r} appears twice")
        seen.add(uid)
        messages = _messages(path, where, row.get("prompt"))
        rubric = _rubric(path, where, row.get("rubrics"))
        tags = row.get("example_tags", [])
        if not _strings(tags):
            raise InputError(path, where, "field 'example_tags' is not a list of strings")
        theme = next((t.split(":", 1)[1] for t in tags if t.startswith("theme:")), "default")
        shown = messages[0]["content"] if len(messages) == 1 else conversation_text(messages)
        metadata = {"messages": messages, "rubrics": rubric, "example_tags": list(tags)}
        questions.append(Question(uid=uid, prompt=shown, category=theme, metadata=metadata))
    if not questions:
        raise InputError(path, "", "no questions")
    return questions


def conversation_text(messages: Sequence[Mapping[str, str]]) -> str:
    """A multi-turn prompt as one text, for listings (answers are generated from the turns themselves)."""
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)
