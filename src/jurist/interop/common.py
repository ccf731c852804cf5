"""What the Arena-Hard and AlpacaEval importers and the exporter share: read-only readers, writers, run.json.

Foreign files are read as they are (never repaired; a last line without newline is still a record), and
an import writes a whole new run directory: answers, judgments, battles.jsonl and a run.json saying where
the run came from.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.errors import InputError, JuristError
from jurist.store import RunDir, answer_text, iter_numbered_jsonl, parse_jsonl_bytes

StyleFn = Callable[[str], dict[str, Any]]


# Reading foreign files and our own run files (read-only) ---------------------------------------------------


def iter_foreign_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) pairs of a JSONL file written by another tool (a last line without newline
    is still a record, and the file is never modified)."""
    yield from parse_jsonl_bytes(path, path.read_bytes())


def read_json_document(path: Path) -> Any:
    """A whole JSON document, gzip'd when the name ends in ``.gz``."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return json.load(fh)
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (ValueError, OSError) as exc:
        raise InputError(path, "", f"not a readable JSON document ({exc})") from None


def json_or_gz(path: Path) -> Path | None:
    """``path`` or ``path.gz``, whichever exists."""
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def last_per_uid(path: Path) -> list[dict[str, Any]]:
    """Judgments of one file, the last line per uid (a re-judged question replaces the older verdict)."""
    latest: dict[str, dict[str, Any]] = {}
    for _, record in iter_numbered_jsonl(path, repair=False):
        latest[str(record.get("uid"))] = record
    return list(latest.values())


def read_run_answers(path: Path) -> dict[str, dict[str, Any]]:
    """uid -> answer of a run's answers file, read only (the last line per uid wins, as in a run)."""
    answers: dict[str, dict[str, Any]] = {}
    for line, record in iter_numbered_jsonl(path, repair=False):
        uid = record.get("uid", record.get("question_id"))
        text = answer_text(record)
        if uid is None or text is None:
            raise field_error(path, f"line {line}", "uid" if uid is None else "answer", "missing")
        answers[str(uid)] = {**record, "uid": str(uid), "answer": text}
    return answers


# Writing an imported run -----------------------------------------------------------------------------------


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """Write a whole JSONL file at once (temp file + rename); returns the number of records."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False))
            fh.write("\n")
            count += 1
    os.replace(tmp, path)
    return count


def field_error(path: Path, where: str, name: str, problem: str) -> InputError:
    """The error for a bad or missing field ``name`` of a foreign record."""
    return InputError(path, where, f"field '{name}': {problem}")


@dataclass
class ImportSummary:
    """What an import read and wrote; stored in run.json under ``import``."""

    format: str
    source: str
    bench: str
    answers: dict[str, int] = field(default_factory=dict)
    metadata_upstream: int = 0
    metadata_computed: int = 0
    judgments: dict[str, dict[str, int]] = field(default_factory=dict)
    invalid: dict[str, dict[str, int]] = field(default_factory=dict)
    invalid_by_category: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    null_games: int = 0
    invalid_labels: int = 0
    duplicates: int = 0
    battles: int = 0
    baselines: dict[str, str] = field(default_factory=dict)
    baseline_names: set[str] = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": self.source,
            "bench": self.bench,
            "answers": self.answers,
            "metadata": {"upstream": self.metadata_upstream, "computed": self.metadata_computed},
            "judgments": self.judgments,
            "invalid_questions": self.invalid,
            "null_games": self.null_games,
            "invalid_labels": self.invalid_labels,
            "duplicate_lines": self.duplicates,
            "battles": self.battles,
        }

    def dropped_questions(self) -> int:
        return sum(n for per_model in self.invalid.values() for n in per_model.values())


def count_invalid(summary: ImportSummary, judge: str, model: str, records: list[dict[str, Any]]) -> None:
    """Invalid judgments of one (judge, model), in total and per category (for ``show --category``)."""
    for record in records:
        if record["invalid"]:
            per_model = summary.invalid.setdefault(judge, {})
            per_model[model] = per_model.get(model, 0) + 1
            per_category = summary.invalid_by_category.setdefault(judge, {}).setdefault(model, {})
            per_category[record["category"]] = per_category.get(record["category"], 0) + 1


def check_new_run_dir(out: Path) -> None:
    """Imports write a whole run: refuse to mix it into an existing directory's files."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise JuristError(f"--out {out}: the directory exists and is not empty; choose a new one")


def fresh_run_dir(out: Path) -> RunDir:
    """The new, empty run directory an import writes into (checked again right before creating it)."""
    check_new_run_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    return RunDir(out)


def store_judgments(
    run: RunDir, judge: str, model: str, records: list[dict[str, Any]], summary: ImportSummary
) -> None:
    """Write judgments/<judge>/<model>.jsonl and count them (and the invalid ones) in the summary."""
    write_jsonl(run.judgments(judge, model), records)
    summary.judgments.setdefault(judge, {})[model] = len(records)
    count_invalid(summary, judge, model, records)


def add_missing_style(answers: Iterable[dict[str, Any]], style: StyleFn) -> int:
    """Compute style metadata for answers that carry none; returns how many were computed."""
    computed = 0
    for answer in answers:
        if "metadata" not in answer:
            answer["metadata"] = style(answer["answer"])
            answer["metadata_source"] = "computed"
            computed += 1
    return computed


def store_answers(
    run: RunDir, answers: dict[str, dict[str, dict[str, Any]]], style: StyleFn | None, summary: ImportSummary
) -> None:
    """Write answers/<model>.jsonl, computing style metadata only where upstream had none."""
    for model, per_uid in answers.items():
        summary.answers[model] = len(per_uid)
        if style is not None:
            summary.metadata_computed += add_missing_style(per_uid.values(), style)
        summary.metadata_upstream += sum(a.get("metadata_source") == "upstream" for a in per_uid.values())
        write_jsonl(run.answers(model), per_uid.values())


def write_run_json(run: RunDir, summary: ImportSummary, extra: dict[str, Any]) -> None:
    """run.json of an imported run: where it came from, its baselines and invalid counts, scoring defaults."""
    baselines = sorted(summary.baseline_names | set(summary.baselines.values()))
    fields: dict[str, Any] = {
        "bench": summary.bench,
        "score_family": "pairwise",  # an import holds battles against a baseline
        "models": sorted(summary.answers),
        "baseline": baselines[0] if len(baselines) == 1 else None,
        "baselines": baselines,
        "category_baselines": summary.baselines,
        "judges": sorted(summary.judgments),
        "invalid": summary.invalid,
        "invalid_by_category": summary.invalid_by_category,
        "scoring": {
            "method": "weighted-winrate",
            "strong_weight": 3,
            "bootstrap": 100,
            "seed": 0,
            "ci_level": 0.90,
        },
        "import": summary.as_dict(),
        **extra,
    }
    run_id = hashlib.sha256(f"{summary.source}{time.time()}".encode()).hexdigest()[:12]
    run.write_run_json(run_id, "imported", fields)
