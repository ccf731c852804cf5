"""Judge kinds (pairwise games, AlpacaEval's preference, rubric grading) from a registry: how an answer
becomes judge requests, a stored judgment and outcomes; verdict readers. No benchmark module is imported
here: a benchmark hands its kind the prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.judging.alpaca_protocol import (
        AlpacaJudge,
        first_label_probability,
        is_switched,
        preference_battles,
        text_probability,
    )
    from jurist.judging.base import CacheMode, JudgeItem, JudgeKind, PartialJudgment
    from jurist.judging.kinds import (
        DEFAULT_LAYOUT,
        JudgeKindName,
        JudgePromptSource,
        JudgmentLayout,
        judge_kind_for,
        judge_kind_layout,
        judge_kind_outcome,
        judge_kind_probes,
        judge_kind_sends_own_sampling,
    )
    from jurist.judging.pairwise import PairwiseJudge, battles_from_judgment, judgment_key
    from jurist.judging.protocols import JudgeProtocol
    from jurist.judging.rubric import RubricJudge
    from jurist.judging.upstream import local_settings_copy
    from jurist.judging.upstream_local import LocalJudgeSettings, load_local_settings, local_config_copy
    from jurist.judging.verdict import canonical_label, swap_label

_HOMES = {
    "AlpacaJudge": "alpaca_protocol",
    "first_label_probability": "alpaca_protocol",
    "is_switched": "alpaca_protocol",
    "preference_battles": "alpaca_protocol",
    "text_probability": "alpaca_protocol",
    "CacheMode": "base",
    "JudgeItem": "base",
    "JudgeKind": "base",
    "PartialJudgment": "base",
    "DEFAULT_LAYOUT": "kinds",
    "JudgeKindName": "kinds",
    "JudgePromptSource": "kinds",
    "JudgmentLayout": "kinds",
    "judge_kind_for": "kinds",
    "judge_kind_layout": "kinds",
    "judge_kind_sends_own_sampling": "kinds",
    "judge_kind_outcome": "kinds",
    "judge_kind_probes": "kinds",
    "PairwiseJudge": "pairwise",
    "JudgeProtocol": "protocols",
    "RubricJudge": "rubric",
    "battles_from_judgment": "pairwise",
    "judgment_key": "pairwise",
    "LocalJudgeSettings": "upstream_local",
    "local_config_copy": "upstream_local",
    "load_local_settings": "upstream_local",
    "canonical_label": "verdict",
    "swap_label": "verdict",
    "local_settings_copy": "upstream",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "DEFAULT_LAYOUT",
    "AlpacaJudge",
    "CacheMode",
    "JudgeItem",
    "JudgeKind",
    "JudgeKindName",
    "JudgePromptSource",
    "JudgmentLayout",
    "LocalJudgeSettings",
    "JudgeProtocol",
    "PairwiseJudge",
    "PartialJudgment",
    "RubricJudge",
    "battles_from_judgment",
    "canonical_label",
    "first_label_probability",
    "is_switched",
    "judge_kind_for",
    "judge_kind_layout",
    "judge_kind_sends_own_sampling",
    "judge_kind_outcome",
    "judge_kind_probes",
    "judgment_key",
    "load_local_settings",
    "local_config_copy",
    "local_settings_copy",
    "preference_battles",
    "swap_label",
    "text_probability",
]
