"""One run directory, read for the browser: where each record lies and one code per record, no texts.

The browser must open runs of 100k answers, so this pass keeps what the list needs (a code per cell, the
category, an answer's state) and *where* every record lies (file, byte offset); a question's texts are read
back from disk only when its page is written or asked for. Nothing here writes to the run directory:
torn last lines are skipped, not repaired (the copy may be read-only, or a run may still be writing).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.errors import InputError
from jurist.store import (
    RunDir,
    answer_text,
    iter_jsonl_lines,
    judgment_kind,
    parse_jsonl_line,
    read_jsonl_line,
    sample_of,
)
from jurist.view import codes
from jurist.view.layouts import FAILURE, POINT_RECORD, Layouts, ViewLayout
from jurist.view.rubric import rubric_code

RULES = "(rule checks)"
"""The judge column of point records that no judge wrote (``points/<model>.jsonl``: rule checks)."""

Key = tuple[str, int]
"""(uid, sample)."""


@dataclass(frozen=True)
class Ref:
    """Where one record lies: a file of :class:`Files`, the byte offset of its line, its line number."""

    file: int
    offset: int
    line: int


class Files:
    """The files records are read back from, numbered, shared by every run of one view."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self._numbers: dict[Path, int] = {}

    def number(self, path: Path) -> int:
        if path not in self._numbers:
            self._numbers[path] = len(self.paths)
            self.paths.append(path)
        return self._numbers[path]

    def read(self, ref: Ref) -> dict[str, Any]:
        return read_jsonl_line(self.paths[ref.file], ref.offset, ref.line)


@dataclass(frozen=True)
class Judged:
    """One judgment or point record of one (judge, model) on one (uid, sample)."""

    judge: str
    model: str
    kind: str
    """The record's kind as stored (a judge kind's name, ``point``, ``failure``): shown, never switched on."""
    layout: ViewLayout
    """How the page shows the record and its cell (:mod:`jurist.view.layouts`)."""
    code: int
    ref: Ref
    value: float | None = None
    """A point record's value, or an ``items`` judgment's answer score on its own scale
    (:mod:`jurist.view.rubric`); None for other layouts and for what went unscored."""


@dataclass
class Slot:
    """Everything one run holds about one (uid, sample)."""

    answers: dict[str, Ref] = field(default_factory=dict)
    answer_codes: dict[str, int] = field(default_factory=dict)
    judged: list[Judged] = field(default_factory=list)
    failures: list[Ref] = field(default_factory=list)
    """Answer requests that failed (a failed judging request is a :class:`Judged` of kind ``failure``)."""


@dataclass
class RunData:
    """One run directory as the browser sees it."""

    root: Path
    info: dict[str, Any]
    bench: str
    models: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    slots: dict[Key, Slot] = field(default_factory=dict)
    categories: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    prompt_note: str | None = None
    """Why this run's prompts are not shown (None when they are)."""

    def slot(self, key: Key) -> Slot:
        found = self.slots.get(key)
        if found is None:
            found = self.slots[key] = Slot()
        return found

    def baselines(self) -> list[str]:
        named = self.info.get("baselines") or ([self.info["baseline"]] if self.info.get("baseline") else [])
        return [str(name) for name in named if isinstance(name, str)]


def _records(path: Path, files: Files) -> Iterator[tuple[Ref, dict[str, Any]]]:
    """(where, record) of each whole line of ``path``; the file is never repaired or changed."""
    number = files.number(path)
    for line, offset, raw in iter_jsonl_lines(path, repair=False):
        yield Ref(number, offset, line), parse_jsonl_line(path, line, raw)


def _alias(run: RunDir, stem: str) -> str:
    try:
        return run.alias_of(stem)
    except (ValueError, InputError):
        return stem  # a name jurist did not write (copied in by hand): shown as it is


def _text(record: dict[str, Any], field: str, default: str) -> str:
    """A string field of a record, or ``default`` when it is missing or not a string."""
    value = record.get(field)
    return value if isinstance(value, str) else default


def _add(names: list[str], name: str) -> None:
    if name not in names:
        names.append(name)


def read_run(root: Path, files: Files) -> RunData:
    """Index one run directory: answers, judgments (any kind), rule points and still-failing requests."""
    from jurist.families import read_json

    run = RunDir(root)
    if not run.root.is_dir():
        raise InputError(root, "", "not a run directory")
    info = read_json(run.run_json)
    info = info if isinstance(info, dict) else {}
    if info.get("status") == "running":  # a run whose process died says crashed, not running
        info["status"] = run.recorded_status()[0]
    bench = str(info.get("bench_name") or info.get("bench") or root.name)
    data = RunData(root=root, info=info, bench=bench)
    for name in info.get("models") or []:
        _add(data.models, str(name))
    for name in data.baselines():
        _add(data.models, name)
    for name in info.get("judges") or []:
        _add(data.judges, str(name))
    layouts = Layouts(data.notes)
    _read_answers(run, data, files)
    _read_judgments(run, data, files, layouts)
    _read_points(run, data, files, layouts)
    _read_failures(run, data, files)
    return data


