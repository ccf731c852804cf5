"""The dry run's transport: the engine's clients send through it (:class:`jurist.engine.Transport`), and
it writes each request down instead of sending it (:mod:`jurist.run.dry`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jurist.config import ModelSpec
from jurist.engine import Completion, EndpointClient, ModelClient, RequestFailed, WireRequest
from jurist.money import Phase


class NotSent(RequestFailed):
    """What the recording transport raises instead of sending: the caller sees a request that failed."""

    def __init__(self) -> None:
        super().__init__("dry run: not sent", kind="dry-run", attempts=0)


@dataclass
class Planned:
    """One request a run would send."""

    phase: str
    alias: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]


class RecordingTransport:
    """The engine's transport for a dry run (:class:`jurist.engine.Transport`): each request that would be
    sent is written down in ``plan`` and fails as not sent; the cache's answers are counted, per phase and
    model ([completion tokens, replies] in ``cached_replies``), as observations of how long replies are."""

    starts_servers = False  # a managed server is not started: nothing is sent

    def __init__(self, plan: list[Planned], cached_replies: dict[tuple[str, str], list[int]]) -> None:
        self._plan = plan
        self._cached_replies = cached_replies

    def endpoints(self, spec: ModelSpec, budget: object) -> list[EndpointClient]:
        """Named as the real ones are (the cache key holds what answers there), never sent a completion;
        with the key, for the one ``GET /models`` that says what answers there (engine/cache/identity.py)."""
        return [
            EndpointClient(ep.base_url, ep.api_key, ep.model_name or spec.model, 1)
            for ep in spec.resolved_endpoints()
        ]

    async def send(self, client: ModelClient, request: WireRequest) -> Completion:
        self._plan.append(Planned(request.phase, client.alias, request.messages, dict(request.params)))
        raise NotSent

    def answered_from_cache(self, phase: Phase, alias: str, completion: Completion) -> None:
        if isinstance(completion.completion_tokens, int):
            seen = self._cached_replies.setdefault((phase, alias), [0, 0])
            seen[0] += completion.completion_tokens
            seen[1] += 1 + len(completion.more)
