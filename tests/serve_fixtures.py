"""Helpers of the reward-server tests: a server in a thread of the test, and plain HTTP calls to it."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conftest import FAST_RETRY
from jurist.serve.app import Bounds
from jurist.serve.server import Listen, RewardServer, ThreadedServer
from jurist.serve.service import ServeSettings


def call(
    url: str,
    path: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
    method: str | None = None,
) -> tuple[int, Any]:
    """(status, parsed JSON body) of one request (http.client: tests that switch urllib off still call)."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    try:
        connection.request(method or ("GET" if data is None else "POST"), path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read()
        return response.status, json.loads(text) if text else None
    finally:
        connection.close()


StartServer = Callable[..., tuple[str, RewardServer]]


def servers() -> Iterator[StartServer]:
    """A fixture's body: ``start(settings fields..., listen=Listen(...), bounds=Bounds(...))`` -> (url,
    server), every server stopped after the test."""
    started: list[ThreadedServer] = []

    def start(
        listen: Listen | None = None, bounds: Bounds | None = None, **fields: Any
    ) -> tuple[str, RewardServer]:
        fields.setdefault("retry", FAST_RETRY)
        server = RewardServer(ServeSettings(**fields), listen or Listen(port=0), bounds)
        threaded = ThreadedServer(server)
        started.append(threaded)
        return threaded.start(), server

    yield start
    for threaded in started:
        threaded.stop()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def candidate_reward(battles: list[dict[str, Any]], model: str) -> float:
    """A question's weighted win rate from a run's battles (written out here, not jurist's function)."""
    won = weight = 0.0
    for battle in battles:
        w = float(battle["weight"])
        winner = battle["winner"]
        score = 0.5 if winner == "tie" else float(battle[winner] == model)
        won, weight = won + w * score, weight + w
    return won / weight
