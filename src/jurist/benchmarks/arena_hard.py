"""Arena-Hard as a benchmark: its question files and the baseline each question category is judged against.

Question files come in Arena-Hard's ``question.jsonl`` shapes: v2.0 rows ``{uid, category, prompt}`` and
v0.1 rows ``{question_id, category, turns: [{content}]}`` (only the first turn is used: Arena-Hard questions
are single-turn). Other fields of a row are kept as the question's metadata.

A file whose every category is one of v2.0's is judged as upstream judges it: each question against
its category's baseline (v2.0: hard_prompt vs o3-mini, creative_writing vs gemini-2.0-flash), scored per
category when it has several, and, when the file sits in an Arena-Hard data folder
(``<bench>/question.jsonl`` beside ``<bench>/model_answer/<baseline>.jsonl``), with the official baseline
answers shipped rather than generated again.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jurist.benchmarks.base import Benchmark, Question
from jurist.benchmarks.lazy_answers import LazyAnswerFiles, answer_rows
from jurist.errors import InputError
from jurist.store import answer_text, category_field, content_text, id_field, iter_numbered_jsonl

ARENA_HARD_BASELINES: dict[str, str] = {
    "hard_prompt": "o3-mini-2025-01-31",
    "coding": "o3-mini-2025-01-31",
    "math": "o3-mini-2025-01-31",
    "creative_writing": "gemini-2.0-flash-001",
    "arena-hard-v0.1": "gpt-4-0314",
}
"""Arena-Hard's baseline per question category (upstream ``JUDGE_SETTINGS``; facts, checked against the
loaded upstream settings in the tests)."""


def default_baseline(category: str, bench: str) -> str | None:
    """Arena-Hard's baseline for a category, else for the benchmark (v0.1 has a single one)."""
    return ARENA_HARD_BASELINES.get(category) or ARENA_HARD_BASELINES.get(bench)


def question_from_row(row: dict[str, Any], path: Path, line: int) -> Question:
    where = f"line {line}"
    uid = id_field(path, where, row, ("uid", "question_id"))
    if "prompt" in row:
        prompt = row["prompt"]
    elif "turns" in row:
        turns = row["turns"]
        if (
            not isinstance(turns, list)
            or not turns
            or not isinstance(turns[0], dict)
            or "content" not in turns[0]
        ):
            raise InputError(path, where, "field 'turns' must be a non-empty list of {content}")
        prompt = content_text(turns[0]["content"])
        if prompt is None:
            raise InputError(path, where, "field 'turns': the first turn's content is not text")
    else:
        raise InputError(path, where, "field 'prompt' (or 'turns') is missing")
    if not isinstance(prompt, str) or not prompt.strip():
        raise InputError(path, where, "field 'prompt' must be a non-empty string")
    category = category_field(path, where, row)
    metadata = {
        k: v for k, v in row.items() if k not in ("uid", "question_id", "prompt", "turns", "category")
    }
    return Question(uid=uid, prompt=prompt, category=category, metadata=metadata)


def read_questions(path: Path) -> list[Question]:
    """The questions of a question file; duplicate uids and malformed rows are errors naming the line and
    field, and so is a file without questions."""
    questions: list[Question] = []
    seen: set[str] = set()
    for line, row in iter_numbered_jsonl(path, repair=False):
        question = question_from_row(row, path, line)
        if question.uid in seen:
            raise InputError(path, f"line {line}", f"field 'uid': duplicate uid {question.uid!r}")
        seen.add(question.uid)
        questions.append(question)
    if not questions:
        raise InputError(path, "", "no questions in file")
    return questions


def load_question_file(path: str | Path) -> Benchmark:
    """Read a question file as a benchmark: Arena-Hard's categories bring their baselines (and, beside an
    Arena-Hard ``model_answer/`` folder, the official baseline answers)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "", "question file not found")
    questions = read_questions(path)
    name = path.parent.name if path.name == "question.jsonl" else path.stem
    categories = list(dict.fromkeys(q.category for q in questions))
    if not all(category in ARENA_HARD_BASELINES for category in categories):
        return Benchmark(name, questions)  # not Arena-Hard's categories: --baseline decides
    baselines = {category: ARENA_HARD_BASELINES[category] for category in categories}
    shipped = official_answers(path.parent / "model_answer", baselines.values(), questions)
    sources = shipped.sources
    return Benchmark(
        name,
        questions,
        shipped_answers=shipped.texts,
        shipped_metadata=shipped.metadata,
        baselines_by_category=baselines,
        score_categories=tuple(categories) if len(categories) > 1 else (),
        info={"baseline_answers": sources} if sources else {},
    )


def read_answer_file(path: Path, wanted: set[str]) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """uid -> answer text of an Arena-Hard answer file (any shape :func:`answer_text` reads) for the uids in
    ``wanted``, and uid -> the style metadata rows store (:func:`jurist.tokens.stored_style_metadata`)."""
    answers: dict[str, str] = {}
    stored: dict[str, dict[str, Any]] = {}
    for line, row in iter_numbered_jsonl(path, repair=False):
        uid = str(row.get("uid", row.get("question_id", "")))
        if uid in wanted:
            answers[uid], metadata = read_answer_row(path, line, row)
            if metadata is not None:
                stored[uid] = metadata
            else:
                stored.pop(uid, None)  # a later row of the uid without it: its text is counted again
    return answers, stored


def read_answer_row(path: Path, number: int, row: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """One row of an Arena-Hard answer file, line ``number`` of ``path``: its answer text (any shape
    :func:`answer_text` reads) and the style metadata it stores (None: none); :class:`LazyAnswerFiles`
    reads a file so, row by row where first asked for."""
    from jurist.tokens import stored_style_metadata

    text = answer_text(row)
    if text is None:
        raise InputError(path, f"line {number}", "no answer text (messages / choices / answer)")
    return text, stored_style_metadata(row)


def official_answers(folder: Path, baselines: Iterable[str], questions: list[Question]) -> LazyAnswerFiles:
    """The answers of each baseline found in an Arena-Hard ``model_answer/`` folder. A baseline whose
    file lacks some question is not shipped (the run then generates or finds its answers as for any
    baseline). Which are shipped is known from the files' uids; each text is read where first used."""
    wanted = {q.uid for q in questions}
    shipped = LazyAnswerFiles()
    for baseline in dict.fromkeys(baselines):
        file = folder / f"{baseline}.jsonl"
        rows = answer_rows(file) if file.is_file() else {}
        if wanted <= rows.keys():
            mine = {uid: row for uid, row in rows.items() if uid in wanted}
            shipped.add(baseline, file, mine, read_answer_row)
    return shipped
