"""``jurist view --serve``: the same page on 127.0.0.1, its rows and search answered on demand.

For runs too large to inline: the page carries only the index; a question's payload is read from the run
files when it is opened (``/api/row/<n>``) and search runs here (``/api/search?q=``). The server binds
127.0.0.1 only, answers GET alone, and refuses requests whose Host header is not its own address, so a
web page elsewhere cannot reach it through a rebound DNS name. Every response carries the page's CSP.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from jurist.view.index import ViewData
from jurist.view.page import STYLE, asset, content_policy, page_parts, script_text
from jurist.view.search import TextSearch
from jurist.view.summary import summarize

log = logging.getLogger(__name__)

HOST = "127.0.0.1"


class ViewServer:
    """The served page for ``view``; :meth:`serve` answers requests until stopped (or ``max_requests``)."""

    def __init__(self, view: ViewData, *, port: int = 0, categories: bool = True) -> None:
        self.view = view
        index = view.index("serve", summarize(view.runs, categories=categories))
        head, tail = page_parts(view, index, serve=True)
        self.page = (head + tail).encode("utf-8")
        self.policy = content_policy(script_text(), asset(STYLE), serve=True)
        self.search = TextSearch(view)
        self.requests = 0
        self._stop = threading.Event()
        self.httpd = ThreadingHTTPServer((HOST, port), _handler(self))
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.search.start()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def allowed_hosts(self) -> set[str]:
        return {f"{HOST}:{self.port}", f"localhost:{self.port}"}

    def serve(self, *, max_requests: int | None = None, poll_s: float = 0.2) -> None:
        """Answer requests until :meth:`stop` (or until ``max_requests`` were answered)."""
        self.httpd.timeout = poll_s
        while not self._stop.is_set() and (max_requests is None or self.requests < max_requests):
            self.httpd.handle_request()

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self.httpd.server_close()
        self.search.close()


def _handler(server: ViewServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "jurist-view"
        sys_version = ""

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            server.requests += 1
            if self.headers.get("Host", "") not in server.allowed_hosts():
                self._send(HTTPStatus.MISDIRECTED_REQUEST, b"unknown host\n", "text/plain")
                return
            parts = urlsplit(self.path)
            path = parts.path
            if path in ("/", "/index.html"):
                self._send(HTTPStatus.OK, server.page, "text/html; charset=utf-8")
            elif path.startswith("/api/row/"):
                self._row(path.removeprefix("/api/row/"))
            elif path == "/api/search":
                query = parse_qs(parts.query).get("q", [""])[0]
                self._json({"rows": server.search.search(query), "error": server.search.error})
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")

        def _row(self, text: str) -> None:
            if not text.isdigit() or int(text) >= len(server.view.rows):
                self._send(HTTPStatus.NOT_FOUND, b"no such row\n", "text/plain")
                return
            self._json(server.view.payload(int(text)))

        def _json(self, data: Any) -> None:
            body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            self._send(HTTPStatus.OK, body, "application/json; charset=utf-8")

        def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", server.policy)
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
            log.debug("jurist view: " + format, *args)

    return Handler
