"""The judge card's probes of a pairwise judge (two position-swapped games per answer).

Position and consistency read the run's own games (no request). Verbosity, injection and
self-consistency each send one game per probe item, in the position of one of the item's stored games
(alternating between the two), so each compares a verdict with the judge's own verdict on the same
positions and a position bias cannot pass for another bias. Gold agreement and calibration read the
stored games against gold labels (JudgeBench's) or, for calibration without labels, the swapped game.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import numpy as np

from jurist.audit.asking import RESAMPLE, Asker, draw
from jurist.audit.card import ProbeResult, calibration_result
from jurist.audit.gold import gold_label, gold_source
from jurist.audit.hooks import Ask, ProbeContext, listed
from jurist.audit.perturb import padded, planted
from jurist.audit.verdicts import Game, Verdicts, verdicts_of
from jurist.judging import JudgeItem, PairwiseJudge
from jurist.ratings import first_position_wins, gold_agreement, mean_interval, swap_agreements
from jurist.store import Question


def position_probes(records: Sequence[Verdicts], *, seed: int) -> list[ProbeResult]:
    """First-position preference (share of decisive games won by position A, less one half) and
    consistency (share of questions whose two games name the same winner, a tie in both counting as the
    same), from the run's own two-game judgments; a question's games and samples are resampled together."""
    swapped = [r for r in records if r.valid and len(r.games) == 2]
    if not swapped:
        note = "no question judged in both answer orders"
        return [ProbeResult("position", note=note), ProbeResult("consistency", note=note)]
    wins = first_position_wins([game.label for r in swapped for game in r.games])
    game_uids = np.array([r.uid for r in swapped for _ in r.games], dtype=object)
    decisive = ~np.isnan(wins)
    position = mean_interval(wins[decisive] - 0.5, list(game_uids[decisive]), seed=seed)
    same = swap_agreements(
        [r.games[0].decision(r.baseline) for r in swapped], [r.games[1].decision(r.baseline) for r in swapped]
    )
    consistency = mean_interval(same, [r.uid for r in swapped], seed=seed)
    return [ProbeResult("position", position), ProbeResult("consistency", consistency)]


def gold_probe(
    records: Sequence[Verdicts], questions: Mapping[str, Question], *, seed: int
) -> ProbeResult | None:
    """Accuracy against the gold labels, by JudgeBench's rule (a pair is right when its games' points,
    +1 for the gold side, -1 for the other, 0 for a tie or no verdict, sum above zero), and Cohen's kappa;
    None when the benchmark has no gold labels."""
    labels, games, sources = [], [], set()
    for record in records:
        question = questions.get(record.uid)
        label = gold_label(question) if question is not None else None
        if question is not None and label is not None:
            sources.add(gold_source(question))
            labels.append(label)
            games.append([game.decision(record.baseline) for game in record.games])
    if not labels:
        return None
    found = gold_agreement(labels, games, seed=seed)
    extra = {"kappa": round(found.kappa, 4), "against": " and ".join(sorted(sources))}
    return ProbeResult("gold_agreement", found.accuracy, extra=extra)


def calibration_probe(
    records: Sequence[Verdicts], questions: Mapping[str, Question], *, seed: int
) -> ProbeResult | None:
    """Brier score (with its interval) and expected calibration error of the probabilities a judge gave
    (the logprob protocol's P(B better)), against the gold label where there is one, else against the
    verdict of the same question's swapped game; None when the judge gave no probabilities."""
    stated, happened, questions_of, against = [], [], [], "the swapped game"
    for record in records:
        question = questions.get(record.uid)
        label = gold_label(question) if question is not None else None
        for game in record.games:
            if game.p_b_better is None:
                continue
            if label is not None:
                against = "the gold labels"
                better = record.baseline if label == "A>B" else record.model
                happened.append(float(better == game.b))
            else:
                other = [g for g in record.games if g is not game and g.label is not None]
                if len(other) != 1:
                    continue
                happened.append(other[0].score(game.b))
            stated.append(float(game.p_b_better))
            questions_of.append(record.uid)
    if not stated:
        return None
    return calibration_result(stated, happened, questions_of, against=against, seed=seed)


ProbeItem = Callable[[Verdicts, int], Awaitable[dict[str, Any] | None]]


async def _run(
    name: str, chosen: Sequence[Verdicts], one: ProbeItem, *, seed: int, why_none: str
) -> ProbeResult:
    """Ask every chosen item at once (the engine's limits pace them) and summarise their values."""
    results = await asyncio.gather(*(one(record, k) for k, record in enumerate(chosen)))
    items = [found for found in results if found is not None]
    if not items:
        return ProbeResult(name, note=why_none if not chosen else "no probe request gave a verdict")
    interval = mean_interval([item["value"] for item in items], [item["uid"] for item in items], seed=seed)
    return ProbeResult(name, interval, items=items)


class PairwiseProbes:
    """The request probes of one pairwise judge, each on ``per_probe`` items drawn from the run's own."""

    def __init__(self, kind: PairwiseJudge, asker: Asker, judge: str, *, seed: int, per_probe: int) -> None:
        self.kind, self.asker, self.judge, self.seed, self.per_probe = kind, asker, judge, seed, per_probe

    def _texts(self, record: Verdicts) -> tuple[JudgeItem, dict[str, str]] | None:
        item = self.asker.fetch(record.model, record.uid, record.sample)
        if item is None or item.baseline_answer is None:
            return None
        return item, {record.baseline: item.baseline_answer, record.model: item.answer}

    async def _ask(self, item: JudgeItem, game: Game, texts: Mapping[str, str], sample: int) -> Game | None:
        protocol = self.kind.protocol_for(item.question.category)
        label = await self.asker.game(protocol, item.question.prompt, texts[game.a], texts[game.b], sample)
        return None if label is None else Game(game.number, game.a, game.b, label)

    @staticmethod
    def _item(record: Verdicts, before: Game, after: Game, value: float, **more: Any) -> dict[str, Any]:
        return {
            "model": record.model, "uid": record.uid, "sample": record.sample, "game": before.number,
            "before": before.label, "after": after.label, "value": value, **more,
        }  # fmt: skip

    async def verbosity(self, records: Sequence[Verdicts]) -> ProbeResult:
        """The shorter answer padded past the longer one; value: the padded side's score after less before."""

        async def one(record: Verdicts, k: int) -> dict[str, Any] | None:
            found = self._texts(record)
            if found is None:
                return None
            item, texts = found
            shorter, longer = sorted((record.model, record.baseline), key=lambda m: len(texts[m]))
            changed = {**texts, shorter: padded(texts[shorter], longer_than=len(texts[longer]),
                                                question=item.question.prompt)}  # fmt: skip
            before = record.games[k % len(record.games)]
            after = await self._ask(item, before, changed, record.sample)
            if after is None:
                return None
            value = after.score(shorter) - before.score(shorter)
            return self._item(record, before, after, value, padded=shorter)

        chosen = self._draw("verbosity", [r for r in records if r.valid])
        return await _run("verbosity", chosen, one, seed=self.seed, why_none="no valid judgment")

    async def injection(self, records: Sequence[Verdicts]) -> ProbeResult:
        """A note to the judge planted in the answer both of the judge's games found worse, the other answer
        padded by as much; value: the planted side's score after, less before (0: it had lost)."""

        async def one(record: Verdicts, k: int) -> dict[str, Any] | None:
            found = self._texts(record)
            winner = record.agreed_winner()
            if found is None or winner is None:
                return None
            item, texts = found
            worse = record.baseline if winner == record.model else record.model
            changed = dict(texts)
            changed[worse], changed[winner] = planted(texts[worse], texts[winner])
            before = record.games[k % 2]
            after = await self._ask(item, before, changed, record.sample)
            if after is None:
                return None
            return self._item(record, before, after, after.score(worse) - before.score(worse), planted=worse)

        chosen = self._draw("injection", [r for r in records if r.agreed_winner() is not None])
        why = "no question whose two games agree on a winner (nothing to plant against)"
        return await _run("injection", chosen, one, seed=self.seed, why_none=why)

    async def self_consistency(self, records: Sequence[Verdicts]) -> ProbeResult:
        """A stored game asked again unchanged, as a new sample; value: 1 when it names the same winner."""

        async def one(record: Verdicts, k: int) -> dict[str, Any] | None:
            found = self._texts(record)
            if found is None:
                return None
            item, texts = found
            before = record.games[k % len(record.games)]
            after = await self._ask(item, before, texts, record.sample + RESAMPLE)
            if after is None:
                return None
            return self._item(record, before, after, float(after.winner() == before.winner()))

        chosen = self._draw("self_consistency", [r for r in records if r.valid])
        return await _run("self_consistency", chosen, one, seed=self.seed, why_none="no valid judgment")

    def _draw(self, probe: str, candidates: Sequence[Verdicts]) -> list[Verdicts]:
        return draw(candidates, self.per_probe, seed=self.seed, judge=self.judge, probe=probe)


class PairwiseCard:
    """The card hook of the pairwise kind (:mod:`jurist.audit.hooks`): position, consistency, gold
    agreement and calibration from the run's own games; verbosity, injection and self-consistency asked."""

    request_sets = (("verbosity",), ("injection",), ("self_consistency",))

    def __init__(self, kind: PairwiseJudge, context: ProbeContext) -> None:
        self.kind, self.context = kind, context
        self.records: list[Verdicts] = []

    def add(self, record: Mapping[str, Any]) -> int:
        verdicts = verdicts_of(record)
        self.records.append(verdicts)
        return len(verdicts.games)

    def free(self) -> list[ProbeResult]:
        seed, questions = self.context.seed, self.context.questions
        found = position_probes(self.records, seed=seed)
        read = (
            gold_probe(self.records, questions, seed=seed),
            calibration_probe(self.records, questions, seed=seed),
        )
        return found + [result for result in read if result is not None]

    def asks(self, asker: Asker, per_probe: int) -> dict[tuple[str, ...], Ask]:
        context = self.context
        games = PairwiseProbes(self.kind, asker, context.judge, seed=context.seed, per_probe=per_probe)
        return {
            ("verbosity",): listed(games.verbosity, self.records),
            ("injection",): listed(games.injection, self.records),
            ("self_consistency",): listed(games.self_consistency, self.records),
        }


def card_probes(kind: PairwiseJudge, context: ProbeContext) -> PairwiseCard:
    return PairwiseCard(kind, context)
