"""The test mock (tests/mock_openai.py) with one addition the end-to-end benchmark needs: the start and end
of every chat request on the machine's monotonic clock (``GET /v1/_spans``), so the benchmark can tell how
many requests were in flight at each moment, not just the peak. CLOCK_MONOTONIC is one clock for every
process of the host, so the spans line up with the benchmark's own timestamps of the client process.

It also listens with a deep accept queue (``--backlog``, default 1024; aiohttp's is 128): a client opening
256 connections at once otherwise overflows it, the kernel drops SYNs, and the 1-3-7 s SYN retransmits
run into a 5 s connect timeout (bench/bench_engine.py's AsyncOpenAI leg at concurrency 256 failed so).

Run as a script: ``python bench/e2e_mock.py --port N [--delay 0.2] [--backlog 1024]``; 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mock_openai import MockOpenAI  # noqa: E402


class SpanMock(MockOpenAI):
    """Records ``(start, end)`` of each chat request, probes included: they load the server too."""

    def __init__(self, delay: float) -> None:
        super().__init__(delay=delay, keep_bodies=False)
        self.spans: list[tuple[float, float]] = []

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_get("/v1/_spans", self.spans_json)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        start = time.monotonic()
        try:
            return await super().chat(request)
        finally:
            self.spans.append((start, time.monotonic()))

    async def spans_json(self, request: web.Request) -> web.Response:
        return web.json_response({"spans": self.spans, "requests": self.stats.requests})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds each request takes")
    parser.add_argument("--backlog", type=int, default=1024, help="accept queue length")
    args = parser.parse_args()
    server = SpanMock(args.delay)
    web.run_app(
        server.app(), host="127.0.0.1", port=args.port, backlog=args.backlog, access_log=None, print=None
    )


if __name__ == "__main__":
    main()
