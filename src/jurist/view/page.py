"""The HTML page: assets inlined, data inlined as JSON blocks, a strict Content-Security-Policy.

The page is one file that opens from disk with no network: styles and scripts are inlined and allowed by
their sha256 in the CSP (nothing else may run, so a ``<script>`` smuggled into the data could not run even
if the DOM code had a hole), images and fonts are refused, and fetches are refused (``--serve``: only the
serving origin). Data sits in ``<script type="application/json">`` blocks with ``<``, ``>`` and ``&``
escaped as ``\\u003c``..., so no text a model wrote can close the block. The index comes first and the
payload chunks last, so the browser paints the list before it has read the texts.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.view.index import ViewData
from jurist.view.summary import summarize

SCRIPTS = ("md.js", "data.js", "list.js", "rubric.js", "question.js", "summary.js", "card.js", "main.js")
STYLE = "page.css"
CHUNK_ROWS = 128
"""Rows per payload block: small enough to parse in a few ms when one question opens."""


def asset(name: str) -> str:
    return resources.files("jurist.view").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def script_text() -> str:
    """All scripts in one strict-mode function scope (nothing leaks onto ``window`` but the perf hook)."""
    body = "\n".join(asset(name) for name in SCRIPTS)
    for marker in ("<script", "</script", "<!--"):  # would end or confuse the inline block
        if marker in body.lower():
            raise AssertionError(f"a page script contains {marker!r}")
    return f'"use strict";\n(() => {{\n{body}\n}})();\n'


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def content_policy(script: str, style: str, *, serve: bool) -> str:
    """Only the page's own script and style; no images, fonts, frames or forms; fetches only when served."""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {_digest(script)}",
            f"style-src {_digest(style)}",
            "img-src 'none'",
            "font-src 'none'",
            "connect-src 'self'" if serve else "connect-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def inline_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` block: no ``<``, ``>``, ``&`` or line separators left as they are."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _title(view: ViewData) -> str:
    return "jurist view: " + ", ".join(view.run_names)


def page_parts(view: ViewData, index: dict[str, Any], *, serve: bool) -> tuple[str, str]:
    """The page before and after the payload chunks (the served page has none: it fetches them)."""
    script, style = script_text(), asset(STYLE)
    policy = html.escape(content_policy(script, style, serve=serve))
    head = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(_title(view))}</title>\n<style>{style}</style>\n</head><body>\n"
        '<header id="top"></header><main id="main"></main>\n'
        f'<script type="application/json" id="jurist-index">{inline_json(index)}</script>\n'
        f"<script>{script}</script>\n"
    )
    return head, "</body></html>\n"


def chunks(view: ViewData, size: int = CHUNK_ROWS) -> Iterator[str]:
    """The payload blocks, ``size`` rows each, in row order."""
    batch: list[dict[str, Any]] = []
    for payload in view.payloads():
        batch.append(payload)
        if len(batch) == size:
            yield f'<script type="application/json" class="jurist-chunk">{inline_json(batch)}</script>\n'
            batch = []
    if batch:
        yield f'<script type="application/json" class="jurist-chunk">{inline_json(batch)}</script>\n'


@dataclass(frozen=True)
class Written:
    path: Path
    size: int
    rows: int
    seconds: float


def write_page(view: ViewData, out: Path, *, categories: bool = True) -> Written:
    """Write the self-contained page to ``out`` (through a temporary file, renamed when whole)."""
    started = time.perf_counter()
    index = view.index("static", summarize(view.runs, categories=categories)) | {"chunk": CHUNK_ROWS}
    head, tail = page_parts(view, index, serve=False)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(head)
            for block in chunks(view):
                fh.write(block)
            fh.write(tail)
        os.replace(tmp, out)
    except OSError as exc:  # a read-only run directory, a full disk: nothing half-written is left
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        reason = exc.strerror or type(exc).__name__
        raise JuristError(
            f"cannot write the page to {out}: {reason}; choose another file with --out"
        ) from None
    return Written(out, out.stat().st_size, len(view.rows), time.perf_counter() - started)
