"""Runs joined into the rows the browser lists, the compact index it filters, and one payload per row.

A row is one (benchmark, uid, sample): the same question in two runs (two checkpoints of a sweep) is one
row with both runs' answers and verdicts, so the page can show what changed. The index is small (titles and
one character per cell, see :mod:`jurist.view.codes`); a row's payload (prompt, answers, judgments with
every raw field) is built from disk when asked, so a 100k-answer run is never held whole in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.store import answer_text
from jurist.view import codes
from jurist.view.card import card_view
from jurist.view.collect import Files, Judged, RunData, read_run
from jurist.view.rubric import scale_of

TITLE_CHARS = 160
META_CHARS = 4000
"""A question's metadata field larger than this (as JSON) is left out of its payload (JudgeBench pairs)."""
_RUN_FIELDS = (
    "run_id",
    "status",
    "bench",
    "bench_options",
    "n_questions",
    "samples",
    "judge_kind",
    "rule_suite",
    "protocols",
    "baselines",
    "score_family",
    "bench_path",
    "jurist_version",
    "updated",
    "failures",
    "usage_total",
)


@dataclass(frozen=True)
class Row:
    bench: int
    uid: str
    sample: int


@dataclass(frozen=True)
class QuestionText:
    prompt: str
    metadata: dict[str, Any]
    criteria: dict[str, str]
    """A rubric criterion's name -> its description (WritingBench's checklist), shown beside its grade."""


def _names(runs: Sequence[RunData], attr: str) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for name in getattr(run, attr):
            seen.setdefault(name, None)
    return list(seen)


def _run_names(roots: Sequence[Path]) -> list[str]:
    """Short names for the runs; parent folders are added while two names would be the same."""
    depth = 1
    while True:
        names = ["/".join(root.resolve().parts[-depth:]) for root in roots]
        if len(set(names)) == len(names) or depth > 8:
            return names
        depth += 1


