"""What the end of a run hands back to it: the rows scored, whether anything was, the documents written.
The outcomes themselves are each scoring family's (:mod:`jurist.families.door`); what scoring needs to know
of the run is its plan (:class:`jurist.run.plan.RunPlan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Outcome:
    """The headline rows, and whether anything could be scored at all (else the run exits non-zero)."""

    rows: list[dict[str, Any]]
    scored: bool
    documents: tuple[str, ...] = ()
    """The score files written into the run directory (leaderboard.json, summary.json...), by name."""
