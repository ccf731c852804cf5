"""A run directory's usage log (``usage.jsonl``): one line per request settled, appended, never rewritten.

What a directory has spent is rebuilt from this log at the start of every run (:mod:`jurist.run.budget`),
not read from run.json, which a crash or an editor can corrupt and which a run rewrites whole: a summary for
people. Each line is a partial ledger row — ``phase``, ``model``, the run's id, and the counts of one
request (a reply: attempts, tokens, cached and estimated counts, dollars; a failure; a cache hit) or, when
a run closes, its time on the wire — so the ledger is the lines added up by (phase, model). Lines are
appended whole (:class:`~jurist.store.jsonl.JsonlAppender`); a torn last line left by a kill is dropped
with a warning when the next run opens the log.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurist.store.jsonl import JsonlAppender, iter_jsonl_lines

USAGE_LOG = "usage.jsonl"

_TEXT = ("phase", "model")
_LABELS = ("estimated_by", "malformed_fields", "carried", "run", "batch_line")


def usage_log_path(root: Path) -> Path:
    """Where a run directory keeps its usage log."""
    return root / USAGE_LOG


def add_usage(total: dict[str, Any] | None, run: dict[str, Any]) -> dict[str, Any]:
    """``total`` plus one run's usage summary: numbers add up, nested counters (per model) too."""
    merged: dict[str, Any] = dict(total or {})
    for key, value in run.items():
        if isinstance(value, bool):
            merged[key] = value
        elif isinstance(value, (int, float)):
            earlier = merged.get(key, 0)
            merged[key] = (earlier if isinstance(earlier, (int, float)) else 0) + value
        elif isinstance(value, dict):
            earlier = merged.get(key)
            merged[key] = add_usage(earlier if isinstance(earlier, dict) else None, value)
        else:
            merged[key] = value
    return merged


def usage_record_problem(record: Any) -> str | None:
    """Why ``record`` cannot be a line of the usage log (None: it can): a phase and a model as text, every
    other field a label (text) or a count (a finite number, at least 0); ``cost_usd`` may be null."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name in _TEXT:
        if not isinstance(record.get(name), str):
            return f"{name} is not text"
    for name, value in record.items():
        if name in _TEXT or (name == "cost_usd" and value is None):
            continue
        if name in _LABELS:
            if value is not None and not isinstance(value, str):
                return f"{name} is not text"
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} is not a number"
        elif not math.isfinite(value) or value < 0:
            return f"{name} is {value}, not a count"
    return None


def iter_usage_log(path: Path, problems: list[str]) -> Iterator[dict[str, Any]]:
    """The log's records, one at a time (a 50k-question run's log holds 200k lines: never all in memory);
    what is wrong with a line left out goes to ``problems`` (``usage.jsonl:7: model is not text``). Read
    without changing the file (the run directory may not be locked yet): a torn last line is left out
    here, and cut off by the next run that opens the log."""
    for number, _, line in iter_jsonl_lines(path, repair=False):
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"{path}:{number}: not valid JSON")
            continue
        problem = usage_record_problem(record)
        if problem is None:
            yield record
        else:
            problems.append(f"{path}:{number}: {problem}")


def booked_batch_lines(path: Path) -> set[str]:
    """The batch lines (``batch id/custom id``) the usage log at ``path`` has booked: each is billed once
    by the provider, so a restarted run books only the others (:mod:`jurist.engine.batch.billing`)."""
    booked: set[str] = set()
    for _, _, line in iter_jsonl_lines(path, repair=False):
        if b'"batch_line"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        key = record.get("batch_line") if isinstance(record, dict) else None
        if isinstance(key, str):
            booked.add(key)
    return booked


class UsageLog:
    """The usage log of one run, as the ledger's :attr:`~jurist.money.ledger.Ledger.record`. Records
    come before the log is open (the pre-run probes of a directory not made yet) wait for :meth:`open`;
    each carries the run's id."""

    def __init__(self) -> None:
        self._waiting: list[dict[str, Any]] = []
        self._out: JsonlAppender | None = None
        self._path: Path | None = None
        self._run_id = ""

    def write(self, record: dict[str, Any]) -> None:
        if self._path is None:
            self._waiting.append(record)
            return
        if self._out is None:  # closed, and a request settled after all: opened again
            self._out = JsonlAppender(self._path)
        self._out.append({"run": self._run_id, **record})

    def open(self, path: Path, run_id: str, first: list[dict[str, Any]] | None = None) -> None:
        """Open the log under the directory's lock (a torn tail is cut with a warning), then write
        ``first`` (what an older run.json said, for a directory from before the log) and what waited."""
        self._path, self._run_id = path, run_id
        self._out = JsonlAppender(path)
        for record in [*(first or []), *self._waiting]:
            self.write(record)
        self._waiting = []
        self._out.sync()

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
