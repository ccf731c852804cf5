"""JudgeBench (ScalerLab, Tan et al. 2025) as data plus scoring; this module makes no network calls itself.

Each JudgeBench pair holds two responses to one question from the same strong model, exactly one of them
objectively correct, so ``label`` ("A>B" or "B>A") measures whether a judge can tell right from wrong.

Protocol and metric (reproduced from upstream ``utils/metrics.compute_final_metrics``):

* Game 1 shows (response_A, response_B); game 2 shows them swapped, (response_B, response_A). Stored
  outputs keep game 2's decision as the judge said it about the swapped presentation, so it is
  un-swapped ("A>B" <-> "B>A"; "A=B" and failures unchanged) before it is compared with the label.
* Each game scores +1 if its (un-swapped) decision equals the label, -1 if it is the opposite label, and
  0 for a tie ("A=B") or a failure (no decision). A pair is correct iff the sum is > 0, so
  right+right and right+tie/failure count; right+wrong (position bias) and tie+tie do not.
* The per-game points, the pair sum and the consistency below are :mod:`jurist.ratings.judge_quality`'s,
  shared with the judge card's gold agreement and the sanity table.
* Accuracy is ``100 * correct / pairs`` overall and per source group. Single-game runs (one judgment per
  pair) score ``100 * mean(decision == label)``, as upstream does.

Position consistency (ours; upstream counts the complement without reporting it): the percentage of pairs
whose game-1 decision equals the un-swapped game-2 decision, where both games produced a decision. A tie
in both orders is consistent; a failure in either game makes the pair inconsistent, because we cannot
claim agreement with a verdict that does not exist. ``failed`` counts games (not pairs) with no decision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from jurist.ratings import pair_points, swap_agreements

Label = Literal["A>B", "B>A"]
Decision = Literal["A>B", "B>A", "A=B"]
Group = Literal["knowledge", "reasoning", "math", "coding"]

GROUPS: tuple[Group, ...] = ("knowledge", "reasoning", "math", "coding")
LABELS: tuple[Label, ...] = ("A>B", "B>A")

# Five-level verdicts collapse to their direction: JudgeBench scores direction only (upstream arena_hard
# maps ">>" to ">" when parsing).
_DECISIONS: dict[str, Decision] = {
    "A>B": "A>B",
    "A>>B": "A>B",
    "B>A": "B>A",
    "B>>A": "B>A",
    "A=B": "A=B",
}


@dataclass(frozen=True)
class Pair:
    """One JudgeBench item: a question, two responses from the same model, and which one is correct."""

    pair_id: str
    original_id: int | None
    source: str
    question: str
    response_model: str
    response_A: str  # noqa: N815 - the upstream field name, kept so records read like the data
    response_B: str  # noqa: N815
    label: Label

    @property
    def group(self) -> Group:
        """The reporting group of ``source`` (knowledge / reasoning / math / coding)."""
        return source_group(self.source)


class JudgeScore(NamedTuple):
    """JudgeBench result for one judge on one pair set; accuracies and consistency are percentages.

    A group with no pairs scores NaN; ``consistency`` is NaN for single-game runs.
    """

    judge: str
    overall: float
    knowledge: float
    reasoning: float
    math: float
    coding: float
    consistency: float
    failed: int
    n: int
    response_model: str = ""


GamePair = tuple[str | None, ...]
"""One pair's verdicts: ``(game1,)`` or ``(game1, game2)``; see ``score_decisions``."""


# --------------------------------------------------------------------------------------------------
# Source groups and decisions


def source_group(source: str) -> Group:
    """Map an upstream ``source`` to its reporting group; raises ``ValueError`` for unknown sources."""
    if source.startswith("mmlu-pro"):
        return "knowledge"
    if source.startswith("livebench-reasoning"):
        return "reasoning"
    if source.startswith("livebench-math"):
        return "math"
    if source.startswith("livecodebench"):
        return "coding"
    raise ValueError(
        f"unknown JudgeBench source {source!r} (expected mmlu-pro-*, livebench-*, livecodebench)"
    )


def normalize_decision(decision: str | None) -> Decision | None:
    """Return the three-way decision for a verdict string (``>>`` collapses to ``>``); None stays None."""
    if decision is None:
        return None
    try:
        return _DECISIONS[decision]
    except KeyError:
        raise ValueError(
            f"unknown decision {decision!r} (expected one of {sorted(_DECISIONS)} or null)"
        ) from None


def unswap(decision: Decision | None) -> Decision | None:
    """Express a swapped-order decision in the pair's own order: A>B <-> B>A; ties and failures unchanged."""
    if decision == "A>B":
        return "B>A"
    if decision == "B>A":
        return "A>B"
    return decision


