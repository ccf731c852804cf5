"""The types a contributor builds against, in one place: what a benchmark gives, what a judge kind does,
what a scoring family does, and the records a run directory holds.

Each name lives with its code and is re-exported here, loaded on first use (PEP 562), so importing this
module loads nothing else; nothing inside jurist imports it (it sits above what it names).

What a benchmark is
    :class:`Question` (one prompt: ``uid``, ``prompt``, ``category``, its own ``metadata``) and
    :class:`Benchmark` (questions, shipped answers, baselines, judge kind or rule suite, metrics, default
    samples).

How an answer is judged
    :class:`JudgeKind`, a protocol: ``key(item)`` (the stored judgment's identity; a changed key judges
    again), ``judge(client, item, ...)`` (the record to store), ``fingerprint`` and ``protocol_name``.
    :class:`JudgeItem` is what it judges: a question, a sample, an answer and its baseline's.

How a run is scored
    :class:`Family`, a protocol (one subpackage of :mod:`jurist.families` each): ``outcomes(run)`` at a
    run's end (a :class:`FinishedRun` in, a :class:`RunEnd` out: battles or points written),
    ``score(recorded, request, end)`` (a :class:`Scores`, the same for ``jurist run`` and ``jurist show``),
    ``documents(scores)`` (the score files), ``print_scores`` (the terminal tables), ``summary`` (the
    browser's title and axis), ``headline`` (``--tasks`` and sweeps) and ``paired_cells`` (``compare``).
    :data:`FamilyName` names the families; run.json's ``score_family`` holds one.

What a run directory holds (docs/run-directory.md)
    :class:`AnswerRecord` (``answers/<model>.jsonl``), :class:`PointRecord` (``points/<model>.jsonl``),
    :class:`RunJson` (``run.json``), :class:`Usage` (a request's counts in a record). Judgments are
    kind-tagged records of each judge kind's own making; battles are the pairwise family's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.benchmarks import Benchmark
    from jurist.families import Family, FamilyName, FinishedRun, RunEnd, Scores
    from jurist.judging import JudgeItem, JudgeKind
    from jurist.store import AnswerRecord, PointRecord, Question, RunJson, Usage

_HOMES: dict[str, tuple[str, str]] = {
    "Question": ("jurist.store", "Question"),
    "Benchmark": ("jurist.benchmarks", "Benchmark"),
    "JudgeKind": ("jurist.judging", "JudgeKind"),
    "JudgeItem": ("jurist.judging", "JudgeItem"),
    "Family": ("jurist.families", "Family"),
    "FamilyName": ("jurist.families", "FamilyName"),
    "FinishedRun": ("jurist.families", "FinishedRun"),
    "RunEnd": ("jurist.families", "RunEnd"),
    "Scores": ("jurist.families", "Scores"),
    "AnswerRecord": ("jurist.store", "AnswerRecord"),
    "PointRecord": ("jurist.store", "PointRecord"),
    "RunJson": ("jurist.store", "RunJson"),
    "Usage": ("jurist.store", "Usage"),
}
"""Name here -> (package face, name there)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'jurist.contracts' has no attribute {name!r}")
    face, there = home
    return getattr(importlib.import_module(face), there)


__all__ = [
    "AnswerRecord",
    "Benchmark",
    "Family",
    "FamilyName",
    "FinishedRun",
    "JudgeItem",
    "JudgeKind",
    "PointRecord",
    "Question",
    "RunEnd",
    "RunJson",
    "Scores",
    "Usage",
]
