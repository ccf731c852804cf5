"""The probe hook a judge kind declares: which module holds its card probes, and what that module gives.

A judge kind names its probes module in the registry of judge kinds (``register(..., probes=MODULE)``, or
the built-in kinds' own line), as a dotted name that the card imports only when it probes: the kinds stay
below the card (judging never imports audit), and a new kind is one module plus one registry line, card
included. The module exposes ``card_probes(kind, context)`` returning a :class:`KindProbes`; a kind that
names none gets a card with a note and no probes.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from jurist.audit.asking import Asker
from jurist.audit.card import ProbeResult
from jurist.errors import JuristError
from jurist.judging import JudgeKind, judge_kind_probes
from jurist.store import Question

Ask = Callable[[], Awaitable[list[ProbeResult]]]
"""One set of probe requests, and the probes they measure."""
SELF_CONSISTENCY = ("self_consistency",)
"""The request set asked again unchanged: left out at temperature 0 (it would measure the server)."""
T = TypeVar("T")
HOOK = "card_probes"
"""The name of the factory a probes module exposes."""


@dataclass(frozen=True)
class ProbeContext:
    """What a kind's probes know of the run: the judge's alias, the card's seed and the questions (with
    any gold labels in their metadata)."""

    judge: str
    seed: int
    questions: Mapping[str, Question]


class KindProbes(Protocol):
    """The card probes of one judge of one kind in one run: judgments added as they are read, then the
    probes that read them alone (no request) and the sets of probe requests."""

    request_sets: Sequence[tuple[str, ...]]
    """Each set of probe requests, as the probes it measures (one request per item per set)."""

    def add(self, record: Mapping[str, Any]) -> int:
        """Keep one stored judgment's verdicts; the judge requests it holds. Raises KeyError, TypeError or
        ValueError on a judgment the card cannot read (counted and left out by the caller)."""
        ...

    def free(self) -> list[ProbeResult]:
        """The probes read from the run's own judgments, without a request."""
        ...

    def asks(self, asker: Asker, per_probe: int) -> Mapping[tuple[str, ...], Ask]:
        """Each of :attr:`request_sets`, ready to send ``per_probe`` items through ``asker``."""
        ...


ProbesFactory = Callable[[Any, ProbeContext], KindProbes]
"""``card_probes(kind, context)``: the probes of ``kind`` (the kind's own class, typed by its module)."""


def kind_probes(kind: JudgeKind, context: ProbeContext) -> KindProbes | None:
    """The probes the registry names for ``kind`` (by its ``name``), or None when it names none."""
    module_name = judge_kind_probes(kind.name)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise JuristError(f"judge kind {kind.name!r}: cannot import its probes module ({exc})") from None
    factory: ProbesFactory | None = getattr(module, HOOK, None)
    if not callable(factory):
        raise JuristError(f"judge kind {kind.name!r}: its probes module {module_name} has no {HOOK}()")
    return factory(kind, context)


def listed(probe: Callable[[Sequence[T]], Awaitable[ProbeResult]], records: Sequence[T]) -> Ask:
    """One probe on ``records`` as a set of requests measuring it alone."""

    async def ask() -> list[ProbeResult]:
        return [await probe(records)]

    return ask