# --------------------------------------------------------------------------------------------------
# Scoring


def _percent(hits: int, total: int) -> float:
    return 100.0 * hits / total if total else math.nan


def score_games(
    judge: str,
    response_model: str,
    items: Sequence[tuple[Group, Label, tuple[Decision | None, ...]]],
) -> JudgeScore:
    """Score pairs whose games are already in the pair's own order (game 2 un-swapped)."""
    game_counts = {len(games) for _, _, games in items}
    if len(game_counts) > 1:
        raise ValueError(f"judge {judge!r}: pairs mix single-game and two-game judgments")
    two_games = game_counts != {1}
    correct = dict.fromkeys(GROUPS, 0)
    totals = dict.fromkeys(GROUPS, 0)
    failed = 0
    for group, label, games in items:
        totals[group] += 1
        failed += sum(decision is None for decision in games)
        correct[group] += pair_points(label, games) > 0  # one game: right when it names the label
    n = len(items)
    consistent = 0
    if two_games and n:
        consistent = int(swap_agreements([g[0] for _, _, g in items], [g[1] for _, _, g in items]).sum())
    return JudgeScore(
        judge=judge,
        overall=_percent(sum(correct.values()), n),
        knowledge=_percent(correct["knowledge"], totals["knowledge"]),
        reasoning=_percent(correct["reasoning"], totals["reasoning"]),
        math=_percent(correct["math"], totals["math"]),
        coding=_percent(correct["coding"], totals["coding"]),
        consistency=_percent(consistent, n) if two_games and n else math.nan,
        failed=failed,
        n=n,
        response_model=response_model,
    )


def score_decisions(
    pairs: Sequence[Pair],
    decisions: Sequence[GamePair] | Mapping[str, GamePair],
    *,
    judge: str = "judge",
    game2_order: Literal["as_shown", "unswapped"] = "as_shown",
) -> JudgeScore:
    """Score a judge's verdicts on ``pairs`` with the exact JudgeBench rule.

    ``decisions`` is aligned with ``pairs`` (a sequence) or keyed by ``pair_id`` (a mapping; every pair must
    be present). Each entry is ``(game1,)`` for a single-game run or ``(game1, game2)``: "A>B", "B>A",
    "A=B" (five-level "A>>B"/"B>>A" are accepted) or None for a failed game. Game 1 is the verdict on
    (response_A, response_B). By default (``game2_order="as_shown"``) game 2 is the verdict exactly as
    the judge gave it on the swapped presentation (response_B shown as "A"), as upstream stores it, and
    is un-swapped here; pass ``game2_order="unswapped"`` if you already mapped it back to the pair's order.
    """
    if game2_order not in ("as_shown", "unswapped"):
        raise ValueError(f"game2_order must be 'as_shown' or 'unswapped', not {game2_order!r}")
    if isinstance(decisions, Mapping):
        missing = [pair.pair_id for pair in pairs if pair.pair_id not in decisions]
        if missing:
            raise ValueError(f"no decisions for {len(missing)} pair(s), e.g. {missing[0]!r}")
        ordered = [decisions[pair.pair_id] for pair in pairs]
    else:
        if len(decisions) != len(pairs):
            raise ValueError(f"{len(decisions)} decision entries for {len(pairs)} pairs")
        ordered = list(decisions)
    items: list[tuple[Group, Label, tuple[Decision | None, ...]]] = []
    models: set[str] = set()
    for pair, games in zip(pairs, ordered, strict=True):
        if len(games) not in (1, 2):
            raise ValueError(f"pair {pair.pair_id!r}: expected 1 or 2 decisions, got {len(games)}")
        normalized = tuple(normalize_decision(decision) for decision in games)
        if len(normalized) == 2 and game2_order == "as_shown":
            normalized = (normalized[0], unswap(normalized[1]))
        items.append((pair.group, pair.label, normalized))
        models.add(pair.response_model)
    return score_games(judge, ",".join(sorted(models)), items)


# --------------------------------------------------------------------------------------------------
# Result rows

ROW_FIELDS = (
    "judge",
    "response_model",
    "n",
    "overall",
    "knowledge",
    "reasoning",
    "math",
    "coding",
    "consistency",
    "failed",
)


def score_row(score: JudgeScore) -> dict[str, Any]:
    """A ``JudgeScore`` as a JSON-safe row (NaN, e.g. a group with no pairs, becomes null)."""
    row = score._asdict()
    out: dict[str, Any] = {}
    for name in ROW_FIELDS:
        value = row[name]
        out[name] = None if isinstance(value, float) and math.isnan(value) else value
    return out
