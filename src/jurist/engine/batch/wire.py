"""What every batch protocol gives the dispatcher: a batch's state, each line's result, the limits.

A provider's batch API (:mod:`~jurist.engine.batch.openai_batches`,
:mod:`~jurist.engine.batch.anthropic_batches`) is reduced to a few calls: make a line, prepare a batch
(OpenAI: upload its input file), create it, find a batch created from a prepared input (after a crash
between the two), read a batch's state, read its results, cancel it.
Each line's result is a :class:`~jurist.engine.Completion` read by the engine's one reply parser,
or a failure that says whether a new batch may help (expired, cancelled, a 429 or 5xx of the line) or
not (a 4xx: the request itself is wrong).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from jurist.engine.pacing.retry import is_retryable_status
from jurist.engine.wire.reply_parse import parse_completion
from jurist.engine.wire.transport import Completion, completion_from
from jurist.redact import mask

_MAX_ERROR_CHARS = 300


class BatchWireError(Exception):
    """A batch call the provider refused or that did not arrive (the dispatcher tries again later)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(mask(message))
        self.status = status


@dataclass(frozen=True, slots=True)
class BatchState:
    """A batch's state: the provider's own word, whether it has ended, and whether its results can be
    read (``failed``: the batch as a whole was refused; none of its lines was answered)."""

    status: str
    ended: bool
    readable: bool
    detail: str = ""


@dataclass(slots=True)
class LineResult:
    """One line of an ended batch: its completion, or why not and whether a new batch may help."""

    custom_id: str
    completion: Completion | None = None
    error: str = ""
    retry: bool = False
    status: int | None = None


class BatchWire(Protocol):
    """One provider's batch protocol at one endpoint."""

    provider: str
    max_requests: int
    max_bytes: int
    serial_creates: bool
    """One creation in flight at a time: a batch is found again after a crash only by listing when and
    how large it was (Anthropic), so no two of a run's creations may be unsettled at once."""

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        """One request as the provider takes it in a batch (its share of the batch's bytes)."""
        ...

    async def prepare(self, lines: list[bytes]) -> dict[str, Any]:
        """What must exist before the batch is created (OpenAI: the uploaded input file's id), kept in the
        journal before :meth:`create` is called; {} when nothing."""
        ...

    async def create(self, lines: list[bytes], prepared: dict[str, Any]) -> str:
        """Create the batch of ``lines``: its id."""
        ...

    async def tagged(self, tag: str) -> dict[str, list[str]]:
        """Batches created with ``tag`` in their metadata (the run directory's), each with its custom ids
        (from its input file): how a directory whose journal was lost finds its batches again ({}: the
        provider keeps no metadata)."""
        ...

    async def find(self, prepared: dict[str, Any]) -> str | None:
        """The batch created from ``prepared`` if there is one (None: none, or no way to tell)."""
        ...

    async def state(self, batch_id: str) -> BatchState: ...

    async def results(self, batch_id: str) -> list[LineResult]: ...

    async def cancel(self, batch_id: str) -> None: ...

    async def aclose(self) -> None: ...


def line_error(custom_id: str, status: int | None, message: str) -> LineResult:
    """A failed line: retried in a new batch when a 429 or 5xx (or no status: expired, cancelled)."""
    retry = status is None or is_retryable_status(status)
    return LineResult(custom_id, None, mask(message)[:_MAX_ERROR_CHARS], retry, status)


def line_completion(custom_id: str, reply: dict[str, Any], attempt: int) -> LineResult:
    """A line's chat-completions reply read by the engine's reply parser (an unreadable one is retried)."""
    try:
        parsed = parse_completion(json.dumps(reply).encode())
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return line_error(custom_id, None, f"unreadable reply in the batch's results ({exc})")
    return LineResult(custom_id, completion_from(parsed, 0.0, attempt))


def error_message(body: Any) -> str:
    """The message of an error object in any of the shapes the providers use."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            if isinstance(inner.get("error"), dict):  # Anthropic's {"type": "error", "error": {...}}
                inner = inner["error"]
            message = inner.get("message") or inner.get("code") or inner.get("type")
            if message:
                return str(message)
    return json.dumps(body)[:_MAX_ERROR_CHARS]


async def read_json(response: aiohttp.ClientResponse, what: str) -> Any:
    """A JSON reply of a batch call, or :class:`BatchWireError` naming the call and the status."""
    data = await response.read()
    if response.status != 200:
        try:
            detail = error_message(json.loads(data))
        except ValueError:
            detail = data[:_MAX_ERROR_CHARS].decode("utf-8", errors="replace")
        raise BatchWireError(f"{what}: HTTP {response.status}: {detail}", response.status)
    try:
        return json.loads(data)
    except ValueError:
        raise BatchWireError(f"{what}: the reply is not JSON") from None


async def batch_object(session: aiohttp.ClientSession, url: str, what: str) -> dict[str, Any]:
    """``GET url``: a batch object of either provider (``what`` names it in an error, e.g. "batch b1")."""
    try:
        async with session.get(url) as resp:
            data = await read_json(resp, what)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise BatchWireError(f"polling {what}: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise BatchWireError(f"{what}: the reply is no batch object")
    return data


def jsonl_records(data: bytes) -> list[dict[str, Any]]:
    """The records of a results file (blank and unreadable lines skipped: a line that is not there is
    retried, never guessed)."""
    records = []
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records
