"""How a probe asks the judge: through the run's own engine client (its limits, cache, budget and ledger),
under the ledger phase ``probe``, and how a probe's items are drawn.

A probe request is the judge's own request with one thing changed (an answer padded, a sentence planted),
so it is built by the judge kind's own prompt and read by its own reader. It is not re-asked when its reply
has no verdict: the item is left out of the probe and counted, since a probe measures the judge's verdicts,
not its format.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from jurist.engine import Completion, ModelClient, RequestFailed
from jurist.judging import JudgeItem, JudgeProtocol

RESAMPLE = 1_000_003
"""Added to a sample's number when the self-consistency probe asks a judgment again: the request cache
tells the new ask from the stored one by it (the request itself is the same), so the judge is asked
afresh, at its own temperature, and a re-run of the probe is served from the cache."""

T = TypeVar("T")


def draw(candidates: Sequence[T], n: int, *, seed: int, judge: str, probe: str) -> list[T]:
    """``n`` of ``candidates`` (all when fewer), drawn by a generator seeded by the run's card seed, the
    judge and the probe: the same run draws the same items again."""
    if n >= len(candidates):
        return list(candidates)
    return random.Random(f"{seed}|{judge}|{probe}").sample(list(candidates), n)


@dataclass
class Asker:
    """One judge's probe requests: sent through ``client``, counted, their failures counted, not raised
    (a probe item that could not be asked is left out: the run's own results are what matters)."""

    client: ModelClient
    fetch: Callable[[str, str, int], JudgeItem | None]
    """(model, uid, sample) -> the judged item with its answers' texts, None when they are gone."""
    sent: int = 0
    failed: int = 0
    unreadable: int = 0
    errors: list[str] = field(default_factory=list)

    async def send(
        self, messages: list[dict[str, Any]], sample: int, params: dict[str, Any]
    ) -> Completion | None:
        """One probe request's reply, or None when it failed after the engine's retries."""
        self.sent += 1
        try:
            return await self.client.complete(messages, sample=sample, cache="use", phase="probe", **params)
        except RequestFailed as exc:
            self.failed += 1
            if len(self.errors) < 3:
                self.errors.append(str(exc))
            return None

    async def game(
        self, protocol: JudgeProtocol, question: str, answer_a: str, answer_b: str, sample: int
    ) -> str | None:
        """One pairwise game as the judge kind asks it: its verdict label, None when there is none."""
        messages: list[dict[str, Any]] = []
        if protocol.system_prompt:
            messages.append({"role": "system", "content": protocol.system_prompt})
        messages.append({"role": "user", "content": protocol.user_message(question, answer_a, answer_b)})
        reply = await self.send(messages, sample, protocol.request_params(self.client.spec))
        if reply is None:
            return None
        label, _ = protocol.read(reply.text, reply.logprobs, protocol.shown(question, answer_a, answer_b))
        self.unreadable += label is None
        return label
