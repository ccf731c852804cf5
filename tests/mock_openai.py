"""A mock OpenAI-compatible chat server for tests and benchmarks (aiohttp, 127.0.0.1 only).

Candidates answer ``[<model>] <prompt>``. Judges decide by a fixed rule on the two answers, so expected
scores are known in advance: each model has a strength (``STRENGTH``, default 2); a gap of 2 or more is a
strong verdict, 1 a weak one, 0 a tie. A model named ``mixed`` is strength 3 on prompts whose text length is
even and 1 otherwise. Judge ``judge-reask`` omits the label on its first reply; ``judge-broken``
never gives one. A judge ``judge-pNN`` (or ``judge-pNN-tMM``) is right with probability NN% per game (and
says "A=B" with MM%), drawn from an RNG seeded by the judge and the answers as shown (``chance_draw``).
A request with ``max_tokens`` 1 is a ``jurist check`` probe: answered, counted in ``stats.probes`` only.
Judge ``judge-quoter`` quotes both answers after its verdict. Judges with one planted fault (the judge card's
tests): ``judge-longer`` prefers the longer answer, ``judge-obedient`` an answer addressed to the judge,
``judge-first`` position A (``faulty_verdict``). A judge request asking for ``logprobs`` gets
a one-digit verdict (1 = A>>B ... 5 = B>>A) with ``digit_logprobs`` (none for ``judge-nologprobs``).

Faults are scripted per prompt substring: each matching request consumes the next fault of its list
(``429``, ``500``, ``503``, ``timeout``, ``drop``, ``garbage``, ``truncated``, ``400``, ``401``), or a 200
that is no answer (``null_content``, ``empty_choices``, ``html``, ``truncated_json``: a complete body whose
JSON is cut), or an odd answer (``empty``: content ""; ``think_truncated``: an unclosed ``<think>`` cut by
the token limit; ``huge``: the normal reply inside ~200 KB of filler, the verdict in the middle;
``labels_list``: the re-ask's list of the five labels and nothing else; ``runaway``: ``runaway_chars``
characters of a looping thought with no verdict at all; ``flood``: 20 MB of one letter, a degenerate
reply that tokenizers choke on; ``cjk``: 200k CJK characters without a break), or ``trickle``: 20 MB of one
letter sent in pieces over ``trickle_s`` seconds (a reply still arriving when a signal comes), or
``patch:JSON``: the normal reply with the JSON object's fields put over its own (its ``choice`` over the
first choice's), to send usage or metadata of the wrong type or shape.
``403`` and ``404`` are client errors as ``400`` and ``401`` are (a forbidden key, an unknown model).
Random faults: with ``fault_rate`` > 0, a request that no scripted fault matches draws one of
``fault_kinds`` (default :data:`RANDOM_FAULTS`; ``slow``: the normal reply after ``slow_s`` seconds) with
that probability, from an RNG seeded by ``seed``; ``stats.injected`` counts them by kind. With
``count_keys`` the server counts requests per distinct (model, messages), so a benchmark can tell how many
attempts each request took (``GET /v1/_stats``).
Identity: ``GET /v1/models`` lists ``served`` (default ``mock``), each entry with ``root`` (the weights path,
as vLLM reports it) when one is given; a server with a ``root`` also answers as those weights would,
``[<model> from <root>] <prompt>``, so two servers of one name tell their answers apart. ``start(port=N)``
binds a given port: a server restarted on another checkpoint under the same name and port.
With ``notice_disconnects`` a request whose client closed its connection stops being handled (and counted
in flight) at once, as vLLM aborts it; without, its handler runs on to the end, as aiohttp's does.
Run as a script (``python tests/mock_openai.py --port N``) it serves until killed, for benchmarks
(``--extra-port`` serves more ports, ``--fault-rate`` injects random faults, ``--backlog`` sets the accept
queue, deep by default: aiohttp's 128 drops SYNs when 256 clients connect at once; see ``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from mock_verdicts import _ANSWER, DIGITS, chance_verdict, digit_logprobs, faulty_verdict, verdict_for

_ODD_REPLIES = frozenset(
    {
        "null_content",
        "empty_choices",
        "html",
        "truncated_json",
        "empty",
        "think_truncated",
        "huge",
        "labels_list",
        "runaway",
        "flood",
        "cjk",
    }
)
# What a random fault may be: transient server trouble that retrying fixes.
RANDOM_FAULTS = ("429", "500", "503", "drop", "garbage", "slow")


@dataclass
class MockStats:
    requests: int = 0
    probes: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    in_flight_by_model: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    peak_by_model: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    requests_by_model: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    arrivals: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    auth_headers: set[str] = field(default_factory=set)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    injected: Counter[str] = field(default_factory=Counter)
    requests_by_key: Counter[str] = field(default_factory=Counter)
    trickles: int = 0  # ``trickle`` replies begun

    def summary(self) -> dict[str, Any]:
        """Counters as JSON (``GET /v1/_stats``); ``attempts``: how many distinct requests came n times."""
        attempts = Counter(self.requests_by_key.values())
        return {
            "requests": self.requests,
            "probes": self.probes,
            "peak_in_flight": self.peak_in_flight,
            "injected": dict(self.injected),
            "distinct_requests": len(self.requests_by_key),
            "attempts": {str(n): count for n, count in sorted(attempts.items())},
        }


class MockOpenAI:
    """The server; ``start()`` returns its base URL (``http://127.0.0.1:PORT/v1``)."""

    def __init__(
        self,
        *,
        delay: float = 0.0,
        require_key: str | None = None,
        faults: dict[str, list[str]] | None = None,
        keep_bodies: bool = True,
        retry_after: str = "0",
        fault_rate: float = 0.0,
        fault_kinds: tuple[str, ...] = RANDOM_FAULTS,
        seed: int = 0,
        slow_s: float = 0.3,
        count_keys: bool = False,
        runaway_chars: int = 2_000_000,
        root: str | None = None,
        served: tuple[str, ...] = ("mock",),
        notice_disconnects: bool = False,
        trickle_s: float = 10.0,
    ) -> None:
        self.notice_disconnects = notice_disconnects
        self.trickle_s = trickle_s
        self.root = root
        self.served = served
        self.models_requests = 0
        self.runaway_chars = runaway_chars
        self.delay = delay
        self.fault_rate = fault_rate
        self.fault_kinds = fault_kinds
        self.slow_s = slow_s
        self.count_keys = count_keys
        self._fault_rng = random.Random(seed)
        self.require_key = require_key
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.keep_bodies = keep_bodies
        self.retry_after = retry_after
        self.stats = MockStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self._response_cache: dict[str, bytes] = {}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/v1/_stats", self.stats_json)
        return app

    async def stats_json(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.summary())

    async def models(self, request: web.Request) -> web.Response:
        """vLLM's listing: one entry per served name, ``root`` the weights it was loaded from."""
        self.models_requests += 1
        entries = [
            {"id": name, "object": "model", "created": int(time.time()), "owned_by": "mock",
             **({"root": self.root, "parent": None} if self.root is not None else {})}
            for name in self.served
        ]  # fmt: skip
        return web.json_response({"object": "list", "data": entries})

    def _next_fault(self, text: str) -> str | None:
        for trigger, queue in self.faults.items():
            if trigger in text and queue:
                return queue.pop(0)
        if self.fault_rate and self._fault_rng.random() < self.fault_rate:
            fault = self._fault_rng.choice(self.fault_kinds)
            self.stats.injected[fault] += 1
            return fault
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if body.get("max_tokens") == 1:
            probe_text = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
            probe_fault = self._next_fault(probe_text)  # faults keyed by the probe's text hit probes too
            if probe_fault == "slow":
                await asyncio.sleep(self.slow_s)
                probe_fault = None
            if probe_fault is not None:
                self.stats.probes += 1
                return await self._fault(request, probe_fault)
            return self._probe(request, body)
        model = body.get("model", "")
        stats = self.stats
        stats.requests += 1
        stats.requests_by_model[model] += 1
        stats.arrivals[model].append(time.monotonic())
        if self.keep_bodies:
            stats.bodies.append(body)
        if self.count_keys:
            digest = hashlib.sha1(json.dumps([model, body.get("messages")]).encode()).hexdigest()
            stats.requests_by_key[digest] += 1
        auth = request.headers.get("Authorization")
        if auth:
            stats.auth_headers.add(auth)
        stats.in_flight += 1
        stats.in_flight_by_model[model] += 1
        stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        stats.peak_by_model[model] = max(stats.peak_by_model[model], stats.in_flight_by_model[model])
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.require_key and auth != f"Bearer {self.require_key}":
                return web.json_response(
                    {"error": {"message": f"Incorrect API key provided: {auth}", "type": "auth"}}, status=401
                )
            messages = body["messages"]
            user_text = next((m["content"] for m in messages if m["role"] == "user"), "")
            fault = self._next_fault(user_text)
            if fault == "slow":  # late, but a normal reply
                await asyncio.sleep(self.slow_s)
                fault = None
            if fault == "trickle":
                return await self._trickle(request, model)
            if fault is not None and (fault in _ODD_REPLIES or fault.startswith("patch:")):
                return self._odd_reply(fault, model, messages, body)
            if fault is not None:
                return await self._fault(request, fault)
            return self._reply(model, messages, body)
        finally:
            stats.in_flight -= 1
            stats.in_flight_by_model[model] -= 1

    def _probe(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        """A ``jurist check`` probe, kept out of the request counters that tests compare exactly."""
        self.stats.probes += 1
        if self.require_key and request.headers.get("Authorization") != f"Bearer {self.require_key}":
            return web.json_response({"error": {"message": "Incorrect API key provided"}}, status=401)
        return self._reply(body.get("model", ""), body["messages"], body)

    async def _fault(self, request: web.Request, fault: str) -> web.StreamResponse:
        if fault == "429":
            return web.json_response(
                {"error": {"message": "Rate limit reached"}},
                status=429,
                headers={"Retry-After": self.retry_after},
            )
        if fault in ("500", "503"):
            return web.json_response({"error": {"message": "server overloaded"}}, status=int(fault))
        if fault in ("400", "401", "403", "404"):
            return web.json_response(
                {"error": {"message": f"bad request: {fault} from mock"}}, status=int(fault)
            )
        if fault == "timeout":
            await asyncio.sleep(1.5)  # longer than the client timeout used in tests
            return web.json_response({})
        if fault == "garbage":
            return web.Response(body=b"<html>upstream gateway hiccup", content_type="application/json")
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            raise asyncio.CancelledError
        if fault == "truncated":
            response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            response.content_length = 10_000
            await response.prepare(request)
            await response.write(b'{"id": "x", "choices": [')
            assert request.transport is not None
            request.transport.close()
            return response
        raise ValueError(fault)

    def _odd_reply(
        self, fault: str, model: str, messages: list[dict[str, Any]], body: dict[str, Any]
    ) -> web.Response:
        """A status-200 reply that is not a plain answer (see the module docstring for each kind)."""
        reply = self._reply(model, messages, body).body
        assert isinstance(reply, bytes)
        normal = json.loads(reply)
        choice = normal["choices"][0]
        content = choice["message"]["content"]
        if fault.startswith("patch:"):
            patch = json.loads(fault.removeprefix("patch:"))
            choice.update(patch.pop("choice", {}))
            normal.update(patch)
        elif fault == "null_content":
            choice["message"]["content"] = None
        elif fault == "empty_choices":
            normal["choices"] = []
        elif fault == "html":
            page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
            return web.Response(text=page, content_type="text/html")
        elif fault == "truncated_json":
            return web.Response(body=json.dumps(normal).encode()[:-40], content_type="application/json")
        elif fault == "empty":
            choice["message"]["content"] = ""
        elif fault == "think_truncated":
            choice["message"]["content"] = "<think>Let me weigh both answers. First, " + content[:40]
            choice["finish_reason"] = "length"
        elif fault == "huge":
            filler = "I keep thinking about this. " * 3_600  # ~100 KB each side
            choice["message"]["content"] = filler + content + " " + filler
        elif fault == "runaway":
            loop = "I keep weighing both answers and cannot stop. "
            text = loop * (self.runaway_chars // len(loop) + 1)
            choice["message"]["content"] = text[: self.runaway_chars]
            choice["finish_reason"] = "length"
        elif fault == "flood":
            choice["message"]["content"] = "a" * 20_000_000
        elif fault == "cjk":
            rng = random.Random(len(content))
            choice["message"]["content"] = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(200_000))
        elif fault == "labels_list":
            choice["message"]["content"] = "exactly one of: [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]."
        return web.Response(body=json.dumps(normal).encode(), content_type="application/json")

    async def _trickle(self, request: web.Request, model: str) -> web.StreamResponse:
        """A 20 MB answer of one letter, its body sent in 100 pieces over ``trickle_s`` seconds."""
        self.stats.trickles += 1
        head = json.dumps({"id": "chatcmpl-mock", "object": "chat.completion", "model": model})[:-1]
        head += ', "choices": [{"index": 0, "finish_reason": "stop", "message": '
        head += '{"role": "assistant", "content": "'
        tail = '"}}]}'
        size, pieces = 20_000_000, 100
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.content_length = len(head) + size + len(tail)
        await response.prepare(request)
        await response.write(head.encode())
        for _ in range(pieces):
            await asyncio.sleep(self.trickle_s / pieces)
            await response.write(b"t" * (size // pieces))
        await response.write(tail.encode())
        return response

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        logprobs = None
        if "impartial judge" in system:
            label = chance_verdict(model, user) or faulty_verdict(model, user) or verdict_for(user)
            reask = len(messages) > 2 and messages[-2]["role"] == "assistant"
            if model == "judge-broken" or (model == "judge-reask" and not reask):
                content = "Both answers have merits; I cannot decide."
            elif body.get("response_format"):
                content = json.dumps({"verdict": label})
            elif body.get("logprobs"):  # the logprob protocol: one digit; judge-nologprobs omits logprobs
                content = DIGITS[label]
                logprobs = None if model == "judge-nologprobs" else digit_logprobs(label)
            elif model == "judge-quoter":  # states its verdict, then quotes both answers as it saw them
                shown = dict(_ANSWER.findall(user))
                content = (
                    f"My final verdict is [[{label}]]. A wrote: {shown.get('A')}\nB wrote: {shown.get('B')}"
                )
            else:
                content = f"My own answer first. Comparing both answers... My final verdict is [[{label}]]"
        elif self.root is not None:  # the weights answer, and another checkpoint answers otherwise
            content = f"[{model} from {self.root}] {user}"
        else:
            content = f"[{model}] {user}"
        # ``n``: every choice the same text (a temperature-0 server); "-ignores-n" models answer one
        # choice, "-refuses-n" ones a 400, as llama.cpp and some hosted APIs do.
        n = int(body.get("n") or 1)
        if n > 1 and model.endswith("-refuses-n"):
            return web.json_response({"error": {"message": "n must be 1"}}, status=400)
        n = 1 if model.endswith("-ignores-n") else n
        choice = {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        payload = {
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": i, **choice, "logprobs": logprobs} for i in range(n)],
            "usage": {
                "prompt_tokens": len(user) // 4,
                "completion_tokens": n * (len(content) // 4),
                "total_tokens": (len(user) + n * len(content)) // 4,
            },
        }
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")

    # -- lifecycle in a background thread, so synchronous code under test can call it ----------------
    def start(self, port: int = 0) -> str:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=self.notice_disconnects)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", port)
            loop.run_until_complete(site.start())
            self._runner = runner
            server = site._server
            assert server is not None and server.sockets
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self.base_url

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)


async def _serve_ports(server: MockOpenAI, ports: list[int], backlog: int) -> None:
    """Serve one app on several ports of 127.0.0.1 until the process is killed."""
    runner = web.AppRunner(server.app(), access_log=None)
    await runner.setup()
    for port in ports:
        await web.TCPSite(runner, "127.0.0.1", port, backlog=backlog).start()
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--extra-port", type=int, action="append", default=[], help="serve this port too")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of requests given a fault")
    parser.add_argument("--fault-kinds", default=",".join(RANDOM_FAULTS), help="comma-separated kinds")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random faults")
    parser.add_argument("--slow", type=float, default=0.3, help="seconds a 'slow' fault waits")
    parser.add_argument("--count-keys", action="store_true", help="count requests per distinct request")
    parser.add_argument("--backlog", type=int, default=1024, help="accept queue length of each port")
    args = parser.parse_args()
    server = MockOpenAI(
        delay=args.delay,
        keep_bodies=False,
        fault_rate=args.fault_rate,
        fault_kinds=tuple(kind for kind in args.fault_kinds.split(",") if kind),
        seed=args.seed,
        slow_s=args.slow,
        count_keys=args.count_keys,
    )
    if args.extra_port:
        asyncio.run(_serve_ports(server, [args.port, *args.extra_port], args.backlog))
        return
    web.run_app(
        server.app(), host="127.0.0.1", port=args.port, backlog=args.backlog, access_log=None, print=None
    )


if __name__ == "__main__":
    main()
