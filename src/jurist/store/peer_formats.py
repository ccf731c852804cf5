"""Arena-Hard-Auto and AlpacaEval files, read into (and written from) jurist's run directory.

Imports turn a peer harness's answers and judgments into the artifacts a jurist run has (answers,
judgments, battles.jsonl, run.json), so ``jurist show`` scores them with the same code as our own runs and
the published numbers can be checked. The export writes Arena-Hard v2.0 shapes so upstream tools read ours.

Arena-Hard shapes handled: answers in v2.0 (``uid``, ``messages``, ``metadata``) and 2024
(``question_id``, ``choices``, ``conv_metadata``) form; judgments in v2.0 (``games[].judgment.answer``),
reformatted v0.1 and 2024 (``question_id``, ``games[].judgment`` as text) form. A question with a null or
unparseable game is kept as an invalid judgment and yields no battles (Arena-Hard v2 drops the question);
the counts go to run.json. Upstream style metadata is kept as is; it is only computed where absent.

AlpacaEval: ``results/<model>/model_outputs.json[.gz]`` and ``<annotator>/annotations.json[.gz]``. A soft
preference p (P(model beats baseline)) becomes two battles weighted p and 1 - p: the same likelihood as a
soft label, so win rate, Bradley-Terry and style control all see exactly AlpacaEval's numbers.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import platform
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist import __version__
from jurist.errors import InputError, JuristError
from jurist.judging.pairwise import battles_from_judgment, judgment_key
from jurist.judging.verdict import canonical_label, swap_label
from jurist.store.jsonl import iter_numbered_jsonl, parse_jsonl_bytes, write_json_atomic
from jurist.store.run_dir import RunDir, answer_text, file_stem

ARENA_HARD_BASELINES: dict[str, str] = {
    "hard_prompt": "o3-mini-2025-01-31",
    "coding": "o3-mini-2025-01-31",
    "math": "o3-mini-2025-01-31",
    "creative_writing": "gemini-2.0-flash-001",
    "arena-hard-v0.1": "gpt-4-0314",
}
"""Arena-Hard's baseline per question category (used when a judgment does not name its baseline)."""

ALPACA_ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
ALPACA_BASELINE = "gpt4_1106_preview"  # AlpacaEval 2.0's "gpt4_turbo" reference outputs
STYLE_GROUPS = ("header_count", "list_count", "bold_count")

StyleFn = Callable[[str], dict[str, Any]]


# ---------------------------------------------------------------------------------------------------------
# Reading foreign files (read-only: never repaired, and a last line without newline is still a record).


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


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
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


def _field_error(path: Path, where: str, name: str, problem: str) -> InputError:
    return InputError(path, where, f"field '{name}': {problem}")


# ---------------------------------------------------------------------------------------------------------
# Arena-Hard: answers.


def arena_hard_bench_dir(data_dir: Path, bench: str) -> Path:
    """The folder holding ``model_answer/``: DATA_DIR/data/<bench>, DATA_DIR/<bench> or DATA_DIR itself."""
    for candidate in (data_dir / "data" / bench, data_dir / bench, data_dir):
        if (candidate / "model_answer").is_dir() or (candidate / "model_judgment").is_dir():
            return candidate
    raise JuristError(f"{data_dir}: no data/{bench}/model_answer or model_judgment folder found")


def read_question_categories(bench_dir: Path) -> dict[str, str]:
    """uid -> category from ``question.jsonl`` when present (2024 files use ``question_id``)."""
    path = bench_dir / "question.jsonl"
    if not path.is_file():
        return {}
    categories: dict[str, str] = {}
    for _, record in iter_foreign_jsonl(path):
        uid = record.get("uid", record.get("question_id"))
        if uid is not None and isinstance(record.get("category"), str):
            categories[str(uid)] = record["category"]
    return categories


def default_baseline(category: str, bench: str) -> str | None:
    """Arena-Hard's baseline for a category, else for the benchmark (v0.1 has a single one)."""
    return ARENA_HARD_BASELINES.get(category) or ARENA_HARD_BASELINES.get(bench)


