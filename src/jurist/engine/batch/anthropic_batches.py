"""Anthropic's Message Batches API, natively.

``POST /messages/batches`` takes ``{"requests": [{custom_id, params}]}``, ``params`` being a Messages
request (:func:`~jurist.engine.wire.anthropic.messages_params`); ``GET /messages/batches/{id}`` says its
``processing_status`` (in_progress, canceling, ended); once ended, ``results_url`` serves one JSONL line
per request: ``result.type`` succeeded (with the Messages reply), errored (with the error), canceled or
expired. At most 100,000 requests and 256 MB per batch; a ``custom_id`` is 1 to 64 of ``[A-Za-z0-9_-]``
(jurist's are the 64 hex digits of the request's cache key).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import aiohttp

from jurist.engine.batch.wire import (
    BatchState,
    BatchWireError,
    LineResult,
    batch_object,
    error_message,
    jsonl_records,
    line_completion,
    line_error,
    read_json,
)
from jurist.engine.wire.anthropic import anthropic_headers, chat_reply, messages_params

ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024
FIND_WINDOW_S = 120.0
"""How far from the journal's ``submitting`` time a listed message batch may have been created to be
taken for that submission (the creation call's own time, and clocks that differ)."""
_ERROR_STATUS = {  # an errored line's error type as the HTTP status it stands for (what decides a retry)
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBatches:
    """Message Batches at one base URL (``https://api.anthropic.com/v1`` unless the models file says)."""

    provider = "anthropic"
    max_requests = ANTHROPIC_MAX_REQUESTS
    max_bytes = ANTHROPIC_MAX_BYTES
    serial_creates = True  # found again only by the listing's time and size (find)

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 600.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = anthropic_headers(api_key)
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        return self._session

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return json.dumps(
            {"custom_id": custom_id, "params": messages_params(body)}, ensure_ascii=False
        ).encode()

    async def prepare(self, lines: list[bytes]) -> dict[str, Any]:
        return {}  # the requests travel in the creation itself

    async def create(self, lines: list[bytes], prepared: dict[str, Any]) -> str:
        payload = b'{"requests": [' + b",".join(lines) + b"]}"
        try:
            async with self.session.post(self.base_url + "/messages/batches", data=payload) as resp:
                batch = await read_json(resp, "creation of the message batch")
            return str(batch["id"])
        except (aiohttp.ClientError, OSError, TimeoutError, KeyError, TypeError) as exc:
            raise BatchWireError(f"submitting a message batch: {type(exc).__name__}: {exc}") from None

    async def tagged(self, tag: str) -> dict[str, list[str]]:
        return {}  # a message batch carries no metadata: a lost journal's batches cannot be told

    async def find(self, prepared: dict[str, Any]) -> str | None:
        """The message batch a submission begun at ``prepared["at"]`` made, if the listing tells it: a
        batch of ``count`` requests created within :data:`FIND_WINDOW_S` of it that the journal does not
        know, when there is exactly one such (a message batch carries no metadata of its own, so two
        submissions of the same size that close together cannot be told apart: then none, and the
        requests are asked again; docs/batch.md)."""
        at, count = prepared.get("at"), prepared.get("count")
        if not isinstance(at, (int, float)) or not isinstance(count, int):
            return None
        known = set(prepared.get("known") or [])
        found: list[str] = []
        after = None
        for _ in range(10):  # newest first, at most 10 pages of 100
            query = "?limit=100" + (f"&after_id={after}" if after else "")
            try:
                async with self.session.get(self.base_url + "/messages/batches" + query) as resp:
                    page = await read_json(resp, "the list of message batches")
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                raise BatchWireError(f"listing message batches: {type(exc).__name__}: {exc}") from None
            batches = (
                [b for b in page.get("data") or [] if isinstance(b, dict)] if isinstance(page, dict) else []
            )
            for batch in batches:
                created = _epoch(batch.get("created_at"))
                if created is None or batch.get("id") in known:
                    continue
                if abs(created - at) <= FIND_WINDOW_S and _requests(batch) == count:
                    found.append(str(batch["id"]))
            oldest = min((_epoch(b.get("created_at")) or at for b in batches), default=at)
            if not batches or not page.get("has_more") or oldest < at - FIND_WINDOW_S:
                break
            after = batches[-1].get("id")
        return found[0] if len(found) == 1 else None

    async def _batch(self, batch_id: str) -> dict[str, Any]:
        return await batch_object(
            self.session, f"{self.base_url}/messages/batches/{batch_id}", f"message batch {batch_id}"
        )

    async def state(self, batch_id: str) -> BatchState:
        status = str((await self._batch(batch_id)).get("processing_status"))
        if status not in ("in_progress", "canceling", "ended"):  # not taken as an end
            raise BatchWireError(f"message batch {batch_id}: unknown processing_status {status[:40]!r}")
        ended = status == "ended"
        return BatchState(status, ended=ended, readable=ended)

    async def results(self, batch_id: str) -> list[LineResult]:
        url = (await self._batch(batch_id)).get("results_url")
        if not url:
            raise BatchWireError(f"message batch {batch_id} has ended but names no results_url")
        try:
            async with self.session.get(str(url)) as resp:
                data = await resp.read()
                if resp.status != 200:
                    raise BatchWireError(
                        f"results of message batch {batch_id}: HTTP {resp.status}", resp.status
                    )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise BatchWireError(f"reading message batch {batch_id}: {type(exc).__name__}: {exc}") from None
        return [_read_line(record) for record in jsonl_records(data) if record.get("custom_id")]

    async def cancel(self, batch_id: str) -> None:
        try:
            async with self.session.post(f"{self.base_url}/messages/batches/{batch_id}/cancel") as resp:
                await read_json(resp, f"cancelling message batch {batch_id}")
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise BatchWireError(
                f"cancelling message batch {batch_id}: {type(exc).__name__}: {exc}"
            ) from None

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


def _epoch(stamp: Any) -> float | None:
    """An RFC 3339 time (``2026-11-27T00:00:00Z``) as epoch seconds (None: not one)."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _requests(batch: dict[str, Any]) -> int:
    counts = batch.get("request_counts")
    if not isinstance(counts, dict):
        return -1
    return sum(v for v in counts.values() if isinstance(v, int) and not isinstance(v, bool))


def _read_line(record: dict[str, Any]) -> LineResult:
    custom_id = str(record["custom_id"])
    result: dict[str, Any] = record["result"] if isinstance(record.get("result"), dict) else {}
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        try:
            return line_completion(custom_id, chat_reply(result["message"]), 1)
        except ValueError as exc:
            return line_error(custom_id, None, f"unreadable message in the batch's results ({exc})")
    if kind == "errored":
        error = result.get("error") or {}
        inner = error.get("error", error) if isinstance(error, dict) else {}
        status = _ERROR_STATUS.get(str(inner.get("type") if isinstance(inner, dict) else ""), 500)
        return line_error(custom_id, status, f"errored: {error_message(error)}")
    return line_error(custom_id, None, f"{kind or 'no result'}")  # canceled, expired: may be asked again
