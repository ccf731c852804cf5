"""The HTTP face of the reward service (aiohttp): routes, the bearer token, bounds, errors as one line.

Safe by default: the server binds 127.0.0.1 and, there, answers only requests whose Host header names it
(a web page cannot reach it through a rebound DNS name); POST bodies must be ``application/json`` (which no
page can send cross-origin without a preflight this server never grants). With a token, every request,
``/health`` included, needs ``Authorization: Bearer TOKEN`` (401 otherwise, compared in constant time).
Bodies and batches are bounded; anything malformed is a 4xx with ``{"error": one line}`` and the server
goes on serving. Nothing from a body or a judge reply is logged, and errors pass through the secret mask.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from jurist.judging import JudgeItem
from jurist.redact import mask
from jurist.serve.metrics import ServeMetrics
from jurist.serve.service import BadItem, RewardItem, RewardOutcome, RewardService
from jurist.serve.shapes import (
    BadRequest,
    openrlhf_items,
    openrlhf_response,
    outcome_dict,
    reward_items,
    verify_item,
    verify_response,
)

log = logging.getLogger("jurist.serve")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Bounds:
    """What one request may hold."""

    max_body_bytes: int = 32 * 1024 * 1024
    max_batch: int = 1024


@dataclass
class Access:
    """Who may ask: the token (None: anyone who can connect) and, on a loopback address, the Host names
    the server answers to (set once the port is bound)."""

    token: str | None
    hosts: frozenset[str] | None = None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(status: int, text: str) -> web.Response:
    line = mask(text.splitlines()[0] if text else "error")[:500]
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return web.json_response({"error": line}, status=status, headers=headers)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(data, ensure_ascii=False), status=status, content_type="application/json"
    )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


async def read_json(request: web.Request) -> Any:
    """The request's JSON body (bounded by the app's ``client_max_size``: 413 past it)."""
    if request.content_type != "application/json":
        raise BadRequest("the body must be JSON sent as Content-Type: application/json")
    data = await request.read()
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise BadRequest("the body is not valid JSON") from None


class RewardRoutes:
    """The handlers, around one :class:`RewardService`."""

    def __init__(self, service: RewardService, bounds: Bounds, metrics: ServeMetrics) -> None:
        self.service, self.bounds, self.metrics = service, bounds, metrics
        settings = service.settings
        self.invalid_reward = settings.invalid_reward
        self.reward = service.family_reward

    async def health(self, request: web.Request) -> web.Response:
        service = self.service
        return _json({
            "status": "ok", "bench": service.bench.name, "family": service.family, "judge": service.judge,
            "reward": self.reward.rule,
            "questions": len(service.bench.questions),
        })  # fmt: skip

    async def metrics_page(self, request: web.Request) -> web.Response:
        engine = self.service.engine
        total = self.service.ledger.summary().get("total") or {}
        return _json(self.metrics.document(engine.stats.summary(), total))

    async def _judge(self, items: list[RewardItem]) -> list[RewardOutcome]:
        """Every item checked before any is sent (a bad one refuses the request), then all judged at once
        within the engine's limits (rule items: checked as one batch)."""
        prepared = []
        for n, item in enumerate(items):
            try:
                prepared.append(self.service.prepare(item))
            except BadItem as exc:
                raise BadRequest(f"item {n}: {exc}") from None
        outcomes = await self.service.reward_many(items, prepared)
        for item, outcome in zip(items, outcomes, strict=True):
            self.metrics.item(item, outcome)
        return list(outcomes)

    async def v1_reward(self, request: web.Request) -> web.Response:
        items = reward_items(await read_json(request), self.bounds.max_batch)
        outcomes = await self._judge(items)
        shown = [outcome_dict(o, self.reward) for o in outcomes]
        total: dict[str, Any] = {"requests": 0, "cache_hits": 0, "failed": 0, "cost_usd": None}
        for outcome in outcomes:
            total["requests"] += outcome.cost.requests
            total["cache_hits"] += outcome.cost.cache_hits
            total["failed"] += outcome.cost.failed
            if outcome.cost.cost_usd is not None:
                total["cost_usd"] = (total["cost_usd"] or 0.0) + outcome.cost.cost_usd
        return _json({"family": self.service.family, "items": shown, "cost": total})

    async def verify(self, request: web.Request) -> web.Response:
        if not self.reward.two_games:
            raise BadRequest(
                f"/verify serves pairwise benchmarks; {self.service.bench.name} is {self.service.family}"
            )
        body, item = verify_item(await read_json(request))
        try:
            prepared = self.service.prepare(item)
        except BadItem as exc:
            raise BadRequest(str(exc)) from None
        outcome = await self.service.reward(item, prepared)
        self.metrics.item(item, outcome)
        category = prepared.question.category if isinstance(prepared, JudgeItem) else prepared.category
        return _json(verify_response(body, outcome, category, self.invalid_reward))

    async def get_reward(self, request: web.Request) -> web.Response:
        body = await read_json(request)
        items = openrlhf_items(body, self.bounds.max_batch, lambda uid: uid in self.service.by_uid)
        outcomes = await self._judge(items)
        for n, outcome in enumerate(outcomes):
            if outcome.error is not None:  # OpenRLHF has no per-item error: the batch fails, and its retry
                return error(502, f"item {n}: {outcome.error}")  # costs nothing for the items judged
        return _json(openrlhf_response(outcomes, self.invalid_reward, self.reward.scale))


def guard(access: Access, metrics: ServeMetrics) -> Any:
    """The middleware: Host and token first, then the handler, every error as one JSON line."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        response = await _guarded(request, handler, access)
        metrics.request(request.path if response.status != 404 else "other", response.status,
                        time.perf_counter() - started)  # fmt: skip
        return response

    return middleware


async def _guarded(request: web.Request, handler: Handler, access: Access) -> web.StreamResponse:
    if access.hosts is not None and request.headers.get("Host", "") not in access.hosts:
        return error(421, "unknown Host: this server answers to its own address only")
    if access.token is not None:
        given = request.headers.get("Authorization", "")
        expected = f"Bearer {access.token}"
        if not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8")):
            return error(401, "missing or wrong bearer token")
    try:
        return await handler(request)
    except (BadRequest, BadItem) as exc:
        return error(400, str(exc))
    except web.HTTPException as exc:
        return error(exc.status, exc.reason or "refused")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug, not the client's: said in one line, and serving goes on
        log.error("internal error on %s: %s", request.path, mask(f"{type(exc).__name__}: {exc}")[:300])
        return error(500, f"internal error ({type(exc).__name__})")


def reward_app(
    service: RewardService, access: Access, bounds: Bounds, metrics: ServeMetrics
) -> web.Application:
    """The application: ``/verify``, ``/get_reward``, ``/v1/reward``, ``/health``, ``/metrics``."""
    routes = RewardRoutes(service, bounds, metrics)
    app = web.Application(middlewares=[guard(access, metrics)], client_max_size=bounds.max_body_bytes)
    app.router.add_post("/verify", routes.verify)
    app.router.add_post("/get_reward", routes.get_reward)
    app.router.add_post("/v1/reward", routes.v1_reward)
    app.router.add_get("/health", routes.health)
    app.router.add_get("/metrics", routes.metrics_page)
    return app


__all__ = ["LOOPBACK", "Access", "Bounds", "RewardRoutes", "read_json", "reward_app"]