def check_style_metadata(metadata: Any, path: Path, where: str, name: str) -> dict[str, Any]:
    """Arena-Hard style metadata: ``token_len`` and the header/list/bold count dicts of integers."""
    if not isinstance(metadata, dict):
        raise _field_error(path, where, name, "expected an object")
    token_len = metadata.get("token_len")
    if not isinstance(token_len, int) or isinstance(token_len, bool) or token_len < 0:
        raise _field_error(path, where, f"{name}.token_len", "expected a non-negative integer")
    for group in STYLE_GROUPS:
        counts = metadata.get(group)
        if not isinstance(counts, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in counts.values()
        ):
            raise _field_error(path, where, f"{name}.{group}", "expected an object of integer counts")
    return metadata


def _uid_of(record: dict[str, Any], path: Path, where: str) -> str:
    uid = record.get("uid", record.get("question_id"))
    if not isinstance(uid, (str, int)) or isinstance(uid, bool):
        raise _field_error(path, where, "uid", "missing (nor 'question_id')")
    return str(uid)


def _message_parts(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(user prompt, reasoning) of a v2.0 ``messages`` answer."""
    prompt: str | None = None
    thought: str | None = None
    for message in record.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            prompt = content
        elif message.get("role") == "assistant" and isinstance(content, dict):
            thought = content.get("thought") if isinstance(content.get("thought"), str) else None
    return prompt, thought


def arena_answer(
    record: dict[str, Any], path: Path, line: int, *, categories: dict[str, str]
) -> dict[str, Any]:
    """One upstream answer line as a jurist answer record (upstream metadata kept when present)."""
    where = f"line {line}"
    uid = _uid_of(record, path, where)
    model = record.get("model", record.get("model_id")) or path.stem
    if not isinstance(model, str):
        raise _field_error(path, where, "model", "expected a string")
    text = answer_text(record)
    if text is None:
        raise _field_error(path, where, "messages", "no assistant answer (nor 'choices[0].turns[0].content')")
    prompt, thought = _message_parts(record)
    out: dict[str, Any] = {"uid": uid, "model": model}
    if uid in categories:
        out["category"] = categories[uid]
    out["answer"] = text
    if thought:
        out["reasoning"] = thought
    if prompt is not None:
        out["prompt"] = prompt
    for name in ("metadata", "conv_metadata"):
        if record.get(name) is not None:
            out["metadata"] = check_style_metadata(record[name], path, where, name)
            out["metadata_source"] = "upstream"
            break
    out["ans_id"] = record.get("ans_id", record.get("answer_id"))
    out["tstamp"] = record.get("tstamp")
    out["source"] = "arena-hard"
    return out


def read_arena_answers(bench_dir: Path, categories: dict[str, str]) -> dict[str, dict[str, dict[str, Any]]]:
    """model -> uid -> answer from every ``model_answer/*.jsonl`` (a later line for a uid wins)."""
    answers: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    folder = bench_dir / "model_answer"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        for line, record in iter_foreign_jsonl(path):
            answer = arena_answer(record, path, line, categories=categories)
            answers[answer["model"]][answer["uid"]] = answer
    return dict(answers)


def add_missing_style(answers: Iterable[dict[str, Any]], style: StyleFn) -> int:
    """Compute style metadata for answers that carry none; returns how many were computed."""
    computed = 0
    for answer in answers:
        if "metadata" not in answer:
            answer["metadata"] = style(answer["answer"])
            answer["metadata_source"] = "computed"
            computed += 1
    return computed


# ---------------------------------------------------------------------------------------------------------
# Arena-Hard: judgments.


def _game_text(game: dict[str, Any]) -> str | None:
    judgment = game.get("judgment")
    if isinstance(judgment, dict):
        judgment = judgment.get("answer")
    return judgment if isinstance(judgment, str) else None


def _arena_game(game: Any, number: int, a: str, b: str) -> tuple[dict[str, Any], str]:
    """A game in jurist's shape and its status: ``ok``, ``null`` (no verdict) or ``invalid`` (bad label)."""
    if not isinstance(game, dict) or game.get("score") is None:
        raw = _game_text(game) if isinstance(game, dict) else None
        return {"game": number, "a": a, "b": b, "label": None, "raw": raw}, "null"
    score = game["score"]
    label = canonical_label(score) if isinstance(score, str) else None
    record = {"game": number, "a": a, "b": b, "label": label, "raw": _game_text(game)}
    if label is None:
        record["upstream_score"] = score
        return record, "invalid"
    return record, "ok"


def arena_judgment(
    record: dict[str, Any],
    path: Path,
    line: int,
    *,
    judge: str,
    bench: str,
    categories: dict[str, str],
) -> tuple[dict[str, Any], list[str]]:
    """One upstream judgment line as a jurist judgment record, plus the status of each game."""
    where = f"line {line}"
    uid = _uid_of(record, path, where)
    model = record.get("model") or path.stem
    if not isinstance(model, str):
        raise _field_error(path, where, "model", "expected a string")
    category = record.get("category") or categories.get(uid) or bench
    if not isinstance(category, str):
        raise _field_error(path, where, "category", "expected a string")
    baseline = record.get("baseline") or default_baseline(category, bench)
    if not isinstance(baseline, str):
        raise _field_error(
            path, where, "baseline", f"missing, and category {category!r} has no known baseline"
        )
    games = record.get("games")
    if not isinstance(games, list) or len(games) not in (1, 2):
        raise _field_error(path, where, "games", "expected a list of one or two games")
    sides = [(baseline, model), (model, baseline)]
    parsed = [_arena_game(game, n + 1, *sides[n]) for n, game in enumerate(games)]
    statuses = [status for _, status in parsed]
    out = {
        "key": judgment_key(judge, model, baseline, uid, "", "", "import:arena-hard"),
        "uid": uid,
        "category": category,
        "judge": judge,
        "model": model,
        "baseline": baseline,
        "protocol": "arena-hard-import",
        "games": [game for game, _ in parsed],
        "invalid": any(status != "ok" for status in statuses),
        "source": "arena-hard",
    }
    return out, statuses


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


def read_arena_judgments(
    bench_dir: Path,
    *,
    bench: str,
    judges: list[str] | None,
    categories: dict[str, str],
    summary: ImportSummary,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(judge, model) -> judgments, from ``model_judgment/<judge>/*.jsonl`` (a repeated uid: last wins)."""
    root = bench_dir / "model_judgment"
    available = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    wanted = judges or available
    missing = [j for j in wanted if j not in available]
    if missing:
        raise JuristError(f"{root}: no judgments for judge(s) {', '.join(missing)} (found: {available})")
    out: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for judge in wanted:
        for path in sorted((root / judge).glob("*.jsonl")):
            for line, record in iter_foreign_jsonl(path):
                judgment, statuses = arena_judgment(
                    record, path, line, judge=judge, bench=bench, categories=categories
                )
                per_model = out[(judge, judgment["model"])]
                summary.duplicates += judgment["uid"] in per_model
                per_model[judgment["uid"]] = judgment
                summary.null_games += statuses.count("null")
                summary.invalid_labels += statuses.count("invalid")
    return {key: list(records.values()) for key, records in out.items()}


def _count_invalid(summary: ImportSummary, judge: str, model: str, records: list[dict[str, Any]]) -> None:
    """Invalid judgments of one (judge, model), in total and per category (for ``show --category``)."""
    for record in records:
        if record["invalid"]:
            per_model = summary.invalid.setdefault(judge, {})
            per_model[model] = per_model.get(model, 0) + 1
            per_category = summary.invalid_by_category.setdefault(judge, {}).setdefault(model, {})
            per_category[record["category"]] = per_category.get(record["category"], 0) + 1


def _check_new_run_dir(out: Path) -> None:
    """Imports write a whole run: refuse to mix it into an existing directory's files."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise JuristError(f"--out {out}: the directory exists and is not empty; choose a new one")


def _fresh_run_dir(out: Path) -> RunDir:
    _check_new_run_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    return RunDir(out)


def _store_answers(
    run: RunDir, answers: dict[str, dict[str, dict[str, Any]]], style: StyleFn | None, summary: ImportSummary
) -> None:
    """Write answers/<model>.jsonl, computing style metadata only where upstream had none."""
    for model, per_uid in answers.items():
        summary.answers[model] = len(per_uid)
        if style is not None:
            summary.metadata_computed += add_missing_style(per_uid.values(), style)
        summary.metadata_upstream += sum(a.get("metadata_source") == "upstream" for a in per_uid.values())
        _write_jsonl(run.answers(model), per_uid.values())


def _store_arena_judgments(
    run: RunDir, judgments: dict[tuple[str, str], list[dict[str, Any]]], summary: ImportSummary
) -> list[dict[str, Any]]:
    """Write judgments/<judge>/<model>.jsonl and return the battles they give."""
    battles: list[dict[str, Any]] = []
    for (judge, model), records in sorted(judgments.items()):
        _write_jsonl(run.judgments(judge, model), records)
        summary.judgments.setdefault(judge, {})[model] = len(records)
        _count_invalid(summary, judge, model, records)
        for record in records:
            summary.baselines.setdefault(record["category"], record["baseline"])
            summary.baseline_names.add(record["baseline"])
            battles.extend(battles_from_judgment(record))
    return battles


def _write_run_json(run: RunDir, summary: ImportSummary, extra: dict[str, Any]) -> None:
    """run.json of an imported run: where it came from, its baselines and invalid counts, scoring defaults."""
    baselines = sorted(summary.baseline_names | set(summary.baselines.values()))
    data: dict[str, Any] = {
        "run_id": hashlib.sha256(f"{summary.source}{time.time()}".encode()).hexdigest()[:12],
        "status": "imported",
        "jurist_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "bench": summary.bench,
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
        "updated": time.time(),
        **extra,
    }
    write_json_atomic(run.run_json, data)


def import_arena_hard(
    data_dir: Path,
    out: Path,
    *,
    bench: str,
    judges: list[str] | None = None,
    style: StyleFn | None = None,
) -> ImportSummary:
    """Write a jurist run directory from an Arena-Hard data folder (answers, judgments, battles, run.json).

    ``style`` computes metadata for answers without any (None: leave them without).
    """
    _check_new_run_dir(out)
    bench_dir = arena_hard_bench_dir(data_dir, bench)
    categories = read_question_categories(bench_dir)
    summary = ImportSummary(format="arena-hard", source=str(bench_dir), bench=bench)
    answers = read_arena_answers(bench_dir, categories)
    judgments = read_arena_judgments(
        bench_dir, bench=bench, judges=judges, categories=categories, summary=summary
    )
    run = _fresh_run_dir(out)
    _store_answers(run, answers, style, summary)
    battles = _store_arena_judgments(run, judgments, summary)
    if not judgments:
        for category in sorted(set(categories.values()) or {bench}):
            baseline = default_baseline(category, bench)
            if baseline:
                summary.baselines[category] = baseline
    summary.battles = _write_jsonl(run.battles, battles)
    _write_run_json(run, summary, {})
    return summary


# ---------------------------------------------------------------------------------------------------------
# Arena-Hard: export (v2.0 shapes).


def _oriented_game(game: dict[str, Any], want_a: str) -> dict[str, Any] | None:
    """A jurist game as an upstream game with ``want_a`` in position A (labels mirrored if needed)."""
    label = game.get("label")
    raw = game.get("raw")
    if label is None and raw is None:
        return None
    if label is not None and game.get("a") != want_a:
        label = swap_label(label)
    return {"score": label, "judgment": {"answer": raw or ""}}


def arena_judgment_record(judgment: dict[str, Any]) -> dict[str, Any] | None:
    """A jurist pairwise judgment in Arena-Hard v2.0's shape (None for judgments without games)."""
    games = judgment.get("games")
    if not isinstance(games, list) or not games:
        return None
    baseline, model = judgment["baseline"], judgment["model"]
    baseline_first = [g for g in games if g.get("a") == baseline]
    model_first = [g for g in games if g.get("a") != baseline]
    ordered = (baseline_first + model_first)[:2]
    wanted = [baseline, model]
    return {
        "uid": judgment["uid"],
        "category": judgment.get("category", "default"),
        "judge": judgment["judge"],
        "model": model,
        "baseline": baseline,
        "games": [_oriented_game(game, wanted[n]) for n, game in enumerate(ordered)],
    }


def arena_answer_record(answer: dict[str, Any], style: StyleFn | None) -> dict[str, Any]:
    """A jurist answer in Arena-Hard v2.0's ``model_answer`` shape (style metadata computed if absent)."""
    content: dict[str, Any] = {"answer": answer["answer"]}
    if answer.get("reasoning"):
        content["thought"] = answer["reasoning"]
    messages: list[dict[str, Any]] = []
    if isinstance(answer.get("prompt"), str):
        messages.append({"role": "user", "content": answer["prompt"]})
    messages.append({"role": "assistant", "content": content})
    metadata = answer.get("metadata")
    if metadata is None and style is not None:
        metadata = style(answer["answer"])
    record: dict[str, Any] = {
        "uid": answer["uid"],
        "ans_id": answer.get("ans_id") or hashlib.sha256(answer["answer"].encode()).hexdigest()[:22],
        "model": answer["model"],
        "messages": messages,
        "tstamp": answer.get("tstamp") or time.time(),
    }
    if metadata is not None:
        record["metadata"] = metadata
    return record


@dataclass
class ExportSummary:
    """What an export wrote."""

    bench_dir: Path
    answers: dict[str, int] = field(default_factory=dict)
    judgments: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped_judgments: int = 0


def _last_per_uid(path: Path) -> list[dict[str, Any]]:
    """Judgments of one file, the last line per uid (a re-judged question replaces the older verdict)."""
    latest: dict[str, dict[str, Any]] = {}
    for _, record in iter_numbered_jsonl(path, repair=False):
        latest[str(record.get("uid"))] = record
    return list(latest.values())


def _read_run_answers(path: Path) -> dict[str, dict[str, Any]]:
    """uid -> answer of a run's answers file, read only (the last line per uid wins, as in a run)."""
    answers: dict[str, dict[str, Any]] = {}
    for line, record in iter_numbered_jsonl(path, repair=False):
        uid = record.get("uid", record.get("question_id"))
        text = answer_text(record)
        if uid is None or text is None:
            raise _field_error(path, f"line {line}", "uid" if uid is None else "answer", "missing")
        answers[str(uid)] = {**record, "uid": str(uid), "answer": text}
    return answers


def _export_answers(run: RunDir, bench_dir: Path, style: StyleFn | None, summary: ExportSummary) -> None:
    folder = run.root / "answers"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        answers = _read_run_answers(path)
        if not answers:
            continue
        model = next(iter(answers.values())).get("model") or path.stem
        records = [
            arena_answer_record({**a, "model": a.get("model") or model}, style) for a in answers.values()
        ]
        summary.answers[model] = _write_jsonl(
            bench_dir / "model_answer" / f"{file_stem(model)}.jsonl", records
        )


def _export_judgments(run: RunDir, bench_dir: Path, summary: ExportSummary) -> None:
    root = run.root / "judgments"
    for path in sorted(root.glob("*/*.jsonl")) if root.is_dir() else []:
        records = []
        for judgment in _last_per_uid(path):
            converted = arena_judgment_record(judgment)
            if converted is None:
                summary.skipped_judgments += 1
            else:
                records.append(converted)
        if records:
            judge, model = records[0]["judge"], records[0]["model"]
            target = bench_dir / "model_judgment" / file_stem(judge) / f"{file_stem(model)}.jsonl"
            summary.judgments.setdefault(judge, {})[model] = _write_jsonl(target, records)


def export_arena_hard(
    run_root: Path, out: Path, *, bench: str, style: StyleFn | None = None
) -> ExportSummary:
    """Write a run's answers and pairwise judgments as ``<out>/data/<bench>/model_answer|model_judgment``."""
    run = RunDir(run_root)
    if not run.root.is_dir():
        raise JuristError(f"{run_root}: no such run directory")
    bench_dir = out / "data" / bench
    summary = ExportSummary(bench_dir)
    _export_answers(run, bench_dir, style, summary)
    _export_judgments(run, bench_dir, summary)
    return summary


# ---------------------------------------------------------------------------------------------------------
# AlpacaEval.


def alpaca_uid(instruction: str) -> str:
    """A stable question id for an AlpacaEval instruction (outputs files carry none)."""
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:16]


