"""The records a run reads and writes, typed: questions, answers, points and run.json (judgments are
kind-tagged dicts, each judge kind's own: :func:`judgment_kind`).

Each record carries a ``kind`` tag and a ``sample`` index (which of the N answers to one prompt it belongs
to), so a reader tells what a line is from a field, and repeated samples never collide. Records are
TypedDicts: they are JSON lines on disk and plain dicts in memory (no conversion cost on a 100k-line
read), while mypy checks every field the code touches.

Schema versions: 2 (every record kind-tagged, with its sample); a run directory of schema 1 (before kinds
and samples) is refused by :meth:`jurist.store.run_dir.RunDir.refuse_older_layout`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from jurist.errors import InputError

SCHEMA_VERSION = 2


@dataclass(frozen=True, slots=True)
class Question:
    """One prompt to answer. ``uid`` is unique within its benchmark; ``metadata`` is the benchmark's own,
    except ``metadata["messages"]``: a conversation (``[{role, content}]``) answered in place of ``prompt``
    as one user turn, for multi-turn benchmarks (HealthBench); ``prompt`` then only shows it.

    Benchmarks make questions and judge kinds read them, so the type lives here, below both."""

    uid: str
    prompt: str
    category: str = "default"
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)


class Usage(TypedDict, total=False):
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    attempts: int
    cached: bool
    empty: bool  # the server answered with no text, on purpose (finish_reason stop)
    truncated_thought: bool  # the answer ran out inside its <think>: empty, counted


class _AnswerRecordFields(TypedDict):
    kind: Literal["answer"]
    uid: str
    sample: int
    model: str
    category: str
    answer: str
    tstamp: float


class AnswerRecord(_AnswerRecordFields, total=False):
    """One answer of one model to one question, sample ``sample`` (0-based)."""

    source: str  # "benchmark" for answers the benchmark ships
    usage: Usage
    finish_reason: str | None
    reasoning: str
    metadata: dict[str, Any]  # style features (token length, markdown counts)
    content_head: str  # what the engine moved out of the content's start: content_head + answer as written


class RunJson(TypedDict, total=False):
    """run.json: its header (written by :meth:`jurist.store.run_dir.RunDir.write_run_json`), then the
    plan's facts (``jurist.run``'s ``RunPlan.run_fields``) and the run's progress. The fields a reader
    relies on are named here; the resolved configuration holds more (docs/run-directory.md)."""

    schema_version: int
    run_id: str
    status: str
    """``running``, ``finished``, ``interrupted``, ``crashed``, ``stopped-by-budget``, ``imported``."""
    jurist_version: str
    python: str
    platform: str
    bench: str
    bench_name: str
    bench_info: dict[str, Any]
    n_questions: int
    samples: int
    models: list[str]
    baselines: list[str]
    judges: list[str]
    judge_kind: str | None
    rule_suite: str | None
    mode: str
    score_family: str
    scoring: dict[str, Any]
    model_specs: dict[str, dict[str, Any]]
    exit_code: int
    failures: int
    usage: dict[str, Any]
    usage_total: dict[str, Any]
    ledger: dict[str, Any]
    updated: float


class _PointRecordFields(TypedDict):
    kind: Literal["point"]
    uid: str
    sample: int
    model: str
    judge: str | None
    metric: str
    value: float | None


def answer_record(
    *,
    uid: str,
    sample: int,
    model: str,
    category: str,
    answer: str,
    tstamp: float,
    **extra: Any,
) -> AnswerRecord:
    """An answer record with its kind tag set (``extra``: source, usage, finish_reason, reasoning...)."""
    record: dict[str, Any] = {
        "kind": "answer",
        "uid": uid,
        "sample": sample,
        "model": model,
        "category": category,
        "answer": answer,
        "tstamp": tstamp,
    }
    record.update({key: value for key, value in extra.items() if value is not None})
    return record  # type: ignore[return-value]


def judgment_kind(record: Mapping[str, Any], path: object, line: int) -> str:
    """The kind of a judgment record, line ``line`` of ``path``: its ``kind`` field (``pairwise``: two
    position-swapped games; ``preference``: one soft preference, AlpacaEval's judge and its imports;
    ``rubric``: one graded entry per rubric item or criterion). Every record schema 2 writes or imports
    carries one, so a record without it is refused rather than guessed from its other fields."""
    kind = record.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(
            path, f"line {line}", "field 'kind' is missing (every judgment record names its kind)"
        )
    return kind


def sample_of(record: Mapping[str, Any]) -> int:
    """A record's sample index; schema-1 records have none and are sample 0."""
    value = record.get("sample", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class PointRecord(_PointRecordFields, total=False):
    """A per-answer score (a rule check or a rubric grade): ``value`` in [0, 1], or None when unscored."""

    category: str
    detail: dict[str, Any]


def text_hash(text: str) -> str:
    """The identity of an answer text in judgment keys and records (a changed answer is judged again)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# -- fields of the files users give (questions, answers): checked, never kept as a Python repr --


def _kind_of(value: object) -> str:
    return {dict: "an object", list: "a list", bool: "a boolean", float: "a number"}.get(
        type(value), "a value"
    )


def id_field(path: object, where: str, record: Mapping[str, Any], names: Sequence[str]) -> str:
    """A question's id from the first of ``names`` that ``record`` gives, as text; an
    :class:`InputError` naming the file, line and field when it is missing or not an id.

    A string is kept as it is; an integer (not a boolean) as its digits, because upstream formats use
    integers: FastChat's MT-Bench ``question_id`` (which Arena-Hard v0.1's ``question_id`` follows) and
    IFEval's ``key``. Anything else (an object, a list, a float) would be stored as its Python repr and
    match nothing, so it is refused."""
    name = next((n for n in names if record.get(n) not in (None, "")), None)
    if name is None:
        alternatives = f" (or {', '.join(repr(n) for n in names[1:])})" if len(names) > 1 else ""
        raise InputError(path, where, f"field {names[0]!r}{alternatives} is missing")
    value = record[name]
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(path, where, f"field {name!r} is {_kind_of(value)}, not an id (a string or an integer)")


def category_field(path: object, where: str, record: Mapping[str, Any], name: str = "category") -> str:
    """A question's category: the string given, ``default`` when none is; anything else (a list, an
    object, a number) is an :class:`InputError` naming the file, line and field."""
    value = record.get(name)
    if value is None or value == "":
        return "default"
    if isinstance(value, str):
        return value
    raise InputError(path, where, f"field {name!r} is {_kind_of(value)}, not a category name (a string)")


def content_text(content: object) -> str | None:
    """A message's ``content`` as text: a string, or OpenAI's list of content parts
    (``[{"type": "text", "text": ...}]``) whose text parts are joined with newlines (as vLLM joins them
    for a prompt). None when it is neither, or when a part is not text (an image cannot be sent on as
    text, and dropping it would change the question)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return None
    texts = []
    for part in content:
        if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
            return None
        texts.append(part["text"])
    return "\n".join(texts)
