"""The judge card's probes of a rubric grader (one request per rubric item or criterion).

Lenience grades an off-topic answer on items drawn from the run's own: a grader that marks them met
rewards answers for nothing. Verbosity grades a drawn item again on its answer padded with content-free
text: a grade that rises rewards length. Only items with positive points are drawn for lenience (a
negative item, one that describes a fault, may fairly be met by an off-topic answer). Self-consistency
grades a drawn item again, unchanged, as a new sample (skipped at temperature 0).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from jurist.audit.asking import RESAMPLE, Asker, draw
from jurist.audit.card import ProbeResult
from jurist.audit.hooks import Ask, ProbeContext, listed
from jurist.audit.perturb import OFF_TOPIC, padded
from jurist.audit.verdicts import Grades, grades_of
from jurist.judging import RubricJudge
from jurist.ratings import mean_interval

ItemRef = tuple[Grades, int, float]
"""(the judgment, the rubric item's index, the value the grader gave it in the run)."""


class RubricProbes:
    """The request probes of one rubric grader, each on ``per_probe`` items drawn from the run's own."""

    def __init__(self, kind: RubricJudge, asker: Asker, judge: str, *, seed: int, per_probe: int) -> None:
        self.kind, self.asker, self.judge, self.seed, self.per_probe = kind, asker, judge, seed, per_probe

    async def _grade(
        self, grades: Grades, index: int, answer: str | None, *, again: bool = False
    ) -> float | None:
        """The grader's value for item ``index`` of ``grades``'s question on ``answer`` (None: the run's own
        answer, padded unless ``again``: then asked again unchanged, as a new sample), or None when it
        could not be had."""
        item = self.asker.fetch(grades.model, grades.uid, grades.sample)
        if item is None:
            return None
        if answer is None:
            answer = self.kind.grader.shown(item.answer, item.written)
            if not again:
                answer = padded(answer, longer_than=len(answer), question=item.question.prompt)
        grader = self.kind.grader
        messages = grader.messages(item.question, answer, index)
        sample = grades.sample + RESAMPLE if again else grades.sample
        reply = await self.asker.send(list(messages), sample, dict(self.kind.params))
        if reply is None:
            return None
        grade = grader.read(reply.text)
        self.asker.unreadable += grade is None
        return None if grade is None else grader.value(grade)

    async def _run(self, name: str, chosen: Sequence[ItemRef], answer: str | None) -> ProbeResult:
        again = name == "self_consistency"

        async def one(ref: ItemRef) -> dict[str, Any] | None:
            grades, index, before = ref
            after = await self._grade(grades, index, answer, again=again)
            if after is None:
                return None
            value = after if answer is not None else float(after == before) if again else after - before
            return {"model": grades.model, "uid": grades.uid, "sample": grades.sample, "item": index,
                    "before": before, "after": after, "value": value}  # fmt: skip

        asked: list[Awaitable[dict[str, Any] | None]] = [one(ref) for ref in chosen]
        items = [found for found in await asyncio.gather(*asked) if found is not None]
        if not items:
            return ProbeResult(name, note="no scored rubric item" if not chosen else "no grade could be read")
        interval = mean_interval([i["value"] for i in items], [i["uid"] for i in items], seed=self.seed)
        return ProbeResult(name, interval, items=items)

    def _refs(self, records: Sequence[Grades], *, positive: bool) -> list[ItemRef]:
        return [
            (grades, index, value)
            for grades in records
            for index, points, value in grades.items
            if value is not None and (not positive or points is None or points > 0)
        ]

    async def lenience(self, records: Sequence[Grades]) -> ProbeResult:
        """The share of drawn (positive) items an off-topic answer is graded as meeting."""
        chosen = draw(self._refs(records, positive=True), self.per_probe, seed=self.seed, judge=self.judge,
                      probe="lenience")  # fmt: skip
        return await self._run("lenience", chosen, OFF_TOPIC)

    async def verbosity(self, records: Sequence[Grades]) -> ProbeResult:
        """The mean change of a drawn item's value when its answer is padded with content-free text."""
        chosen = draw(self._refs(records, positive=False), self.per_probe, seed=self.seed, judge=self.judge,
                      probe="rubric_verbosity")  # fmt: skip
        return await self._run("rubric_verbosity", chosen, None)

    async def self_consistency(self, records: Sequence[Grades]) -> ProbeResult:
        """The share of drawn items graded the same when asked again unchanged, as a new sample."""
        chosen = draw(self._refs(records, positive=False), self.per_probe, seed=self.seed, judge=self.judge,
                      probe="self_consistency")  # fmt: skip
        return await self._run("self_consistency", chosen, None)


class RubricCard:
    """The card hook of the rubric kind (:mod:`jurist.audit.hooks`): every probe asked."""

    request_sets = (("lenience",), ("rubric_verbosity",), ("self_consistency",))

    def __init__(self, kind: RubricJudge, context: ProbeContext) -> None:
        self.kind, self.context = kind, context
        self.records: list[Grades] = []

    def add(self, record: Mapping[str, Any]) -> int:
        grader, items = self.kind.grader, record.get("items") or []
        values = [grader.value(e) if e.get("status") == "scored" else None for e in items]
        self.records.append(grades_of(record, values))
        return len(items)

    def free(self) -> list[ProbeResult]:
        return []

    def asks(self, asker: Asker, per_probe: int) -> dict[tuple[str, ...], Ask]:
        context = self.context
        graders = RubricProbes(self.kind, asker, context.judge, seed=context.seed, per_probe=per_probe)
        return {
            ("lenience",): listed(graders.lenience, self.records),
            ("rubric_verbosity",): listed(graders.verbosity, self.records),
            ("self_consistency",): listed(graders.self_consistency, self.records),
        }


def card_probes(kind: RubricJudge, context: ProbeContext) -> RubricCard:
    return RubricCard(kind, context)
