"""Which of a run's requests go through providers' batch APIs (``--batch``, ``batch: true``), and what
the run says about them afterwards.

``--batch judges`` sends every judge's requests (games in both orders, rubric items, re-asks) through
batches; ``--batch all`` also the candidates' answers; a models-file entry with ``batch: true`` sends
every request of that model. The engine does the rest (:mod:`jurist.engine.batch`): the same prompts and
the same verdict readers, so the judgments are those of a synchronous run, at the batch price.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from jurist.engine import JOURNAL_FILE, Batching, BatchSettings, Engine, check_batchable
from jurist.errors import JuristError, unknown_value
from jurist.report import dollars
from jurist.store import booked_batch_lines, usage_log_path

if TYPE_CHECKING:
    from jurist.run.plan import RunPlan

BatchMode = Literal["none", "judges", "all"]
_JUDGE_PHASES = frozenset({"judge", "reask"})
_EVERY_PHASE = frozenset({"generate", "judge", "reask"})
_COUNT_WORDS = (
    ("submitted", "submitted"),
    ("resumed", "polled again after a restart"),
    ("recovered", "found again by their metadata (not in batches.jsonl)"),
    ("booked", "billed lines booked from an earlier run"),
    ("answered", "requests answered"),
    ("retried", "requests asked again in a new batch"),
    ("fallback", "sent synchronously past the deadline"),
    ("failed", "requests failed"),
)


@dataclass(frozen=True)
class BatchChoice:
    """What ``jurist run`` was asked about batches: ``--batch`` and the ``--batch-*`` settings."""

    mode: BatchMode = "none"
    settings: BatchSettings = field(default_factory=BatchSettings)


def batch_choice(
    mode: str, poll_s: float, size: int | None, age_s: float, attempts: int, deadline_s: float | None
) -> BatchChoice:
    """``--batch`` and ``--batch-*`` as a :class:`BatchChoice` (an unknown mode is a one-line error)."""
    if mode not in ("none", "judges", "all"):
        raise unknown_value("--batch", mode, ("none", "judges", "all"))
    settings = BatchSettings(
        poll_s=poll_s, max_requests=size, max_age_s=age_s, attempts=attempts, deadline_s=deadline_s
    )
    return BatchChoice(mode, settings)  # type: ignore[arg-type]  # checked above


def batch_phases(plan: RunPlan) -> dict[str, frozenset[str]]:
    """alias -> the phases it sends through batches in this run (none: left out). A model that cannot be
    batched (served by jurist, LiteLLM), or ``--batch judges`` on a run with no judge, is a one-line
    error."""
    choice: BatchChoice = plan.config.batching
    phases: dict[str, frozenset[str]] = {}
    if choice.mode == "judges":
        if not plan.judges:
            raise JuristError("--batch judges: this run has no judge (its benchmark is checked by rule)")
        phases.update(dict.fromkeys(plan.judges, _JUDGE_PHASES))
    elif choice.mode == "all":
        phases.update(dict.fromkeys([*plan.candidates, *plan.judges], _EVERY_PHASE))
    for alias in [*plan.candidates, *plan.judges]:
        spec = plan.specs.get(alias)
        if spec is not None and spec.batch:
            phases[alias] = _EVERY_PHASE
    for alias in phases:
        spec = plan.specs.get(alias)
        if spec is None:
            raise JuristError(f"--batch: model {alias!r} is not in the models file, so it has no batch API")
        check_batchable(spec)
    return phases


def batching_of(plan: RunPlan) -> Batching | None:
    """The engine's :class:`~jurist.engine.Batching` for ``plan`` (None: nothing is batched)."""
    phases = batch_phases(plan)
    if not phases:
        return None
    root = plan.run_dir.root
    batching = Batching(root / JOURNAL_FILE, phases, plan.config.batching.settings)
    batching.booked = booked_batch_lines(usage_log_path(root))
    batching.tag = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]  # its batches' mark
    batching.journal  # noqa: B018  # read (strictly) now: a damaged journal refused before any request
    return batching


def batch_report(engine: Engine, batching: Batching | None) -> list[str]:
    """The run's lines about its batches (what its dispatchers did) and its batched requests: how many,
    what they cost, what the same requests would have cost synchronously."""
    if batching is None:
        return []
    counts: Counter[str] = Counter()
    for alias in batching.phases:
        batcher = engine.client(alias).batcher
        counts.update(batcher.counts if batcher is not None else {})
    ledger = engine.ledger.summary()
    lines = []
    if counts.get("submitted") or counts.get("resumed") or counts.get("recovered") or counts.get("booked"):
        said = ", ".join(f"{counts[name]:,} {word}" for name, word in _COUNT_WORDS if counts.get(name))
        lines.append(f"batches: {said} (batches.jsonl)")
    rows = [row for row in ledger.get("rows") or [] if row.get("batched")]
    if not rows:
        return lines
    count = sum(int(row["batched"]) for row in rows)
    cost = sum(float(row.get("batch_cost_usd") or 0.0) for row in rows)
    sync = sum(float(row.get("batch_sync_cost_usd") or 0.0) for row in rows)
    priced = all(row.get("cost_usd") is not None for row in rows)
    if not priced:
        return [*lines, f"{count} request(s) answered through batch APIs (no price: their cost is not known)"]
    return [
        *lines,
        f"{count} request(s) answered through batch APIs cost {dollars(cost)}; sent synchronously the same "
        f"requests would have cost {dollars(sync)} (rows marked (batch) hold them)",
    ]


def dry_batch_note(rows: list[dict[str, Any]]) -> list[str]:
    """The dry run's line about what would go through batch APIs and what it saves."""
    batched = [row for row in rows if row.get("batched")]
    if not batched:
        return []
    count = sum(int(row["batched"]) for row in batched)
    if any(row.get("cost_usd") is None for row in batched):
        return [f"{count:,} request(s) would go through batch APIs (rows marked (batch)); not all are priced"]
    cost = sum(float(row["cost_usd"]) for row in batched)
    sync = sum(float(row.get("sync_cost_usd") or 0.0) for row in batched)
    return [
        f"{count:,} request(s) would go through batch APIs (rows marked (batch)): {dollars(cost)} at batch "
        f"rates against {dollars(sync)} sent synchronously; answers within 24 hours (most sooner)"
    ]