class ViewData:
    """The runs of one ``jurist view``: rows, the index, payloads and search text."""

    def __init__(self, roots: Sequence[Path], *, prompts: bool = True) -> None:
        if not roots:
            raise JuristError("jurist view: name at least one run directory")
        self.files = Files()
        self.runs = [read_run(Path(root), self.files) for root in roots]
        self.run_names = _run_names([run.root for run in self.runs])
        self.models = _names(self.runs, "models")
        self.judges = _names(self.runs, "judges")
        self.benches = list(dict.fromkeys(run.bench for run in self.runs))
        self.questions: dict[tuple[str, str], QuestionText] = {}
        self._order: dict[tuple[str, str], int] = {}
        self._loaded: set[tuple[str, str]] = set()
        if prompts:
            for run in self.runs:
                self._load_prompts(run)
        self.rows = self._rows()
        self.categories = list(dict.fromkeys(self.category(row) for row in self.rows))

    def _load_prompts(self, run: RunData) -> None:
        """Prompts are not in a run's records: they come from the copy a run of a question file keeps
        (``questions_kept``), else from the benchmark the run names, else from the question file whose path
        run.json records (``bench_path``); when none can be read, the run says why (``prompt_note``)."""
        from jurist.benchmarks import benchmark_names, load_benchmark

        kept, path = run.info.get("questions_kept"), run.info.get("bench_path")
        if isinstance(kept, str) and (run.root / kept).is_file():
            self._kept_questions(run, run.root / kept)
            return
        options = {str(k): str(v) for k, v in dict(run.info.get("bench_options") or {}).items()}
        name = str(run.info.get("bench") or "")
        if name not in benchmark_names() and isinstance(path, str):
            name, options = path, {}
            if not Path(path).is_file():
                self._no_prompts(
                    run,
                    f"the question file this run was made from, {path}, is not there any more (moved or "
                    "deleted) and the run directory keeps no copy of its questions",
                )
                return
        elif name and name not in benchmark_names() and not Path(name).is_file():
            self._no_prompts(
                run,
                f"the run names its questions {name!r}, which is no benchmark jurist knows, and its run.json "
                "records no question file (runs made before jurist kept their questions)",
            )
            return
        loaded = (name, json.dumps(options, sort_keys=True))
        if not name or loaded in self._loaded:
            return
        self._loaded.add(loaded)
        try:
            bench = load_benchmark(name, options)
        except (JuristError, OSError, ValueError) as exc:
            self._no_prompts(run, f"benchmark {name!r} could not be loaded ({exc})")
            return
        for position, question in enumerate(bench.questions):
            key = (run.bench, question.uid)
            text = QuestionText(question.prompt, _small(question.metadata), _criteria(question.metadata))
            self.questions.setdefault(key, text)
            self._order.setdefault(key, position)
            run.categories.setdefault(question.uid, question.category)

    def _kept_questions(self, run: RunData, path: Path) -> None:
        """The questions a run of a question file kept (run/kept_questions.py): uid, category, prompt."""
        from jurist.store import iter_jsonl

        for position, row in enumerate(iter_jsonl(path, repair=False)):
            if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
                continue
            uid = str(row.get("uid"))
            key = (run.bench, uid)
            self.questions.setdefault(key, QuestionText(row["prompt"], {}, {}))
            self._order.setdefault(key, position)
            if isinstance(row.get("category"), str):
                run.categories.setdefault(uid, row["category"])

    @staticmethod
    def _no_prompts(run: RunData, why: str) -> None:
        run.prompt_note = f"prompts are not shown: {why}"
        run.notes.append(run.prompt_note)

    def _rows(self) -> list[Row]:
        seen: dict[tuple[int, str, int], int] = {}
        for run in self.runs:
            bench = self.benches.index(run.bench)
            for uid, sample in run.slots:
                seen.setdefault((bench, uid, sample), len(seen))
        unknown = len(self._order)

        def order(key: tuple[int, str, int]) -> tuple[int, int, int, int]:
            bench, uid, sample = key
            position = self._order.get((self.benches[bench], uid), unknown)
            return (bench, position, seen[key] if position == unknown else 0, sample)

        return [Row(b, u, s) for b, u, s in sorted(seen, key=order)]

    def category(self, row: Row) -> str:
        for run in self.runs:
            if run.bench == self.benches[row.bench] and row.uid in run.categories:
                return run.categories[row.uid]
        return "default"

    def _title(self, row: Row) -> str:
        question = self.questions.get((self.benches[row.bench], row.uid))
        return " ".join(question.prompt.split())[:TITLE_CHARS] if question else ""

    def index(self, mode: str, summary: dict[str, Any]) -> dict[str, Any]:
        """What the page loads first: names, one entry per row, the cell codes, the summary."""
        n_models, n_judges = len(self.models), len(self.judges)
        model_at = {name: k for k, name in enumerate(self.models)}
        judge_at = {name: k for k, name in enumerate(self.judges)}
        cat_at = {name: k for k, name in enumerate(self.categories)}
        cells = bytearray(len(self.rows) * len(self.runs) * n_models * n_judges)
        answers = bytearray(len(self.rows) * len(self.runs) * n_models)
        for i, row in enumerate(self.rows):
            for r, run in enumerate(self.runs):
                slot = run.slots.get((row.uid, row.sample)) if run.bench == self.benches[row.bench] else None
                if slot is None:
                    continue
                base = (i * len(self.runs) + r) * n_models
                for model, code in slot.answer_codes.items():
                    answers[base + model_at[model]] = code
                for judged in slot.judged:
                    at = (base + model_at[judged.model]) * n_judges + judge_at[judged.judge]
                    cells[at] = codes.merge_codes(cells[at], judged.code)
        return {
            "v": 1,
            "mode": mode,
            "runs": [self._run_entry(r, run) for r, run in enumerate(self.runs)],
            "models": self.models,
            "judges": self.judges,
            "cats": self.categories,
            "benches": self.benches,
            "rows": {
                "uid": [row.uid for row in self.rows],
                "sample": [row.sample for row in self.rows],
                "bench": [row.bench for row in self.rows],
                "cat": [cat_at[self.category(row)] for row in self.rows],
                "title": [self._title(row) for row in self.rows],
            },
            "dims": [len(self.runs), n_models, n_judges],
            "cells": codes.encode(cells),
            "ans": codes.encode(answers),
            "summary": summary,
            "cards": [card_view(run, self.files, self._prompt_of(run)) for run in self.runs],
        }

    def _prompt_of(self, run: RunData) -> Callable[[str], str | None]:
        def prompt(uid: str) -> str | None:
            found = self.questions.get((run.bench, uid))
            return found.prompt if found else None

        return prompt

    def _run_entry(self, r: int, run: RunData) -> dict[str, Any]:
        info = {key: run.info[key] for key in _RUN_FIELDS if key in run.info}
        return {
            "name": self.run_names[r],
            "path": str(run.root),
            "bench": self.benches.index(run.bench),
            "models": [self.models.index(m) for m in run.models],
            "judges": [self.judges.index(j) for j in run.judges],
            "baselines": run.baselines(),
            "prompt_note": run.prompt_note,
            "info": info,
            "notes": run.notes[:50],
        }

    def payload(self, i: int) -> dict[str, Any]:
        """Row ``i`` whole: prompt, every run's answers, judgments (raw fields) and failures."""
        row = self.rows[i]
        bench = self.benches[row.bench]
        question = self.questions.get((bench, row.uid))
        runs: list[dict[str, Any] | None] = []
        for run in self.runs:
            slot = run.slots.get((row.uid, row.sample)) if run.bench == bench else None
            if slot is None:
                runs.append(None)
                continue
            answers = {model: _answer(self.files.read(ref)) for model, ref in slot.answers.items()}
            baseline_slot = run.slots.get((row.uid, 0))
            for model in run.baselines():  # baselines answer once (sample 0) for every sample
                if model not in answers and baseline_slot and model in baseline_slot.answers:
                    answers[model] = _answer(self.files.read(baseline_slot.answers[model]))
            judged = [_judged(j, self.files.read(j.ref)) for j in slot.judged]
            failures = [self.files.read(ref) for ref in slot.failures]
            runs.append({"answers": answers, "judged": judged, "failures": failures})
        return {
            "row": i,
            "uid": row.uid,
            "sample": row.sample,
            "bench": bench,
            "category": self.category(row),
            "prompt": question.prompt if question else None,
            "meta": question.metadata if question else {},
            "criteria": question.criteria if question else {},
            "runs": runs,
        }

    def payloads(self) -> Iterator[dict[str, Any]]:
        for i in range(len(self.rows)):
            yield self.payload(i)


