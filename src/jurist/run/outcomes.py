"""What the end of a run hands the scoring (a narrow view of the pipeline, so no import cycle) and what
comes back to it. The outcomes themselves are each scoring family's (:mod:`jurist.families.door`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jurist.benchmarks.base import Benchmark
from jurist.judging.base import JudgeKind
from jurist.run.config import RunConfig
from jurist.store.run_dir import RunDir


@dataclass(frozen=True)
class RunView:
    """What scoring needs to know about a run."""

    bench: Benchmark
    config: RunConfig
    run_dir: RunDir
    judges: Sequence[str]
    candidates: Sequence[str]
    baselines: Sequence[str]
    kinds: dict[str, JudgeKind]


@dataclass(frozen=True)
class Outcome:
    """The headline rows, and whether anything could be scored at all (else the run exits non-zero)."""

    rows: list[dict[str, Any]]
    scored: bool
    documents: tuple[str, ...] = ()
    """The score files written into the run directory (leaderboard.json, summary.json...), by name."""
