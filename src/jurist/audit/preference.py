"""The judge card's probes of a preference judge (AlpacaEval's weighted judge: one game per answer, a
probability that the model's answer is better, read from the first token's logprobs).

A preference judgment is one game, so position and calibration need a request: the same answers shown in
the other order. That one request per item serves both probes: position bias is how much more the judge
gives the answer shown first than the order alone explains, ((P_first + P_first, swapped) - 1) / 2, and
calibration is the Brier score of the stored probability against the swapped game's verdict. Verbosity,
injection and self-consistency ask in the stored order, as the pairwise probes do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from jurist.audit.asking import RESAMPLE, Asker, draw
from jurist.audit.card import ProbeResult, calibration_result
from jurist.audit.gold import preference_gold
from jurist.audit.hooks import Ask, ProbeContext
from jurist.audit.perturb import padded, planted
from jurist.audit.verdicts import Preference, hard, preference_of
from jurist.judging import AlpacaJudge, JudgeItem, first_label_probability, is_switched, text_probability
from jurist.ratings import mean_interval

Texts = dict[str, str]


class PreferenceProbes:
    """The request probes of one preference judge, each on ``per_probe`` items drawn from the run's own."""

    def __init__(self, kind: AlpacaJudge, asker: Asker, judge: str, *, seed: int, per_probe: int) -> None:
        self.kind, self.asker, self.judge, self.seed, self.per_probe = kind, asker, judge, seed, per_probe

    async def _p(self, item: JudgeItem, texts: Texts, first: str, second: str, sample: int) -> float | None:
        """P(``first`` is better) with ``first``'s answer shown first, as the judge kind asks it."""
        messages = self.kind.template.render(item.question.prompt, texts[first], texts[second])
        reply = await self.asker.send(list(messages), sample, self.kind.request_params())
        if reply is None:
            return None
        read = first_label_probability(reply.logprobs)
        p = text_probability(reply.text) if read is None else read[0]
        self.asker.unreadable += p is None
        return p

    def _order(self, item: JudgeItem, record: Preference) -> tuple[str, str]:
        """(shown first, shown second) as the stored game showed them (upstream's seeded coin)."""
        if is_switched(item.question.prompt, self.kind.seed):
            return record.model, record.baseline
        return record.baseline, record.model

    async def _p_of(
        self, item: JudgeItem, record: Preference, texts: Texts, side: str, sample: int
    ) -> float | None:
        """P(``side`` is better), asked in the stored order."""
        first, second = self._order(item, record)
        p = await self._p(item, texts, first, second, sample)
        return None if p is None else p if side == first else 1.0 - p

    def _texts(self, record: Preference) -> tuple[JudgeItem, Texts] | None:
        item = self.asker.fetch(record.model, record.uid, record.sample)
        if item is None or item.baseline_answer is None:
            return None
        return item, {record.model: item.answer, record.baseline: item.baseline_answer}

    def _draw(self, probe: str, records: Sequence[Preference]) -> list[Preference]:
        candidates = [r for r in records if r.p_model is not None]
        return draw(candidates, self.per_probe, seed=self.seed, judge=self.judge, probe=probe)

    async def _each(
        self, chosen: Sequence[Preference], one: Callable[[Preference], Awaitable[dict[str, Any] | None]]
    ) -> list[dict[str, Any]]:
        return [found for found in await asyncio.gather(*(one(r) for r in chosen)) if found is not None]

    @staticmethod
    def _item(record: Preference, **more: Any) -> dict[str, Any]:
        return {"model": record.model, "uid": record.uid, "sample": record.sample, **more}

    def _result(self, name: str, items: list[dict[str, Any]], chosen: Sequence[Preference]) -> ProbeResult:
        if not items:
            return ProbeResult(
                name, note="no valid judgment" if not chosen else "no probe reply was readable"
            )
        interval = mean_interval([i["value"] for i in items], [i["uid"] for i in items], seed=self.seed)
        return ProbeResult(name, interval, items=items)

    async def position_and_calibration(self, records: Sequence[Preference]) -> list[ProbeResult]:
        """Each drawn item asked in the other order: position bias, and calibration against that game."""

        async def one(record: Preference) -> dict[str, Any] | None:
            found = self._texts(record)
            if found is None or record.p_model is None:
                return None
            item, texts = found
            first, second = self._order(item, record)
            swapped = await self._p(item, texts, second, first, record.sample)  # P(second is better)
            if swapped is None:
                return None
            p_first = record.p_model if first == record.model else 1.0 - record.p_model
            p_model_swapped = swapped if second == record.model else 1.0 - swapped
            return self._item(record, shown_first=first, p_first=p_first, p_first_swapped=swapped,
                              value=(p_first + swapped - 1.0) / 2, p_model=record.p_model,
                              outcome=hard(p_model_swapped))  # fmt: skip

        chosen = self._draw("position", records)
        items = await self._each(chosen, one)
        position = self._result("position", items, chosen)
        if not items:
            return [position, ProbeResult("calibration", note=position.note)]
        stated, outcomes = [i["p_model"] for i in items], [i["outcome"] for i in items]
        uids = [i["uid"] for i in items]
        return [
            position,
            calibration_result(stated, outcomes, uids, against="the swapped game", seed=self.seed),
        ]

    async def verbosity(self, records: Sequence[Preference]) -> list[ProbeResult]:
        """The shorter answer padded past the longer one: its probability after less before."""

        async def one(record: Preference) -> dict[str, Any] | None:
            found = self._texts(record)
            if found is None or record.p_model is None:
                return None
            item, texts = found
            shorter, longer = sorted((record.model, record.baseline), key=lambda m: len(texts[m]))
            changed = {**texts, shorter: padded(texts[shorter], longer_than=len(texts[longer]),
                                                question=item.question.prompt)}  # fmt: skip
            after = await self._p_of(item, record, changed, shorter, record.sample)
            if after is None:
                return None
            before = record.p_model if shorter == record.model else 1.0 - record.p_model
            return self._item(record, padded=shorter, before=before, after=after, value=after - before)

        chosen = self._draw("verbosity", records)
        return [self._result("verbosity", await self._each(chosen, one), chosen)]

    async def injection(self, records: Sequence[Preference]) -> list[ProbeResult]:
        """A note to the judge planted in the answer it found worse (the other padded alike): 1 when that
        answer now wins, 0.5 for an even preference."""

        async def one(record: Preference) -> dict[str, Any] | None:
            found = self._texts(record)
            if found is None or record.p_model is None or record.p_model == 0.5:
                return None
            item, texts = found
            worse, better = (
                (record.model, record.baseline) if record.p_model < 0.5 else (record.baseline, record.model)
            )
            changed = dict(texts)
            changed[worse], changed[better] = planted(texts[worse], texts[better])
            after = await self._p_of(item, record, changed, worse, record.sample)
            if after is None:
                return None
            return self._item(record, planted=worse, after=after, value=hard(after))

        chosen = self._draw("injection", [r for r in records if r.p_model != 0.5])
        return [self._result("injection", await self._each(chosen, one), chosen)]

    async def self_consistency(self, records: Sequence[Preference]) -> list[ProbeResult]:
        """A stored game asked again, as a new sample: 1 when it prefers the same side."""

        async def one(record: Preference) -> dict[str, Any] | None:
            found = self._texts(record)
            if found is None or record.p_model is None:
                return None
            item, texts = found
            after = await self._p_of(item, record, texts, record.model, record.sample + RESAMPLE)
            if after is None:
                return None
            return self._item(record, before=record.p_model, after=after,
                              value=float(hard(after) == hard(record.p_model)))  # fmt: skip

        chosen = self._draw("self_consistency", records)
        return [self._result("self_consistency", await self._each(chosen, one), chosen)]


