"""One run's judge card: every judge's probes, within a tenth of the run's judge requests.

The run's judgments are read once (:meth:`JudgeCardRun.add`) into verdicts without texts; then each judge's
probes run at once through the run's engine (:meth:`JudgeCardRun.probe`). What a probe costs: position,
consistency, gold agreement and calibration read the run's own games (no request); every other probe sends
one request per item, and all of a judge's request probes together send at most :data:`BUDGET_SHARE` of
the judge requests its judgments hold. Each such probe gets ``sample`` items (``--judge-card N``), fewer
when the share allows fewer, and is skipped, with a note saying so, below :data:`MIN_ITEMS`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jurist.audit.asking import Asker
from jurist.audit.card import JudgeAudit, ProbeResult, card_document
from jurist.audit.pairwise import PairwiseProbes, calibration_probe, gold_probe, position_probes
from jurist.audit.rubric import RubricProbes
from jurist.audit.verdicts import Grades, Verdicts, grades_of, verdicts_of
from jurist.engine.client import ModelClient
from jurist.judging import JudgeItem, JudgeKind, PairwiseJudge, RubricJudge
from jurist.store.records import Question

BUDGET_SHARE = 0.10
"""The probes of a judge send at most this share of the judge requests its judgments in the run hold."""
DEFAULT_SAMPLE = 50
"""Items per request probe when ``--judge-card`` gives no number (fewer when the share allows fewer)."""
MIN_ITEMS = 10
"""A request probe with fewer items than this is skipped: its interval would say nothing."""

Fetch = Callable[[str, str, int], JudgeItem | None]


@dataclass
class _Judge:
    kind: JudgeKind
    verdicts: list[Verdicts] = field(default_factory=list)
    grades: list[Grades] = field(default_factory=list)
    requests: int = 0


def _temperature(kind: JudgeKind, client: ModelClient) -> float | None:
    """The temperature the judge's requests are sent at (None: the server's default)."""
    if client.spec.temperature is not None:
        return float(client.spec.temperature)
    preset = getattr(kind, "params", {}).get("temperature")
    return None if preset is None else float(preset)


class JudgeCardRun:
    """The judge card of one run: judgments added as they are read, then every judge probed."""

    def __init__(
        self,
        kinds: Mapping[str, JudgeKind],
        questions: Mapping[str, Question],
        *,
        seed: int,
        sample: int | None,
    ) -> None:
        self.questions, self.seed = questions, seed
        self.sample = DEFAULT_SAMPLE if sample is None else sample
        self._judges = {judge: _Judge(kind) for judge, kind in kinds.items()}

    def add(self, judge: str, record: Mapping[str, Any]) -> None:
        """One stored judgment of ``judge`` (kept as its verdicts only)."""
        entry = self._judges[judge]
        if isinstance(entry.kind, PairwiseJudge):
            verdicts = verdicts_of(record)
            entry.verdicts.append(verdicts)
            entry.requests += len(verdicts.games)
        elif isinstance(entry.kind, RubricJudge):
            grader, items = entry.kind.grader, record.get("items") or []
            values = [grader.value(e) if e.get("status") == "scored" else None for e in items]
            entry.grades.append(grades_of(record, values))
            entry.requests += len(items)

    async def probe(
        self, client: Callable[[str], ModelClient], fetch: Callable[[str], Fetch], stopped: Callable[[], bool]
    ) -> dict[str, Any]:
        """Every judge probed at once; judge_card.json's document."""
        audits = await asyncio.gather(
            *(self._probe_judge(judge, client(judge), fetch(judge), stopped) for judge in self._judges)
        )
        return card_document(list(audits), seed=self.seed, sample=self.sample)

    async def _probe_judge(
        self, judge: str, client: ModelClient, fetch: Fetch, stopped: Callable[[], bool]
    ) -> JudgeAudit:
        entry = self._judges[judge]
        budget = int(entry.requests * BUDGET_SHARE)
        audit = JudgeAudit(judge, entry.kind.name, entry.requests, budget)
        asker = Asker(client, fetch)
        kind = entry.kind
        if isinstance(kind, PairwiseJudge):
            audit.probes += position_probes(entry.verdicts, seed=self.seed)
            for found in (
                gold_probe(entry.verdicts, self.questions, seed=self.seed),
                calibration_probe(entry.verdicts, self.questions, seed=self.seed),
            ):
                audit.probes += [found] if found is not None else []
            probes = PairwiseProbes(kind, asker, judge, seed=self.seed, per_probe=0)
            asks = {"verbosity": probes.verbosity, "injection": probes.injection}
            if _temperature(kind, client) == 0:
                audit.probes.append(
                    ProbeResult("self_consistency", note="skipped: the judge's temperature is 0")
                )
            else:
                asks["self_consistency"] = probes.self_consistency
            audit.probes += await self._asked(audit, asks, probes, entry.verdicts, stopped)
        elif isinstance(kind, RubricJudge):
            graders = RubricProbes(kind, asker, judge, seed=self.seed, per_probe=0)
            asks_r = {"lenience": graders.lenience, "rubric_verbosity": graders.verbosity}
            audit.probes += await self._asked(audit, asks_r, graders, entry.grades, stopped)
        else:
            audit.notes.append(f"the judge card has no probes for judge kind {kind.name!r} yet")
        audit.probe_requests, audit.failed_requests = asker.sent, asker.failed
        if stopped() and asker.failed:
            audit.notes.append("the budget (--max-cost / --max-tokens) refused probe requests: fewer items")
        if asker.unreadable:
            audit.notes.append(f"{asker.unreadable} probe reply(ies) gave no verdict and were left out")
        audit.notes += [f"probe request failed: {error}" for error in asker.errors]
        return audit

    async def _asked(self, audit: JudgeAudit, asks: Mapping[str, Any], probes: Any, records: Any,
                     stopped: Callable[[], bool]) -> list[ProbeResult]:  # fmt: skip
        """The request probes in ``asks``, each on as many items as the budget's share allows."""
        per = min(self.sample, audit.probe_budget // max(len(asks), 1))
        if per < MIN_ITEMS or stopped():
            why = (
                "skipped: the budget stopped the run" if stopped() else
                f"skipped: {audit.judge_requests} judge requests allow {audit.probe_budget} probe requests "
                f"({BUDGET_SHARE:.0%}), fewer than {MIN_ITEMS} per probe"
            )  # fmt: skip
            return [ProbeResult(name, note=why) for name in asks]
        probes.per_probe = per
        return list(await asyncio.gather(*(ask(records) for ask in asks.values())))
