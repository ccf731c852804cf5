"""The rules family's reward of one answer: the share of its prompt's instructions followed, strict (or
loose), from the checks :mod:`jurist.rules` makes exactly as ``jurist run`` makes them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jurist.families.reward import RewardOptions

if TYPE_CHECKING:
    from jurist.families.reward import AnswerReward
    from jurist.judging import JudgeKind


def share_followed(checks: Sequence[Mapping[str, Any]], *, loose: bool = False) -> float:
    """The share of instructions followed (strict, or loose); a prompt with none scores 1."""
    if not checks:
        return 1.0
    field = "loose" if loose else "strict"
    return sum(1 for check in checks if check[field]) / len(checks)


class RulesReward:
    """An answer checked against its prompt's instructions; no judge."""

    label = rule = "rules"
    judged = False
    against_baseline = False
    two_games = False
    scale = 1.0

    def __init__(self, loose: bool) -> None:
        self.loose = loose

    def own_question(self, bench: str, has_instructions: bool) -> str | None:
        if has_instructions:
            return None
        return "a question that is no benchmark question needs instruction_id_list and kwargs"

    def of(self, record: dict[str, Any]) -> float | None:
        """The share followed of a record's ``instructions`` (each check's strict outcome, and its loose
        one where the server was started with ``--loose``)."""
        return share_followed(record.get("instructions") or [], loose=self.loose)

    def shown(self, record: Mapping[str, Any]) -> dict[str, Any]:
        return {"rules": record.get("instructions", [])}


def rules_reward(kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
    return RulesReward(options.loose)


__all__ = ["RulesReward", "rules_reward", "share_followed"]