def search_text(payload: dict[str, Any]) -> str:
    """The words of a row that full-text search looks in: prompt, answers, judge replies, reasons."""
    parts: list[str] = [str(payload.get("uid", "")), str(payload.get("prompt") or "")]
    for run in payload["runs"]:
        if run is None:
            continue
        for answer in run["answers"].values():
            parts.append(str(answer.get("answer", "")))
        for judged in run["judged"]:
            _strings(judged["record"], parts, depth=0)
    return "\n".join(parts)


def _strings(value: Any, out: list[str], depth: int) -> None:
    """Every long-enough string inside a record (judge replies, rubric reasons), hashes and keys aside."""
    if depth > 6:
        return
    if isinstance(value, str):
        if len(value) > 24 or " " in value:
            out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("key", "prompt_hash", "answer_hash", "baseline_hash"):
                _strings(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, depth + 1)


def _answer(record: dict[str, Any]) -> dict[str, Any]:
    """An answer record in jurist's shape; Arena-Hard's ``messages``/``choices`` copies are dropped."""
    text = answer_text(record)
    if text is not None and not isinstance(record.get("answer"), str):
        record = {k: v for k, v in record.items() if k not in ("messages", "choices")} | {"answer": text}
    return record


def _small(metadata: Any) -> dict[str, Any]:
    """The question metadata worth showing (checker kwargs, tags), each field at most META_CHARS as JSON."""
    kept: dict[str, Any] = {}
    for key, value in dict(metadata or {}).items():
        try:
            size = len(json.dumps(value, ensure_ascii=False, default=str))
        except (TypeError, ValueError):
            continue
        if size <= META_CHARS:
            kept[str(key)] = json.loads(json.dumps(value, default=str))
    return kept


def _criteria(metadata: Any) -> dict[str, str]:
    """Each checklist criterion's description by its name (WritingBench's ``checklist``), however long."""
    checklist = dict(metadata or {}).get("checklist")
    found: dict[str, str] = {}
    for entry in checklist if isinstance(checklist, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            described = entry.get("criteria_description")
            found[entry["name"]] = described if isinstance(described, str) else ""
    return found


def _judged(judged: Judged, record: dict[str, Any]) -> dict[str, Any]:
    """One judgment as the question page draws it; an ``items`` one with its answer's score and its
    suite's grading (``points`` or ``criteria``: :class:`jurist.benchmarks.RubricSuite`), so the page never
    asks which benchmark wrote it."""
    shown: dict[str, Any] = {"judge": judged.judge, "model": judged.model, "kind": judged.kind}
    shown |= {"layout": judged.layout, "record": record}
    if judged.layout == "items":
        shown |= {"score": judged.value, "grading": scale_of(record).grading}
    return shown