def _alpaca_rows(path: Path) -> list[dict[str, Any]]:
    rows = read_json_document(path)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError(path, "", "expected a JSON list of objects")
    return rows


def _alpaca_text(row: dict[str, Any], name: str, path: Path, index: int) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise _field_error(path, f"record {index}", name, "expected a string")
    return value


def read_alpaca_outputs(path: Path, model: str) -> dict[str, dict[str, Any]]:
    """uid -> jurist answer from ``model_outputs.json[.gz]`` (instruction as prompt, dataset as category)."""
    answers: dict[str, dict[str, Any]] = {}
    for index, row in enumerate(_alpaca_rows(path)):
        instruction = _alpaca_text(row, "instruction", path, index)
        uid = alpaca_uid(instruction)
        answers[uid] = {
            "uid": uid,
            "model": model,
            "category": str(row.get("dataset") or "default"),
            "answer": _alpaca_text(row, "output", path, index),
            "prompt": instruction,
            "source": "alpaca-eval",
        }
    return answers


def alpaca_probability(preference: Any, path: Path, index: int) -> float | None:
    """P(model output wins) from AlpacaEval's preference (1..2; legacy 0 is a tie); None when missing."""
    if preference is None:
        return None
    if not isinstance(preference, (int, float)) or isinstance(preference, bool):
        raise _field_error(path, f"record {index}", "preference", "expected a number in [1, 2]")
    value = float(preference)
    if math.isnan(value):
        return None
    if value == 0.0:
        return 0.5
    if not 1.0 <= value <= 2.0:
        raise _field_error(path, f"record {index}", "preference", f"{value} is outside [1, 2]")
    return value - 1.0


