"""The judge card: how far a run's judge can be trusted, measured with probes sent through the run's own
engine — position and verbosity bias, instructions planted in an answer, self-consistency, rubric
lenience, agreement with gold labels and calibration — each an estimate with a bootstrap interval and a
documented threshold (docs/judge-card.md). The probes never touch the leaderboard: scores come from the
run's own judgments only. This package is the one home of judge quality: the card, the view of stored
verdicts every measure reads (``verdicts``), and the agreement of several judges (``agreement``); the
arithmetic itself is in :mod:`jurist.ratings` (``judge_quality``, ``probe_stats``, ``agreement``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.audit.agreement import compare_judges
    from jurist.audit.card import (
        CARD_FILE,
        GATE_EXIT,
        MIN_ITEMS,
        RULES,
        SCHEMA,
        flagged,
        read_card,
        write_card,
    )
    from jurist.audit.gold_file import gold_card, read_gold
    from jurist.audit.probe_run import (
        BUDGET_SHARE,
        DEFAULT_SAMPLE,
        JudgeCardRun,
        items_per_probe,
        probes_need,
        request_sets,
    )

_HOMES = {
    "compare_judges": "agreement",
    "CARD_FILE": "card",
    "GATE_EXIT": "card",
    "RULES": "card",
    "SCHEMA": "card",
    "flagged": "card",
    "read_card": "card",
    "write_card": "card",
    "gold_card": "gold_file",
    "read_gold": "gold_file",
    "BUDGET_SHARE": "probe_run",
    "DEFAULT_SAMPLE": "probe_run",
    "MIN_ITEMS": "card",
    "JudgeCardRun": "probe_run",
    "items_per_probe": "probe_run",
    "probes_need": "probe_run",
    "request_sets": "probe_run",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "BUDGET_SHARE",
    "CARD_FILE",
    "DEFAULT_SAMPLE",
    "GATE_EXIT",
    "MIN_ITEMS",
    "RULES",
    "SCHEMA",
    "JudgeCardRun",
    "compare_judges",
    "flagged",
    "gold_card",
    "items_per_probe",
    "probes_need",
    "read_card",
    "read_gold",
    "request_sets",
    "write_card",
]
