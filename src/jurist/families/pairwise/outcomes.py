"""A pairwise run's outcomes: ``battles.jsonl`` rewritten whole from the judgments that belong to the
current answers and prompts (so stale judgments never count), with valid judgments of earlier runs in the
same directory, and the invalid verdicts counted on the way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from jurist.families.door import FinishedRun, InvalidCounts, Judged
from jurist.judging import battles_from_judgment
from jurist.ratings import ALL
from jurist.store import iter_numbered_jsonl, judgment_kind, rewrite_jsonl_atomic, sample_of, text_hash


@dataclass
class OutcomeCounts:
    """What writing the outcomes saw: how many battles, and invalid verdicts per (judge, model, category)
    (the battles themselves went to disk, not to memory)."""

    battles: int = 0
    invalid: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def add(self, battle: Mapping[str, Any]) -> Mapping[str, Any]:
        self.battles += 1
        return battle

    def by_row(self) -> InvalidCounts:
        """Invalid verdicts per (judge, model) in total (``*``) and per category, as rows count them."""
        counts: InvalidCounts = {}
        for (judge, model, category), n in self.invalid.items():
            counts[(judge, model, category)] = n
            counts[(judge, model, ALL)] = counts.get((judge, model, ALL), 0) + n
        return counts


def write_outcomes(
    run: FinishedRun, judged: Iterable[Judged], earlier: Iterable[dict[str, Any]]
) -> OutcomeCounts:
    """battles.jsonl from the current judgments and valid earlier ones (replaced atomically), streamed:
    each judgment's battles are written as it is read."""
    counts = OutcomeCounts()

    def battles() -> Iterator[Mapping[str, Any]]:
        for item, record in judged:
            if record.get("invalid"):
                counts.invalid[(item.judge, item.model, item.question.category)] += 1
            yield from map(counts.add, run.kinds[item.judge].outcomes(record))
        for record in earlier:
            if record.get("invalid"):
                key = (str(record["judge"]), str(record["model"]), str(record.get("category", "default")))
                counts.invalid[key] += 1
            yield from map(counts.add, battles_from_judgment(record, strong_weight=run.strong_weight))

    rewrite_jsonl_atomic(run.run_dir.battles, battles())
    return counts


def earlier_judgments(run: FinishedRun) -> tuple[list[dict[str, Any]], list[str]]:
    """Valid pairwise judgments in the run directory for (judge, model) pairs this run did not cover.

    A run with fewer --model/--judge than an earlier one in the same directory still scores everything
    valid there: a judgment counts when the answers it judged are the ones on disk now (its answer hashes
    match); the last such judgment per (uid, sample) wins. Returns the records and notes saying what was
    added.
    """
    covered = {run.run_dir.judgments(j, m) for j in run.judges for m in run.candidates}
    root = run.run_dir.root / "judgments"
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    answers: dict[str, dict[tuple[str, int], Any]] = {}
    for path in sorted(root.glob("*/*.jsonl")) if root.is_dir() else []:
        if path in covered:
            continue
        latest: dict[tuple[str, int], dict[str, Any]] = {}
        for line, record in iter_numbered_jsonl(path, repair=False):
            if judgment_kind(record, path, line) == "pairwise" and _still_current(run, record, answers):
                latest[(str(record["uid"]), sample_of(record))] = record
        if latest:
            first = next(iter(latest.values()))
            records.extend(latest.values())
            notes.append(
                f"also scored: {len(latest)} judgment(s) of {first['judge']} on {first['model']} from an "
                "earlier run in this directory"
            )
    return records, notes


def _still_current(
    run: FinishedRun, record: dict[str, Any], answers: dict[str, dict[tuple[str, int], Any]]
) -> bool:
    """Whether ``record`` judged the answers now on disk (model and baseline, by hash)."""
    try:
        model, baseline, uid = str(record["model"]), str(record["baseline"]), str(record["uid"])
    except KeyError:
        return False
    for alias, hashed, sample in ((model, "answer_hash", sample_of(record)), (baseline, "baseline_hash", 0)):
        if alias not in answers:
            answers[alias] = (
                dict(run.run_dir.load_answers(alias)) if run.run_dir.answers(alias).exists() else {}
            )
        answer = answers[alias].get((uid, sample))
        if answer is None or text_hash(answer["answer"]) != record.get(hashed):
            return False
    return True
