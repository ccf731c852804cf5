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
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jurist.audit.asking import Asker
from jurist.audit.card import MIN_ITEMS, JudgeAudit, ProbeResult, card_document
from jurist.audit.hooks import SELF_CONSISTENCY, Ask, KindProbes, ProbeContext, kind_probes
from jurist.config import ModelSpec
from jurist.engine import ModelClient
from jurist.judging import JudgeItem, JudgeKind
from jurist.store import Question

BUDGET_SHARE = 0.10
"""The probes of a judge send at most this share of the judge requests its judgments in the run hold."""
DEFAULT_SAMPLE = 50
"""Items per request probe when ``--judge-card`` gives no number (fewer when the share allows fewer)."""

Fetch = Callable[[str, str, int], JudgeItem | None]


@dataclass
class _Judge:
    kind: JudgeKind
    probes: KindProbes | None
    requests: int = 0
    unread: int = 0


def temperature(kind: JudgeKind, spec: ModelSpec) -> float | None:
    """The temperature the judge's requests are sent at (None: the server's default)."""
    if spec.temperature is not None:
        return float(spec.temperature)
    preset = getattr(kind, "params", {}).get("temperature")
    return None if preset is None else float(preset)


def request_sets(kind: JudgeKind, spec: ModelSpec) -> int:
    """How many sets of probe requests a judge's card sends (its kind's probe hook says which; one
    request per item per set): self-consistency is left out at temperature 0."""
    probes = kind_probes(kind, ProbeContext("", 0, {}))
    return 0 if probes is None else len(_sent_sets(probes, kind, spec))


def _sent_sets(probes: KindProbes, kind: JudgeKind, spec: ModelSpec) -> list[tuple[str, ...]]:
    skip = temperature(kind, spec) == 0
    return [names for names in probes.request_sets if not (skip and names == SELF_CONSISTENCY)]


def items_per_probe(judge_requests: int, sets: int, sample: int, *, asked: bool = False) -> int:
    """Items per request probe: ``sample``, fewer when a tenth of the judge requests split between the
    ``sets`` allows fewer, and 0 (the probes skipped) below :data:`MIN_ITEMS`. ``asked``: the user named
    ``sample`` (``--judge-card N``), so it is sent whatever the tenth allows (a small run's way to get its
    request probes at all)."""
    if not sets:
        return 0
    per = sample if asked else min(sample, int(judge_requests * BUDGET_SHARE) // sets)
    return per if per >= MIN_ITEMS else 0


def probes_need(sets: int) -> tuple[int, int]:
    """(probe requests, judge requests) a judge's ``sets`` of request probes need to run within the tenth:
    :data:`MIN_ITEMS` items each, and ten times as many judge requests."""
    requests = sets * MIN_ITEMS
    return requests, math.ceil(round(requests / BUDGET_SHARE, 6))


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
        self.asked = sample is not None  # --judge-card N: N items per probe, past the tenth if need be
        self._judges = {
            judge: _Judge(kind, kind_probes(kind, ProbeContext(judge, seed, questions)))
            for judge, kind in kinds.items()
        }

    def add(self, judge: str, record: Mapping[str, Any]) -> None:
        """One stored judgment of ``judge`` (kept as its verdicts only); one the card cannot read (an
        imported judgment without the fields it needs) is counted and left out, never fatal."""
        entry = self._judges[judge]
        if entry.probes is None:
            return
        try:
            entry.requests += entry.probes.add(record)
        except (KeyError, TypeError, ValueError):
            entry.unread += 1

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
        audit = JudgeAudit(judge, entry.kind.name, entry.requests, int(entry.requests * BUDGET_SHARE))
        asker = Asker(client, fetch)
        kind, probes = entry.kind, entry.probes
        if probes is None:
            audit.notes.append(f"judge kind {kind.name!r} declares no judge-card probes")
        else:
            sent = _sent_sets(probes, kind, client.spec)
            per = items_per_probe(audit.judge_requests, len(sent), self.sample, asked=self.asked)
            if self.asked:
                audit.probe_budget = max(audit.probe_budget, per * len(sent))
            asks = probes.asks(asker, per)
            # the requests go out first; the probes the run's own games answer (their bootstraps: 0.08 s
            # for Arena-Hard's 750 questions) are worked out in a thread while the replies are awaited
            asking = asyncio.ensure_future(
                self._asked(audit, {names: asks[names] for names in sent}, per, stopped)
            )
            try:
                free = await asyncio.to_thread(probes.free)
            except BaseException:
                asking.cancel()
                raise
            audit.probes += free
            if SELF_CONSISTENCY in probes.request_sets and SELF_CONSISTENCY not in sent:
                skipped = "skipped: the judge's temperature is 0"
                audit.probes.append(ProbeResult("self_consistency", note=skipped))
            asked = await asking
            # a probe read from gold labels is kept over the same probe measured against the swapped game
            read = {result.name for result in free}
            audit.probes += [result for result in asked if result.name not in read]
        audit.probe_requests, audit.failed_requests = asker.sent, asker.failed
        if entry.unread:
            audit.notes.append(
                f"{entry.unread} stored judgment(s) lacked what the card reads and were left out"
            )
        if stopped() and asker.failed:
            audit.notes.append("the budget (--max-cost / --max-tokens) refused probe requests: fewer items")
        if asker.unreadable:
            audit.notes.append(f"{asker.unreadable} probe reply(ies) gave no verdict and were left out")
        audit.notes += [f"probe request failed: {error}" for error in asker.errors]
        return audit

    async def _asked(
        self,
        audit: JudgeAudit,
        asks: Mapping[tuple[str, ...], Ask],
        per: int,
        stopped: Callable[[], bool],
    ) -> list[ProbeResult]:
        """The request probes in ``asks`` (each key: the probes one set of requests measures), each set on
        ``per`` items, as many as the budget's share allows."""
        if not asks:
            return []
        if not per or stopped():
            why = (
                "skipped: the budget stopped the run" if stopped() else
                f"skipped: --judge-card {self.sample} is fewer than the {MIN_ITEMS} items a probe needs"
                if self.sample < MIN_ITEMS else
                f"skipped: {audit.judge_requests} judge requests allow {audit.probe_budget} probe requests "
                f"({BUDGET_SHARE:.0%}), fewer than {MIN_ITEMS} per probe"
            )  # fmt: skip
            return [ProbeResult(name, note=why) for names in asks for name in names]
        found = await asyncio.gather(*(ask() for ask in asks.values()))
        return [result for results in found for result in results]