def _read_answers(run: RunDir, data: RunData, files: Files) -> None:
    folder = run.root / "answers"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        fallback = _alias(run, path.stem)
        for ref, record in _records(path, files):
            uid = record.get("uid", record.get("question_id"))
            text = answer_text(record)
            if uid is None or text is None:
                data.notes.append(f"{path.name} line {ref.line}: not an answer record; left out")
                continue
            model = _text(record, "model", fallback)
            _add(data.models, model)
            key = (str(uid), sample_of(record))
            slot = data.slot(key)
            slot.answers[model] = ref
            usage = record.get("usage")
            empty = not text.strip() or (isinstance(usage, dict) and bool(usage.get("truncated_thought")))
            slot.answer_codes[model] = codes.ANSWER_EMPTY if empty else codes.ANSWER_OK
            if isinstance(record.get("category"), str):
                data.categories.setdefault(key[0], record["category"])


def _read_judgments(run: RunDir, data: RunData, files: Files, layouts: Layouts) -> None:
    """Every judgments file, whatever kind its records are. The last judgment in games of a kind on a
    (uid, sample) is the current one (re-judging appends); records of other layouts are kept per key."""
    folder = run.root / "judgments"
    for path in sorted(folder.glob("*/*.jsonl")) if folder.is_dir() else []:
        judge_default, model_default = _alias(run, path.parent.name), _alias(run, path.stem)
        latest: dict[tuple[str, Any], Judged] = {}
        keys: dict[tuple[str, Any], Key] = {}
        for ref, record in _records(path, files):
            try:
                kind = judgment_kind(record, path, ref.line)
            except InputError as exc:
                data.notes.append(f"{exc}; left out")
                continue
            layout = layouts.of(kind)
            judge = _text(record, "judge", judge_default)
            model = _text(record, "model", model_default)
            uid = str(record.get("uid", record.get("question_id", "")))
            key = (uid, sample_of(record))
            identity: tuple[str, Any] = (kind, key if layout == "games" else record.get("key", ref.offset))
            code, value = _cell(layout, record, model)
            latest[identity] = Judged(judge, model, kind, layout, code, ref, value)
            keys[identity] = key
            if isinstance(record.get("category"), str):
                data.categories.setdefault(uid, record["category"])
        for identity, judged in latest.items():
            _add(data.judges, judged.judge)
            _add(data.models, judged.model)
            data.slot(keys[identity]).judged.append(judged)


def _cell(layout: ViewLayout, record: dict[str, Any], model: str) -> tuple[int, float | None]:
    """(cell code, value) of a record: games graded from ``model``'s side; rubric items as the answer's
    score (every item of one answer); a point record's value; any other layout, :data:`codes.OTHER`."""
    if layout == "games":
        return codes.pairwise_code(record, model), None
    if layout == "items":
        return rubric_code(record)
    if layout == "point":
        return codes.point_code(record.get("value")), _value(record)
    return codes.OTHER, None


def _value(record: dict[str, Any]) -> float | None:
    value = record.get("value")
    if record.get("kind") != POINT_RECORD or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _read_points(run: RunDir, data: RunData, files: Files, layouts: Layouts) -> None:
    """``points/<model>.jsonl``: per-answer rule checks (their judge is None), one record per answer, which
    replaces what an earlier pass read; and the points of a judgment in rubric items, one per item, which
    are left out where the judgment itself was read (it holds the same items with the criteria and the
    grader's replies), else each kept."""
    folder = run.root / "points"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        fallback = _alias(run, path.stem)
        for ref, record in _records(path, files):
            model = _text(record, "model", fallback)
            judge = _text(record, "judge", RULES)
            kind = str(record.get("kind") or POINT_RECORD)
            layout = layouts.of(kind)
            key = (str(record.get("uid", "")), sample_of(record))
            slot = data.slot(key)
            if judge != RULES and any(
                j.layout == "items" and (j.judge, j.model) == (judge, model) for j in slot.judged
            ):
                continue
            _add(data.judges, judge)
            _add(data.models, model)
            code, value = _cell(layout, record, model)
            if judge == RULES:
                slot.judged = [j for j in slot.judged if (j.judge, j.model) != (judge, model)]
            slot.judged.append(Judged(judge, model, kind, layout, code, ref, value))
            if isinstance(record.get("category"), str):
                data.categories.setdefault(key[0], record["category"])


def _read_failures(run: RunDir, data: RunData, files: Files) -> None:
    """Failed requests that nothing replaced since: what the run is still missing."""
    if not run.failures.is_file():
        return
    for ref, record in _records(run.failures, files):
        uid = record.get("uid")
        if uid is None:
            continue
        key = (str(uid), sample_of(record))
        slot = data.slot(key)
        model, judge = record.get("model"), record.get("judge")
        if not isinstance(model, str):
            continue
        if record.get("stage") == "generate":
            if model not in slot.answers and slot.answer_codes.get(model) != codes.ANSWER_FAILED:
                slot.answer_codes[model] = codes.ANSWER_FAILED
                slot.failures.append(ref)
                _add(data.models, model)
        elif isinstance(judge, str):
            if not any(j.judge == judge and j.model == model for j in slot.judged):
                slot.judged.append(Judged(judge, model, FAILURE, FAILURE, codes.FAILED, ref))
                _add(data.judges, judge)
