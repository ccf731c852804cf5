"""Judgments an older jurist stored for JudgeBench (before it ran through the one runner), adopted into
the pairwise shape when a run opens its directory, so a resumed run does not pay for them again."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from jurist.benchmarks.base import Benchmark
from jurist.benchmarks.judgebench import BASELINE, CANDIDATE, pair_of
from jurist.benchmarks.judgebench_scoring import Pair
from jurist.judging.base import JudgeItem, JudgeKind
from jurist.store.jsonl import JsonlAppender, iter_numbered_jsonl
from jurist.store.records import text_hash
from jurist.store.run_dir import RunDir


def _schema1_pair_hash(pair: Pair) -> str:
    blob = json.dumps([pair.question, pair.response_A, pair.response_B, pair.label])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def adopt_schema1_judgments(run_dir: RunDir, judge: str, kind: JudgeKind, bench: Benchmark) -> int:
    """Re-key the judgments of ``judgments/<judge>/<set>.jsonl`` (written by jurist before JudgeBench ran
    through the one runner) into the pairwise shape, so a resumed run does not pay for them again.

    Only a judgment of the same pair text and the same judge prompt is adopted; the old file is kept as it
    was. Returns how many were adopted.
    """
    old = run_dir.judgments(judge, bench.name)
    if "judge-accuracy" not in bench.metrics or not old.is_file():
        return 0
    current = run_dir.load_judgments(judge, CANDIDATE)
    questions = {q.uid: q for q in bench.questions}
    adopted: list[dict[str, Any]] = []
    for _, record in iter_numbered_jsonl(old, repair=False):
        question = questions.get(str(record.get("pair_id")))
        if question is None or record.get("prompt_hash") != kind.fingerprint:
            continue
        pair = pair_of(question)
        if record.get("pair_hash") != _schema1_pair_hash(pair):
            continue
        item = JudgeItem(judge, CANDIDATE, question, 0, pair.response_B, BASELINE, pair.response_A)
        key = kind.key(item)
        if key in current:
            continue
        current[key] = {
            "kind": "pairwise",
            "key": key,
            "uid": pair.pair_id,
            "sample": 0,
            "category": question.category,
            "judge": judge,
            "model": CANDIDATE,
            "baseline": BASELINE,
            "protocol": record.get("protocol"),
            "prompt_hash": kind.fingerprint,
            "answer_hash": text_hash(pair.response_B),
            "baseline_hash": text_hash(pair.response_A),
            "games": record["games"],  # already {"a": "response_A", "b": "response_B", ...} per game
            "invalid": bool(record.get("invalid")),
            "tstamp": record.get("tstamp"),
            "adopted_from": old.name,
        }
        adopted.append(current[key])
    if adopted:
        with JsonlAppender(run_dir.judgments(judge, CANDIDATE)) as out:
            for judgment in adopted:
                out.append(judgment)
    return len(adopted)