def battles_from_preference(judgment: dict[str, Any]) -> list[dict[str, Any]]:
    """Two battles weighted p and 1 - p for a soft preference p = P(model beats baseline)."""
    p = judgment.get("p_model")
    if judgment.get("invalid") or p is None:
        return []
    common = {
        "model_a": judgment["baseline"],
        "model_b": judgment["model"],
        "uid": judgment["uid"],
        "category": judgment.get("category", "default"),
        "judge": judgment["judge"],
        "source": "llm-judge",
    }
    out = []
    for winner, weight in (("model_b", p), ("model_a", 1.0 - p)):
        if weight > 0.0:
            out.append({**common, "winner": winner, "weight": weight})
    return out


def read_alpaca_annotations(
    path: Path, *, model: str, annotator: str, baseline: str
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Judgments (one per instruction) and the outputs the annotations embed (uid -> answer, for fallback)."""
    judgments: dict[str, dict[str, Any]] = {}
    embedded: dict[str, dict[str, Any]] = {}
    for index, row in enumerate(_alpaca_rows(path)):
        instruction = _alpaca_text(row, "instruction", path, index)
        uid = alpaca_uid(instruction)
        p = alpaca_probability(row.get("preference"), path, index)
        category = str(row.get("dataset") or "default")
        judgments[uid] = {
            "key": judgment_key(annotator, model, baseline, uid, "", "", "import:alpaca-eval"),
            "uid": uid,
            "category": category,
            "judge": annotator,
            "model": model,
            "baseline": baseline,
            "protocol": "alpaca-eval-import",
            "preference": row.get("preference"),
            "p_model": p,
            "invalid": p is None,
            "source": "alpaca-eval",
        }
        for side, who in (("output_1", baseline), ("output_2", model)):
            if isinstance(row.get(side), str):
                embedded.setdefault(who, {})[uid] = {
                    "uid": uid,
                    "model": who,
                    "category": category,
                    "answer": row[side],
                    "prompt": instruction,
                    "source": "alpaca-eval",
                }
    return list(judgments.values()), embedded


def _alpaca_baseline(results_dir: Path, annotator: str) -> str:
    """The reference generator named in the annotations (``generator_1``), else AlpacaEval 2.0's."""
    for model_dir in sorted(results_dir.iterdir()):
        path = json_or_gz(model_dir / annotator / "annotations.json")
        if path is not None:
            rows = _alpaca_rows(path)
            names = Counter(str(r.get("generator_1")) for r in rows if r.get("generator_1"))
            if names:
                return names.most_common(1)[0][0]
    return ALPACA_BASELINE


def read_alpaca_results(
    results_dir: Path, *, annotator: str, baseline: str
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """(model -> uid -> answer, model -> judgments) from every ``results/<model>/`` folder.

    Outputs come from ``model_outputs.json[.gz]``; an output found only inside the annotations is used too.
    """
    answers: dict[str, dict[str, dict[str, Any]]] = {}
    embedded: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    judgments: dict[str, list[dict[str, Any]]] = {}
    for model_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        model = model_dir.name  # not generator_2: NullModel's annotations call it "example"
        outputs = json_or_gz(model_dir / "model_outputs.json")
        if outputs is not None:
            answers[model] = read_alpaca_outputs(outputs, model)
        annotations = json_or_gz(model_dir / annotator / "annotations.json")
        if annotations is not None and model != baseline:
            judgments[model], inline = read_alpaca_annotations(
                annotations, model=model, annotator=annotator, baseline=baseline
            )
            for who, per_uid in inline.items():
                for uid, answer in per_uid.items():
                    embedded[who].setdefault(uid, answer)
    for who, per_uid in embedded.items():
        for uid, answer in per_uid.items():
            answers.setdefault(who, {}).setdefault(uid, answer)
    return answers, judgments


def _store_alpaca_judgments(
    run: RunDir, judgments: dict[str, list[dict[str, Any]]], order: list[str], summary: ImportSummary
) -> list[dict[str, Any]]:
    """Write judgments/<annotator>/<model>.jsonl in the baseline's instruction order; return the battles."""
    position = {uid: n for n, uid in enumerate(order)}
    battles: list[dict[str, Any]] = []
    for model, records in sorted(judgments.items()):
        records.sort(key=lambda r: position.get(r["uid"], len(position)))
        judge = records[0]["judge"] if records else ALPACA_ANNOTATOR
        _write_jsonl(run.judgments(judge, model), records)
        summary.judgments.setdefault(judge, {})[model] = len(records)
        _count_invalid(summary, judge, model, records)
        for record in records:
            battles.extend(battles_from_preference(record))
    return battles


def import_alpaca_eval(
    results_dir: Path, out: Path, *, annotator: str = ALPACA_ANNOTATOR, style: StyleFn | None = None
) -> ImportSummary:
    """Write a jurist run directory from AlpacaEval ``results/`` (outputs and per-instruction preferences)."""
    if not results_dir.is_dir():
        raise JuristError(f"{results_dir}: no such results directory")
    _check_new_run_dir(out)
    baseline = _alpaca_baseline(results_dir, annotator)
    summary = ImportSummary(format="alpaca-eval", source=str(results_dir), bench="alpaca-eval")
    answers, judgments = read_alpaca_results(results_dir, annotator=annotator, baseline=baseline)
    run = _fresh_run_dir(out)
    _store_answers(run, answers, style, summary)
    battles = _store_alpaca_judgments(run, judgments, list(answers.get(baseline, {})), summary)
    summary.baselines = {"default": baseline}
    summary.battles = _write_jsonl(run.battles, battles)
    _write_run_json(run, summary, {"annotator": annotator})
    return summary
