"""A local mock of both batch APIs, beside the mock chat server it extends (127.0.0.1 only).

OpenAI's Batch API: ``POST /v1/files`` (multipart, ``purpose=batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/files/{id}/content``; Anthropic's
Message Batches: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``, ``.../cancel``,
``.../results``, and its synchronous ``POST /v1/messages``. Every line is answered exactly as the chat
server answers the same request (:meth:`MockOpenAI._reply`), so verdicts match a synchronous run.

A batch validates for ``validate_s``, runs for ``run_s``, finalizes for ``finalize_s`` (statuses as the
providers name them), then ends; with ``hold`` set it stays in progress until :meth:`release`. Faults per
line, by prompt substring (``line_faults``, each matching line consumes the next): ``error500`` (the line
answered 500: retried by the client), ``error400`` (a refused line), ``expire`` (the batch expires before
that line: OpenAI ``expired`` with a ``batch_expired`` line in the error file, Anthropic result
``expired``). ``fail_batches``: the next N OpenAI batches fail validation as a whole. ``stats``: batches
created per provider, lines submitted per custom id, and (the chat server's own) synchronous requests;
``billed``: the provider's bill, the usage of every line a batch answered (``batch id/custom id``), which is
what a provider charges whether or not the client lived to read it (:meth:`bill_usd`).

Hostile faults, as a provider's bad day looks on the wire: ``object_fault`` ("errors_list": a ``failed``
batch whose ``errors`` is a list of strings; "errors_string": a string; "status_garbage": a status the API
does not have), ``poll_failures`` (the next N batch GETs answer 503), ``poll_down`` (every batch GET
answers 503), ``cancel_stuck`` (a cancel is accepted and the batch stays cancelling for ever), and
``create_delay_s`` (the creation answers that late, after the batch exists: a kill in between).

Anthropic's prompt cache, as the Messages API reports it: a request whose last ``cache_control`` block
ends a prefix of at least ``cache_minimum`` tokens (four characters a token) writes that prefix
(``cache_creation_input_tokens``) the first time and reads it (``cache_read_input_tokens``) after, the
rest counted in ``input_tokens``; every marked block is kept in ``batch_stats.marks``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from mock_openai import MockOpenAI

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class _Batch:
    provider: str
    id: str
    lines: list[dict[str, Any]]
    created: float
    input_file_id: str = ""
    failed: str = ""
    cancelled_at: float | None = None
    results: list[dict[str, Any]] | None = None
    expired: bool = False
    metadata: dict[str, Any] | None = None
    created_at: float = 0.0  # epoch seconds


@dataclass
class BatchStats:
    batches: Counter[str] = field(default_factory=Counter)
    lines: Counter[str] = field(default_factory=Counter)  # custom id -> batches it came in
    polls: int = 0
    downloads: int = 0
    messages: int = 0  # synchronous Anthropic Messages requests
    created: list[float] = field(default_factory=list)  # time.monotonic() of each batch's creation
    marks: list[tuple[str, str]] = field(default_factory=list)  # (system or role, text) of marked blocks
    billed: dict[str, dict[str, int]] = field(default_factory=dict)  # batch id/custom id -> usage billed


class MockBatchServer(MockOpenAI):
    """The chat mock with both batch APIs; ``start()`` returns ``http://127.0.0.1:PORT/v1``."""

    def __init__(
        self,
        *,
        validate_s: float = 0.05,
        run_s: float = 0.1,
        finalize_s: float = 0.05,
        hold: bool = False,
        line_faults: dict[str, list[str]] | None = None,
        fail_batches: int = 0,
        cache_minimum: int = 1024,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.cache_minimum = cache_minimum
        self._prompt_cache: set[str] = set()
        self.validate_s, self.run_s, self.finalize_s = validate_s, run_s, finalize_s
        self.hold = hold
        self.line_faults = {k: list(v) for k, v in (line_faults or {}).items()}
        self.fail_batches = fail_batches
        self.batch_stats = BatchStats()
        self.object_fault: str | None = None
        self.poll_failures = 0
        self.poll_down = False
        self.cancel_stuck = False
        self.create_delay_s = 0.0
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, _Batch] = {}

    def bill_usd(self, input_rate: float, output_rate: float, discount: float = 0.5) -> float:
        """The bill of every batch line answered, at the batch rate (``discount`` of per-1M-token rates;
        a prompt-cache read at 0.1x and a write at 1.25x the input rate, as Anthropic bills them)."""
        total = 0.0
        for usage in self.batch_stats.billed.values():
            total += usage["input"] * input_rate + usage["output"] * output_rate
            total += usage["cache_read"] * input_rate * 0.1 + usage["cache_write"] * input_rate * 1.25
        return total * discount / 1e6

    def release(self) -> None:
        """Let held batches go on (from any thread: the handlers read the flag on each poll)."""
        self.hold = False

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{id}/content", self.file_content)
        app.router.add_post("/v1/batches", self.create_openai)
        app.router.add_get("/v1/batches", self.list_openai)
        app.router.add_get("/v1/batches/{id}", self.get_openai)
        app.router.add_post("/v1/batches/{id}/cancel", self.cancel)
        app.router.add_post("/v1/messages", self.messages)
        app.router.add_post("/v1/messages/batches", self.create_anthropic)
        app.router.add_get("/v1/messages/batches", self.list_anthropic)
        app.router.add_get("/v1/messages/batches/{id}", self.get_anthropic)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self.cancel)
        app.router.add_get("/v1/messages/batches/{id}/results", self.anthropic_results)
        return app

    # -- answers ----------------------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self._reply(body.get("model", ""), body["messages"], body).body
        assert isinstance(reply, bytes)
        answer: dict[str, Any] = json.loads(reply)
        return answer

    def _line_fault(self, messages: list[dict[str, Any]]) -> str | None:
        text = json.dumps(messages)
        for trigger, queue in self.line_faults.items():
            if trigger in text and queue:
                return queue.pop(0)
        return None

    @staticmethod
    def _blocks(content: Any) -> list[dict[str, Any]]:
        """A Messages ``system`` or ``content``: a string, or a list of text blocks."""
        return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])

    def _chat_body(self, params: dict[str, Any]) -> dict[str, Any]:
        """An Anthropic Messages request as the chat request the mock's judge rule reads."""
        system = "".join(block.get("text", "") for block in self._blocks(params.get("system")))
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": m["role"], "content": "".join(b.get("text", "") for b in self._blocks(m["content"]))}
            for m in params["messages"]
        ]
        return {"model": params["model"], "messages": messages, "max_tokens": params.get("max_tokens")}

    def _cache_usage(self, params: dict[str, Any]) -> dict[str, int] | None:
        """The prompt-cache usage of a marked request (None: no mark, usage as the chat server counts)."""
        blocks = [("system", b) for b in self._blocks(params.get("system"))] + [
            (m["role"], b) for m in params["messages"] for b in self._blocks(m["content"])
        ]
        marked = [i for i, (_, block) in enumerate(blocks) if block.get("cache_control")]
        for where, block in blocks:
            if block.get("cache_control"):
                assert block["cache_control"] == {"type": "ephemeral"}, block["cache_control"]
                self.batch_stats.marks.append((where, block["text"]))
        if not marked:
            return None
        total = sum(len(block.get("text", "")) for _, block in blocks) // 4
        head = blocks[: marked[-1] + 1]
        prefix = sum(len(block.get("text", "")) for _, block in head) // 4
        if prefix < self.cache_minimum:  # too short to cache: answered at the full rate, as Anthropic does
            return {"input_tokens": total, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        key = json.dumps(head, sort_keys=True)
        seen = key in self._prompt_cache
        self._prompt_cache.add(key)
        return {
            "input_tokens": total - prefix,
            "cache_creation_input_tokens": 0 if seen else prefix,
            "cache_read_input_tokens": prefix if seen else 0,
        }

    @staticmethod
    def _message(chat: dict[str, Any], cache: dict[str, int] | None = None) -> dict[str, Any]:
        choice = chat["choices"][0]
        usage = {
            "input_tokens": chat["usage"]["prompt_tokens"],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": chat["usage"]["completion_tokens"],
        }
        return {
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": chat["model"],
            "content": [{"type": "text", "text": choice["message"]["content"]}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {**usage, **(cache or {})},
        }

    async def messages(self, request: web.Request) -> web.Response:
        """Anthropic's synchronous Messages API (counted with the chat server's synchronous requests)."""
        if request.headers.get("anthropic-version") is None:
            return web.json_response(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "anthropic-version header is required",
                    },
                },
                status=400,
            )
        params = await request.json()
        body = self._chat_body(params)
        self.stats.requests += 1
        self.stats.requests_by_model[body["model"]] += 1
        self.batch_stats.messages += 1
        return web.json_response(self._message(self._answer(body), self._cache_usage(params)))

    def _finish(self, batch: _Batch) -> None:
        """Answer a batch's lines once, when it ends (faults consumed then)."""
        if batch.results is not None:
            return
        results: list[dict[str, Any]] = []
        for line in batch.lines:
            body = line["body"] if batch.provider == "openai" else self._chat_body(line["params"])
            fault = self._line_fault(body["messages"])
            if batch.cancelled_at is not None:
                fault = "cancelled"
            elif fault == "expire":
                batch.expired = True
            results.append(
                {
                    "custom_id": line["custom_id"],
                    "fault": fault,
                    "answer": None if fault else self._answer(body),
                    "cache": self._cache_usage(line["params"])
                    if batch.provider == "anthropic" and not fault
                    else None,
                }
            )
            if results[-1]["answer"] is not None:
                self._bill(batch, results[-1])
        batch.results = results

    def _bill(self, batch: _Batch, result: dict[str, Any]) -> None:
        """A line answered: billed now, once, read or not."""
        usage = result["answer"]["usage"]
        cache = result["cache"] or {}
        prompt = cache.get("input_tokens", usage["prompt_tokens"])
        self.batch_stats.billed[f"{batch.id}/{result['custom_id']}"] = {
            "input": prompt,
            "output": usage["completion_tokens"],
            "cache_read": cache.get("cache_read_input_tokens", 0),
            "cache_write": cache.get("cache_creation_input_tokens", 0),
        }

    def _status(self, batch: _Batch) -> str:
        """The status now (an OpenAI word; Anthropic's are mapped from it)."""
        if batch.failed:
            return "failed"
        age = time.monotonic() - batch.created
        if batch.cancelled_at is not None:
            if self.cancel_stuck or time.monotonic() - batch.cancelled_at < self.finalize_s:
                return "cancelling"
            self._finish(batch)
            return "cancelled"
        if age < self.validate_s:
            return "validating"
        if self.hold or age < self.validate_s + self.run_s:
            return "in_progress"
        if age < self.validate_s + self.run_s + self.finalize_s:
            return "finalizing"
        self._finish(batch)
        return "expired" if batch.expired else "completed"

    # -- OpenAI -----------------------------------------------------------------------------------------
    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "purpose must be batch, with a file"}}, status=400)
        data = upload.file.read()
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        self._files[file_id] = data
        return web.json_response(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": upload.filename,
                "purpose": "batch",
                "status": "processed",
            }
        )

    async def file_content(self, request: web.Request) -> web.Response:
        data = self._files.get(request.match_info["id"])
        if data is None:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        self.batch_stats.downloads += 1
        return web.Response(body=data, content_type="application/octet-stream")

    async def create_openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return web.json_response({"error": {"message": "bad endpoint or completion_window"}}, status=400)
        data = self._files.get(body.get("input_file_id", ""))
        if data is None:
            return web.json_response({"error": {"message": "no such input file"}}, status=400)
        lines = [json.loads(raw) for raw in data.splitlines() if raw.strip()]
        ids = [line.get("custom_id") for line in lines]
        bad = len(set(ids)) != len(ids) or any(
            line.get("method") != "POST" or line.get("url") != "/v1/chat/completions" or "body" not in line
            for line in lines
        )
        batch = _Batch(
            "openai", f"batch_{uuid.uuid4().hex[:24]}", lines, time.monotonic(), body["input_file_id"]
        )
        batch.metadata = body.get("metadata")
        if bad:
            batch.failed = "invalid input file: duplicate custom_id, or a line not POST /v1/chat/completions"
        elif self.fail_batches > 0:
            self.fail_batches -= 1
            batch.failed = "the batch failed validation (scripted by the mock)"
        self._register(batch)
        await self._late()
        return web.json_response(self._openai_object(batch))

    async def _late(self) -> None:
        if self.create_delay_s:
            await asyncio.sleep(self.create_delay_s)

    def _register(self, batch: _Batch) -> None:
        batch.created_at = time.time()
        self._batches[batch.id] = batch
        self.batch_stats.batches[batch.provider] += 1
        self.batch_stats.created.append(batch.created)
        self.batch_stats.lines.update(line["custom_id"] for line in batch.lines)

    def _openai_object(self, batch: _Batch) -> dict[str, Any]:
        status = self._status(batch)
        obj: dict[str, Any] = {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(batch.created_at),
            "request_counts": {"total": len(batch.lines), "completed": 0, "failed": 0},
            "metadata": batch.metadata,
        }
        if self.object_fault == "errors_list":
            obj.update(status="failed", errors=["boom"])
        elif self.object_fault == "errors_string":
            obj.update(status="failed", errors="boom")
        elif self.object_fault == "status_garbage":
            obj["status"] = 42
        if batch.failed:
            obj["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_batch", "message": batch.failed, "line": 1}],
            }
        if batch.results is not None and status in ("completed", "expired", "cancelled"):
            self._openai_files(batch, obj)
        return obj

    def _openai_files(self, batch: _Batch, obj: dict[str, Any]) -> None:
        assert batch.results is not None
        out, err = [], []
        for result in batch.results:
            cid, fault = result["custom_id"], result["fault"]
            if fault is None:
                response = {"status_code": 200, "request_id": uuid.uuid4().hex, "body": result["answer"]}
                out.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:20]}",
                        "custom_id": cid,
                        "response": response,
                        "error": None,
                    }
                )
            elif fault in ("error500", "error400"):
                code = int(fault[-3:])
                response = {
                    "status_code": code,
                    "request_id": uuid.uuid4().hex,
                    "body": {"error": {"message": f"mock line error {code}", "type": "server_error"}},
                }
                err.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:20]}",
                        "custom_id": cid,
                        "response": response,
                        "error": None,
                    }
                )
            else:  # expire, cancelled
                code = "batch_expired" if fault == "expire" or batch.expired else "batch_cancelled"
                err.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:20]}",
                        "custom_id": cid,
                        "response": None,
                        "error": {"code": code, "message": f"This request could not be executed: {code}."},
                    }
                )
        counts = obj["request_counts"]
        counts["completed"], counts["failed"] = len(out), len(err)
        for name, rows in (("output_file_id", out), ("error_file_id", err)):
            if rows:
                file_id = f"file-{batch.id}-{name[:3]}"
                self._files[file_id] = b"".join(json.dumps(row).encode() + b"\n" for row in rows)
                obj[name] = file_id

    def _poll_fault(self) -> web.Response | None:
        """503 while the batch API is down (``poll_down``) or for the next ``poll_failures`` polls."""
        if self.poll_down or self.poll_failures > 0:
            self.poll_failures = max(self.poll_failures - 1, 0)
            self.batch_stats.polls += 1
            return web.json_response({"error": {"message": "service unavailable"}}, status=503)
        return None

    async def get_openai(self, request: web.Request) -> web.Response:
        if (down := self._poll_fault()) is not None:
            return down
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch.provider != "openai":
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        self.batch_stats.polls += 1
        return web.json_response(self._openai_object(batch))

    async def list_openai(self, request: web.Request) -> web.Response:
        """``GET /v1/batches``: newest first, ``limit`` and ``after`` as the API pages them."""
        batches = [b for b in reversed(self._batches.values()) if b.provider == "openai"]
        after = request.query.get("after")
        if after:
            ids = [b.id for b in batches]
            batches = batches[ids.index(after) + 1 :] if after in ids else []
        limit = int(request.query.get("limit", "20"))
        page = [self._openai_object(b) for b in batches[:limit]]
        return web.json_response(
            {
                "object": "list",
                "data": page,
                "has_more": len(batches) > limit,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        )

    async def cancel(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        if batch.results is None and batch.cancelled_at is None:
            batch.cancelled_at = time.monotonic()
        if batch.provider == "openai":
            return web.json_response(self._openai_object(batch))
        return web.json_response(self._anthropic_object(batch, request))

    # -- Anthropic --------------------------------------------------------------------------------------
    async def create_anthropic(self, request: web.Request) -> web.Response:
        if request.headers.get("anthropic-version") is None:
            return web.json_response(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "anthropic-version header is required",
                    },
                },
                status=400,
            )
        body = await request.json()
        requests = body.get("requests")
        problem = (
            "requests must be a non-empty list" if not isinstance(requests, list) or not requests else ""
        )
        for entry in requests or []:
            params = entry.get("params") or {}
            if not _CUSTOM_ID.match(str(entry.get("custom_id", ""))):
                problem = f"custom_id {entry.get('custom_id')!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
            elif not all(key in params for key in ("model", "max_tokens", "messages")):
                problem = "params needs model, max_tokens and messages"
        if problem:
            return web.json_response(
                {"type": "error", "error": {"type": "invalid_request_error", "message": problem}}, status=400
            )
        batch = _Batch("anthropic", f"msgbatch_{uuid.uuid4().hex[:24]}", requests, time.monotonic())
        self._register(batch)
        await self._late()
        return web.json_response(self._anthropic_object(batch, request))

    async def list_anthropic(self, request: web.Request) -> web.Response:
        """``GET /v1/messages/batches``: newest first, ``limit`` and ``after_id`` as the API pages them."""
        batches = [b for b in reversed(self._batches.values()) if b.provider == "anthropic"]
        after = request.query.get("after_id")
        if after:
            ids = [b.id for b in batches]
            batches = batches[ids.index(after) + 1 :] if after in ids else []
        limit = int(request.query.get("limit", "20"))
        page = [self._anthropic_object(b, request) for b in batches[:limit]]
        return web.json_response(
            {
                "data": page,
                "has_more": len(batches) > limit,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        )

    def _anthropic_object(self, batch: _Batch, request: web.Request) -> dict[str, Any]:
        status = self._status(batch)
        processing = {
            "cancelling": "canceling",
            "completed": "ended",
            "expired": "ended",
            "cancelled": "ended",
        }
        word = processing.get(status, "in_progress")
        if self.object_fault == "status_garbage":
            word = "exploded"
        url = f"http://{request.host}/v1/messages/batches/{batch.id}/results" if word == "ended" else None
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": word,
            "results_url": url,
            "request_counts": {
                "processing": 0 if word == "ended" else len(batch.lines),
                "succeeded": len(batch.lines) if word == "ended" else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": datetime.fromtimestamp(batch.created_at, timezone.utc)
            .isoformat()
            .replace("+00:00", "Z"),
            "expires_at": "2026-11-28T00:00:00Z",
            "ended_at": "2026-11-27T01:00:00Z" if word == "ended" else None,
            "cancel_initiated_at": None,
            "archived_at": None,
        }

    async def get_anthropic(self, request: web.Request) -> web.Response:
        if (down := self._poll_fault()) is not None:
            return down
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch.provider != "anthropic":
            return web.json_response(
                {"type": "error", "error": {"type": "not_found_error", "message": "no batch"}}, status=404
            )
        self.batch_stats.polls += 1
        return web.json_response(self._anthropic_object(batch, request))

    async def anthropic_results(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch.results is None:
            return web.json_response(
                {"type": "error", "error": {"type": "not_found_error", "message": "no results"}}, status=404
            )
        self.batch_stats.downloads += 1
        rows = []
        for result in batch.results:
            fault = result["fault"]
            if fault is None:
                message = self._message(result["answer"], result["cache"])
                outcome: dict[str, Any] = {"type": "succeeded", "message": message}
            elif fault in ("error500", "error400"):
                kind = "api_error" if fault == "error500" else "invalid_request_error"
                outcome = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": kind, "message": fault}},
                }
            else:
                outcome = {"type": "expired" if fault == "expire" else "canceled"}
            rows.append({"custom_id": result["custom_id"], "result": outcome})
        return web.Response(
            body=b"".join(json.dumps(r).encode() + b"\n" for r in rows), content_type="application/binary"
        )
