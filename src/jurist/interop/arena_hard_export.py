"""A jurist run exported in Arena-Hard-Auto v2.0's shapes (``model_answer``, ``model_judgment``), so that
upstream's tools read our answers and judgments; the import side is :mod:`jurist.interop.arena_hard`."""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.interop.common import StyleFn, last_per_uid, read_run_answers, write_jsonl
from jurist.judging import swap_label
from jurist.store import RunDir, iter_jsonl
from jurist.store import plain_stem as file_stem  # Arena-Hard's own folders keep its plain names


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


def _export_answers(run: RunDir, bench_dir: Path, style: StyleFn | None, summary: ExportSummary) -> None:
    folder = run.root / "answers"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        answers = read_run_answers(path)
        if not answers:
            continue
        model = next(iter(answers.values())).get("model") or path.stem
        records = [
            arena_answer_record({**a, "model": a.get("model") or model}, style) for a in answers.values()
        ]
        summary.answers[model] = write_jsonl(
            bench_dir / "model_answer" / f"{file_stem(model)}.jsonl", records
        )


def _export_judgments(run: RunDir, bench_dir: Path, summary: ExportSummary) -> None:
    """Each (judge, model) file in the order of that model's battles (the order its run scored them in),
    not in the order the judgments arrived: the bootstrap resamples questions in order of appearance, so
    an import of the export scores exactly as the run did."""
    root = run.root / "judgments"
    orders: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for battle in iter_jsonl(run.battles) if run.battles.is_file() else ():
        for side in ("model_a", "model_b"):
            order = orders[(str(battle.get("judge")), str(battle.get(side)))]
            order.setdefault(str(battle.get("uid")), len(order))
    for path in sorted(root.glob("*/*.jsonl")) if root.is_dir() else []:
        records = []
        for judgment in last_per_uid(path):
            converted = arena_judgment_record(judgment)
            if converted is None:
                summary.skipped_judgments += 1
            else:
                records.append(converted)
        if records:
            judge, model = records[0]["judge"], records[0]["model"]
            order = orders.get((str(judge), str(model)), {})
            records.sort(key=lambda record: order.get(str(record["uid"]), len(order)))  # stable: others last
            target = bench_dir / "model_judgment" / file_stem(judge) / f"{file_stem(model)}.jsonl"
            summary.judgments.setdefault(judge, {})[model] = write_jsonl(target, records)


_HELD_ELSEWHERE = {
    "rules": "checked by rule (points per instruction, no judge)",
    "rubric": "graded by rubric (points per rubric item, no baseline)",
    "judge-accuracy": "a measure of judges against gold labels (no model answers of its own)",
    "placement": "a placement among human-voted arena ratings",
}


def refuse_unpairwise(run_root: Path) -> None:
    """One line for a run Arena-Hard's files cannot hold: its ``model_judgment`` keeps pairwise games
    against a baseline, and a rule-checked, rubric, judge-accuracy or placement run has none."""
    from jurist.families import RecordedRun, family_of_run

    run = RecordedRun.read(run_root)
    family = family_of_run(run_root, run.fields if run.has_run_json else None)
    if family in _HELD_ELSEWHERE:
        bench = run.fields.get("bench_name") or run.fields.get("bench") or "its benchmark"
        raise JuristError(
            f"{run_root}: this run of {bench} is {_HELD_ELSEWHERE[family]}; Arena-Hard's files hold pairwise "
            "judgments against a baseline, so it cannot be exported there (`jurist show RUN --format json` "
            "gives its scores)"
        )


def export_arena_hard(
    run_root: Path, out: Path, *, bench: str, style: StyleFn | None = None
) -> ExportSummary:
    """Write a run's answers and pairwise judgments as ``<out>/data/<bench>/model_answer|model_judgment``."""
    run = RunDir(run_root)
    if not run.root.is_dir():
        raise JuristError(f"{run_root}: no such run directory")
    refuse_unpairwise(run_root)
    bench_dir = out / "data" / bench
    summary = ExportSummary(bench_dir)
    _export_answers(run, bench_dir, style, summary)
    _export_judgments(run, bench_dir, summary)
    return summary
