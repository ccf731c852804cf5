"""Arena-Hard-Auto files imported as a jurist run (the export: :mod:`jurist.interop.arena_hard_export`).

An import writes what a jurist run has (answers, judgments, battles.jsonl, run.json), so ``jurist show``
scores it like our own runs; the export lets upstream tools read ours. Answers: v2.0 (``uid``,
``messages``, ``metadata``) and 2024 (``question_id``, ``choices``, ``conv_metadata``) form. Judgments:
v2.0 (``games[].judgment.answer``), reformatted v0.1 and 2024 (``games[].judgment`` as text) form; a 2024
score in brackets (Arena-Hard-Local's ``[A>B]``) is read with its brackets removed, as its show_result.py
does. A question with a null or unparseable game is kept as an invalid judgment: v2.0 and reformatted
judgments yield no battles for it (Arena-Hard v2 drops the question), 2024 ones (``question_id``) keep the
other game (v0.1's show_result drops only the bad game); the counts go to run.json. Upstream style
metadata is kept, computed only if absent.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from jurist.benchmarks import default_baseline, official_arena_scoring
from jurist.errors import JuristError
from jurist.interop.common import (
    ImportSummary,
    StyleFn,
    check_new_run_dir,
    field_error,
    fresh_run_dir,
    iter_foreign_jsonl,
    store_answers,
    store_judgments,
    write_jsonl,
    write_run_json,
)
from jurist.judging import battles_from_judgment, canonical_label, judgment_key
from jurist.store import RunDir, answer_text

STYLE_GROUPS = ("header_count", "list_count", "bold_count")


# Answers ---------------------------------------------------------------------------------------------------


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


def check_style_metadata(metadata: Any, path: Path, where: str, name: str) -> dict[str, Any]:
    """Arena-Hard style metadata: ``token_len`` and the header/list/bold count dicts of integers."""
    if not isinstance(metadata, dict):
        raise field_error(path, where, name, "expected an object")
    token_len = metadata.get("token_len")
    if not isinstance(token_len, int) or isinstance(token_len, bool) or token_len < 0:
        raise field_error(path, where, f"{name}.token_len", "expected a non-negative integer")
    for group in STYLE_GROUPS:
        counts = metadata.get(group)
        if not isinstance(counts, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in counts.values()
        ):
            raise field_error(path, where, f"{name}.{group}", "expected an object of integer counts")
    return metadata


def _uid_of(record: dict[str, Any], path: Path, where: str) -> str:
    uid = record.get("uid", record.get("question_id"))
    if not isinstance(uid, (str, int)) or isinstance(uid, bool):
        raise field_error(path, where, "uid", "missing (nor 'question_id')")
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
        raise field_error(path, where, "model", "expected a string")
    text = answer_text(record)
    if text is None:
        raise field_error(path, where, "messages", "no assistant answer (nor 'choices[0].turns[0].content')")
    prompt, thought = _message_parts(record)
    out: dict[str, Any] = {"kind": "answer", "uid": uid, "sample": 0, "model": model}
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


# Judgments -------------------------------------------------------------------------------------------------


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
    label = canonical_label(score.replace("[", "").replace("]", "")) if isinstance(score, str) else None
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
        raise field_error(path, where, "model", "expected a string")
    category = record.get("category") or categories.get(uid) or bench
    if not isinstance(category, str):
        raise field_error(path, where, "category", "expected a string")
    baseline = record.get("baseline") or default_baseline(category, bench)
    if not isinstance(baseline, str):
        raise field_error(
            path, where, "baseline", f"missing, and category {category!r} has no known baseline"
        )
    games = record.get("games")
    if not isinstance(games, list) or len(games) not in (1, 2):
        raise field_error(path, where, "games", "expected a list of one or two games")
    sides = [(baseline, model), (model, baseline)]
    parsed = [_arena_game(game, n + 1, *sides[n]) for n, game in enumerate(games)]
    statuses = [status for _, status in parsed]
    out = {
        "kind": "pairwise",
        "key": judgment_key(judge, model, baseline, uid, "", "", "import:arena-hard"),
        "uid": uid,
        "sample": 0,
        "category": category,
        "judge": judge,
        "model": model,
        "baseline": baseline,
        "protocol": "arena-hard-import",
        "games": [game for game, _ in parsed],
        "invalid": any(status != "ok" for status in statuses),
        **({"invalid_drops": "game"} if "question_id" in record else {}),
        "source": "arena-hard",
    }
    return out, statuses


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


def _store_arena_judgments(
    run: RunDir, judgments: dict[tuple[str, str], list[dict[str, Any]]], summary: ImportSummary
) -> list[dict[str, Any]]:
    """Write judgments/<judge>/<model>.jsonl and return the battles they give."""
    battles: list[dict[str, Any]] = []
    for (judge, model), records in sorted(judgments.items()):
        store_judgments(run, judge, model, records, summary)
        for record in records:
            summary.baselines.setdefault(record["category"], record["baseline"])
            summary.baseline_names.add(record["baseline"])
            battles.extend(battles_from_judgment(record))
    return battles


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
    check_new_run_dir(out)
    bench_dir = arena_hard_bench_dir(data_dir, bench)
    categories = read_question_categories(bench_dir)
    summary = ImportSummary(format="arena-hard", source=str(bench_dir), bench=bench)
    answers = read_arena_answers(bench_dir, categories)
    judgments = read_arena_judgments(
        bench_dir, bench=bench, judges=judges, categories=categories, summary=summary
    )
    if not answers and not judgments:  # an empty run would "succeed" with 0 models
        raise JuristError(f"{bench_dir}: no model_answer/*.jsonl or model_judgment/*/*.jsonl to import")
    run = fresh_run_dir(out)
    store_answers(run, answers, style, summary)
    battles = _store_arena_judgments(run, judgments, summary)
    if not judgments:
        for category in sorted(set(categories.values()) or {bench}):
            baseline = default_baseline(category, bench)
            if baseline:
                summary.baselines[category] = baseline
    summary.battles = write_jsonl(run.battles, battles)
    write_run_json(run, summary, scoring_of_version(bench))
    return summary


def scoring_of_version(bench: str) -> dict[str, Any]:
    """run.json fields that make ``jurist show`` score an import of a known Arena-Hard version as a run of
    it is scored (its scoring family; v2.0: each category alone, style control on hard prompts), so a
    run exported with ``jurist export arena-hard`` and imported back keeps its scoring."""
    official = official_arena_scoring(bench)
    if official is None:
        return {}
    return {"score_family": "pairwise", "bench_info": {"official_scoring": official}}
