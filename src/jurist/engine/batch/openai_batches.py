"""The OpenAI Batch API (also what Azure OpenAI and other OpenAI-compatible providers expose; its input
lines are the file ``vllm run-batch`` reads).

A batch is a JSONL file of ``{custom_id, method, url: /v1/chat/completions, body}`` lines uploaded with
``POST /files`` (``purpose=batch``), then ``POST /batches`` (``completion_window: 24h``); the file's id,
journaled in between, finds the batch again (``GET /batches``) when a crash came before its id did. ``GET
/batches/{id}`` says its status: validating, in_progress, finalizing and cancelling go on; completed,
expired and cancelled have ended with results (an expired or cancelled batch keeps what it finished);
failed ended with none (its ``errors`` say why). The results are two files, ``GET /files/{id}/content``:
``output_file_id`` (each line's ``response.status_code`` and ``body``) and ``error_file_id`` (lines that
failed, expired or were cancelled). At most 50,000 requests and 200 MB per batch.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
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

OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024
_GOING_ON = {"validating", "in_progress", "finalizing", "cancelling"}
_ENDED_WITH_RESULTS = {"completed", "expired", "cancelled"}
CHAT_PATH = "/v1/chat/completions"


class OpenAIBatches:
    """The Batch API at one OpenAI-compatible base URL (``.../v1``), with one key."""

    provider = "openai"
    max_requests = OPENAI_MAX_REQUESTS
    max_bytes = OPENAI_MAX_BYTES
    serial_creates = False  # each creation is found again by its own input file and metadata

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 600.0, tag: str = "") -> None:
        self.base_url = base_url.rstrip("/")
        self.tag = tag  # the run directory's, in every batch's metadata (tagged)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        return self._session

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        record = {"custom_id": custom_id, "method": "POST", "url": CHAT_PATH, "body": body}
        return json.dumps(record, ensure_ascii=False).encode() + b"\n"

    async def prepare(self, lines: list[bytes]) -> dict[str, Any]:
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        name = f"jurist-{uuid.uuid4().hex[:12]}.jsonl"
        form.add_field("file", b"".join(lines), filename=name, content_type="application/jsonl")
        try:
            async with self.session.post(self.base_url + "/files", data=form) as resp:
                uploaded = await read_json(resp, "upload of the batch's input file")
            return {"input_file_id": str(uploaded["id"])}
        except (aiohttp.ClientError, OSError, TimeoutError, KeyError, TypeError) as exc:
            raise BatchWireError(f"uploading a batch: {type(exc).__name__}: {exc}") from None

    async def create(self, lines: list[bytes], prepared: dict[str, Any]) -> str:
        create: dict[str, Any] = {
            "input_file_id": prepared["input_file_id"],
            "endpoint": CHAT_PATH,
            "completion_window": "24h",
        }
        metadata = {"jurist_intent": str(prepared.get("intent") or ""), "jurist_run": self.tag}
        create["metadata"] = {k: v for k, v in metadata.items() if v}  # found again by listing
        try:
            async with self.session.post(self.base_url + "/batches", json=create) as resp:
                batch = await read_json(resp, "creation of the batch")
            return str(batch["id"])
        except (aiohttp.ClientError, OSError, TimeoutError, KeyError, TypeError) as exc:
            raise BatchWireError(f"creating a batch: {type(exc).__name__}: {exc}") from None

    async def _listed(self) -> AsyncIterator[dict[str, Any]]:
        """The most recent batches (``GET /batches``, newest first, at most 10 pages of 100), page by page,
        so a search stops at the page that has what it looks for."""
        after = None
        for _ in range(10):
            query = "?limit=100" + (f"&after={after}" if after else "")
            try:
                async with self.session.get(self.base_url + "/batches" + query) as resp:
                    page = await read_json(resp, "the list of batches")
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                raise BatchWireError(f"listing batches: {type(exc).__name__}: {exc}") from None
            batches = (
                [b for b in page.get("data") or [] if isinstance(b, dict)] if isinstance(page, dict) else []
            )
            for batch in batches:
                yield batch
            if not batches or not isinstance(page, dict) or not page.get("has_more"):
                return
            after = batches[-1].get("id")

    async def tagged(self, tag: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        async for batch in self._listed():
            metadata = batch.get("metadata")
            if not tag or not isinstance(metadata, dict) or metadata.get("jurist_run") != tag:
                continue
            file_id = batch.get("input_file_id")
            if not isinstance(file_id, str) or not isinstance(batch.get("id"), str):
                continue
            ids = [str(r.get("custom_id")) for r in jsonl_records(await self._file(file_id))]
            found[str(batch["id"])] = [cid for cid in ids if cid]
        return found

    async def find(self, prepared: dict[str, Any]) -> str | None:
        """The batch made from ``prepared``'s input file, among the most recent (``GET /batches``, newest
        first, at most 10 pages of 100)."""
        async for batch in self._listed():
            metadata = batch.get("metadata")
            tag = metadata.get("jurist_intent") if isinstance(metadata, dict) else None
            same_file = batch.get("input_file_id") == prepared.get("input_file_id")
            if same_file or (prepared.get("intent") and tag == prepared["intent"]):
                return str(batch["id"])
        return None

    async def _batch(self, batch_id: str) -> dict[str, Any]:
        return await batch_object(self.session, f"{self.base_url}/batches/{batch_id}", f"batch {batch_id}")

    async def state(self, batch_id: str) -> BatchState:
        batch = await self._batch(batch_id)
        status = str(batch.get("status"))
        if status in _GOING_ON:
            return BatchState(status, ended=False, readable=False)
        if status in _ENDED_WITH_RESULTS:
            return BatchState(status, ended=True, readable=True)
        if status != "failed":  # a word the API does not have: not taken as an end
            raise BatchWireError(f"batch {batch_id}: unknown status {status[:40]!r}")
        return BatchState(status, ended=True, readable=False, detail=failure_detail(batch.get("errors")))

    async def _file(self, file_id: str) -> bytes:
        try:
            async with self.session.get(f"{self.base_url}/files/{file_id}/content") as resp:
                data = await resp.read()
                if resp.status != 200:
                    raise BatchWireError(f"file {file_id}: HTTP {resp.status}", resp.status)
                return data
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise BatchWireError(f"reading file {file_id}: {type(exc).__name__}: {exc}") from None

    async def results(self, batch_id: str) -> list[LineResult]:
        """Every line the two result files hold (a line in neither is left out: the dispatcher retries
        it as not answered)."""
        batch = await self._batch(batch_id)
        results: list[LineResult] = []
        for name in ("output_file_id", "error_file_id"):
            file_id = batch.get(name)
            if file_id:
                results.extend(_read_line(record) for record in jsonl_records(await self._file(str(file_id))))
        return [result for result in results if result.custom_id]

    async def cancel(self, batch_id: str) -> None:
        try:
            async with self.session.post(f"{self.base_url}/batches/{batch_id}/cancel") as resp:
                await read_json(resp, f"cancelling batch {batch_id}")
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise BatchWireError(f"cancelling batch {batch_id}: {type(exc).__name__}: {exc}") from None

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


def failure_detail(errors: Any) -> str:
    """Why a batch failed, from its ``errors`` in any shape (the API's ``{"data": [...]}``, a list, a
    string, nothing)."""
    if isinstance(errors, dict):
        errors = errors.get("data", errors)
    items = errors if isinstance(errors, list) else [errors] if errors else []
    said = [error_message(e) if isinstance(e, dict) else str(e) for e in items[:3]]
    return "; ".join(s[:200] for s in said if s) or "status failed"


def _read_line(record: dict[str, Any]) -> LineResult:
    """One line of an output or error file: ``response.status_code`` 200 and its body, or the error."""
    custom_id = str(record.get("custom_id") or "")
    response = record.get("response") if isinstance(record.get("response"), dict) else None
    error = record.get("error")
    status = response.get("status_code") if response is not None else None
    if response is not None and status == 200 and isinstance(response.get("body"), dict) and not error:
        return line_completion(custom_id, response["body"], 1)
    if error:  # batch_expired, batch_cancelled, ...: not answered, may be asked again
        code = error.get("code") if isinstance(error, dict) else None
        retry_status = None if code in ("batch_expired", "batch_cancelled") or status is None else status
        return line_error(custom_id, retry_status, f"{code or 'error'}: {error_message(error)}")
    body = response.get("body") if response is not None else None
    return line_error(custom_id, status if isinstance(status, int) else None, error_message(body))