class PreferenceCard:
    """The card hook of the preference kind (:mod:`jurist.audit.hooks`): gold agreement and calibration
    against gold labels where the questions carry them; every other probe asked (position and calibration
    against the swapped game share one set)."""

    request_sets = (("position", "calibration"), ("verbosity",), ("injection",), ("self_consistency",))

    def __init__(self, kind: AlpacaJudge, context: ProbeContext) -> None:
        self.kind, self.context = kind, context
        self.records: list[Preference] = []

    def add(self, record: Mapping[str, Any]) -> int:
        self.records.append(preference_of(record))
        return 1

    def free(self) -> list[ProbeResult]:
        return preference_gold(self.records, self.context.questions, seed=self.context.seed)

    def asks(self, asker: Asker, per_probe: int) -> dict[tuple[str, ...], Ask]:
        found, context = self.records, self.context
        probes = PreferenceProbes(self.kind, asker, context.judge, seed=context.seed, per_probe=per_probe)
        return {
            ("position", "calibration"): lambda: probes.position_and_calibration(found),
            ("verbosity",): lambda: probes.verbosity(found),
            ("injection",): lambda: probes.injection(found),
            ("self_consistency",): lambda: probes.self_consistency(found),
        }


def card_probes(kind: AlpacaJudge, context: ProbeContext) -> PreferenceCard:
    return PreferenceCard(kind, context)
