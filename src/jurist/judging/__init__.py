"""Judge kinds (pairwise games, AlpacaEval's preference, rubric grading) from a registry: how an answer
becomes judge requests, a stored judgment and outcomes; verdict readers. No benchmark module is imported
here: a benchmark hands its kind the prompt.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.judging.alpaca_protocol import preference_battles
    from jurist.judging.base import CacheMode, JudgeItem, JudgeKind, PartialJudgment
    from jurist.judging.kinds import JudgeKindName, JudgePromptSource, judge_kind_for
    from jurist.judging.pairwise import battles_from_judgment, judgment_key
    from jurist.judging.verdict import canonical_label, swap_label

# Each name is imported from its module on first use, so that importing one module of the package (or
# ``jurist --help``) does not load the rest.
_HOMES = {
    "preference_battles": "alpaca_protocol",
    "CacheMode": "base",
    "JudgeItem": "base",
    "JudgeKind": "base",
    "PartialJudgment": "base",
    "JudgeKindName": "kinds",
    "JudgePromptSource": "kinds",
    "judge_kind_for": "kinds",
    "battles_from_judgment": "pairwise",
    "judgment_key": "pairwise",
    "canonical_label": "verdict",
    "swap_label": "verdict",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "CacheMode",
    "JudgeItem",
    "JudgeKind",
    "JudgeKindName",
    "JudgePromptSource",
    "PartialJudgment",
    "battles_from_judgment",
    "canonical_label",
    "judge_kind_for",
    "judgment_key",
    "preference_battles",
    "swap_label",
]
