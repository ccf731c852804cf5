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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from jurist.audit.asking import Asker
from jurist.audit.card import MIN_ITEMS, JudgeAudit, ProbeResult, card_document
from jurist.audit.pairwise import PairwiseProbes, calibration_probe, gold_probe, position_probes
from jurist.audit.preference import PreferenceProbes
from jurist.audit.rubric import RubricProbes
from jurist.audit.verdicts import Grades, Preference, Verdicts, grades_of, preference_of, verdicts_of
from jurist.config import ModelSpec
from jurist.engine.client import ModelClient
from jurist.judging import AlpacaJudge, JudgeItem, JudgeKind, PairwiseJudge, RubricJudge
from jurist.store.records import Question

BUDGET_SHARE = 0.10
"""The probes of a judge send at most this share of the judge requests its judgments in the run hold."""
DEFAULT_SAMPLE = 50
"""Items per request probe when ``--judge-card`` gives no number (fewer when the share allows fewer)."""

Fetch = Callable[[str, str, int], JudgeItem | None]
T = TypeVar("T")


@dataclass
class _Judge:
    kind: JudgeKind
    verdicts: list[Verdicts] = field(default_factory=list)
    grades: list[Grades] = field(default_factory=list)
    preferences: list[Preference] = field(default_factory=list)
    requests: int = 0
    unread: int = 0


def temperature(kind: JudgeKind, spec: ModelSpec) -> float | None:
    """The temperature the judge's requests are sent at (None: the server's default)."""
    if spec.temperature is not None:
        return float(spec.temperature)
    preset = getattr(kind, "params", {}).get("temperature")
    return None if preset is None else float(preset)


def request_sets(kind: JudgeKind, spec: ModelSpec) -> int:
    """How many sets of probe requests a judge's card sends (one per request probe; the preference
    kind's position and calibration share one): self-consistency is left out at temperature 0."""
    sets = 3 if isinstance(kind, PairwiseJudge | RubricJudge) else 4 if isinstance(kind, AlpacaJudge) else 0
    return sets - 1 if sets and temperature(kind, spec) == 0 else sets


def items_per_probe(judge_requests: int, sets: int, sample: int) -> int:
    """Items per request probe: ``sample``, fewer when a tenth of the judge requests split between the
    ``sets`` allows fewer, and 0 (the probes skipped) below :data:`MIN_ITEMS`."""
    if not sets:
        return 0
    per = min(sample, int(judge_requests * BUDGET_SHARE) // sets)
    return per if per >= MIN_ITEMS else 0


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
        """One stored judgment of ``judge`` (kept as its verdicts only); one the card cannot read (an
        imported judgment without the fields it needs) is counted and left out, never fatal."""
        entry = self._judges[judge]
        try:
            self._add(entry, record)
        except (KeyError, TypeError, ValueError):
            entry.unread += 1

    def _add(self, entry: _Judge, record: Mapping[str, Any]) -> None:
        if isinstance(entry.kind, PairwiseJudge):
            verdicts = verdicts_of(record)
            entry.verdicts.append(verdicts)
            entry.requests += len(verdicts.games)
        elif isinstance(entry.kind, AlpacaJudge):
            entry.preferences.append(preference_of(record))
            entry.requests += 1
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
        audit = JudgeAudit(judge, entry.kind.name, entry.requests, int(entry.requests * BUDGET_SHARE))
        asker = Asker(client, fetch)
        kind = entry.kind
        prober: _PerProbe | None = None
        asks: dict[tuple[str, ...], Ask] = {}
        if isinstance(kind, PairwiseJudge):
            verdicts, seed = entry.verdicts, self.seed
            audit.probes += position_probes(verdicts, seed=seed)
            free = (
                gold_probe(verdicts, self.questions, seed=seed),
                calibration_probe(verdicts, self.questions, seed=seed),
            )
            audit.probes += [found for found in free if found is not None]
            prober = games = PairwiseProbes(kind, asker, judge, seed=seed, per_probe=0)
            asks = {
                ("verbosity",): _listed(games.verbosity, verdicts),
                ("injection",): _listed(games.injection, verdicts),
                ("self_consistency",): _listed(games.self_consistency, verdicts),
            }
        elif isinstance(kind, AlpacaJudge):
            prober = preferences = PreferenceProbes(kind, asker, judge, seed=self.seed, per_probe=0)
            found = entry.preferences
            asks = {
                ("position", "calibration"): lambda: preferences.position_and_calibration(found),
                ("verbosity",): lambda: preferences.verbosity(found),
                ("injection",): lambda: preferences.injection(found),
                ("self_consistency",): lambda: preferences.self_consistency(found),
            }
        elif isinstance(kind, RubricJudge):
            prober = graders = RubricProbes(kind, asker, judge, seed=self.seed, per_probe=0)
            asks = {
                ("lenience",): _listed(graders.lenience, entry.grades),
                ("rubric_verbosity",): _listed(graders.verbosity, entry.grades),
                ("self_consistency",): _listed(graders.self_consistency, entry.grades),
            }
        else:
            audit.notes.append(f"the judge card has no probes for judge kind {kind.name!r} yet")
        if ("self_consistency",) in asks and temperature(kind, client.spec) == 0:
            del asks[("self_consistency",)]
            audit.probes.append(ProbeResult("self_consistency", note="skipped: the judge's temperature is 0"))
        audit.probes += await self._asked(audit, asks, prober, stopped)
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
        prober: _PerProbe | None,
        stopped: Callable[[], bool],
    ) -> list[ProbeResult]:
        """The request probes in ``asks`` (each key: the probes one set of requests measures), each set on
        as many items as the budget's share allows."""
        if not asks:
            return []
        per = items_per_probe(audit.judge_requests, len(asks), self.sample)
        if not per or stopped():
            why = (
                "skipped: the budget stopped the run" if stopped() else
                f"skipped: --judge-card {self.sample} is fewer than the {MIN_ITEMS} items a probe needs"
                if self.sample < MIN_ITEMS else
                f"skipped: {audit.judge_requests} judge requests allow {audit.probe_budget} probe requests "
                f"({BUDGET_SHARE:.0%}), fewer than {MIN_ITEMS} per probe"
            )  # fmt: skip
            return [ProbeResult(name, note=why) for names in asks for name in names]
        if prober is not None:
            prober.per_probe = per
        found = await asyncio.gather(*(ask() for ask in asks.values()))
        return [result for results in found for result in results]


Ask = Callable[[], Awaitable[list[ProbeResult]]]
"""One set of probe requests, and the probes they measure."""


class _PerProbe(Protocol):
    """The probes of one judge, whose items per probe the budget sets once their number is known."""

    per_probe: int


def _listed(probe: Callable[[Sequence[T]], Awaitable[ProbeResult]], records: Sequence[T]) -> Ask:
    async def ask() -> list[ProbeResult]:
        return [await probe(records)]

    return ask
