"""The run browser behind ``jurist view``: one page to read and compare what models wrote and judges said.

:mod:`collect` indexes run directories without reading their texts, :mod:`index` joins runs into rows and
builds each row's payload, :mod:`summary` the leaderboards, :mod:`page` writes the self-contained HTML
file and :mod:`server` serves the same page on 127.0.0.1 with payloads loaded on demand. Everything a model
or judge wrote is untrusted: the page builds its DOM from text nodes only (see ``assets/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.view.index import ViewData
    from jurist.view.page import write_page
    from jurist.view.server import ViewServer

_HOMES = {
    "ViewData": "index",
    "write_page": "page",
    "ViewServer": "server",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "ViewData",
    "ViewServer",
    "write_page",
]
