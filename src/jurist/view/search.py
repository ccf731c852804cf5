"""Full-text search for ``jurist view --serve``: every row's text, lower-cased, in one temporary file.

A served run may be too large to hold its texts in memory, so they are written once (in a background
thread, while the page is already usable) to a temporary file and searched through ``mmap``: ``find`` runs
at memory speed over hundreds of megabytes, and a hit is mapped back to its row by bisecting the rows'
start offsets. The words of a query must all occur in a row, as in the written page's own search.
"""

from __future__ import annotations

import logging
import mmap
import tempfile
import threading
from array import array
from bisect import bisect_right
from typing import IO

from jurist.view.index import ViewData, search_text

log = logging.getLogger(__name__)

MAX_WORDS = 12
_SEPARATOR = b"\x00"


def query_words(query: str) -> list[bytes]:
    """The words searched for, as the page splits them: lower-cased, at most :data:`MAX_WORDS`."""
    return [word.encode("utf-8") for word in query.lower().split()[:MAX_WORDS]]


class TextSearch:
    """Rows' texts on disk, searched by substring; :meth:`start` builds it in the background."""

    def __init__(self, view: ViewData) -> None:
        self._view = view
        self._starts = array("q")
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="jurist-view-")
        self._map: mmap.mmap | None = None
        self._ready = threading.Event()
        self._failed: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._build, name="jurist-view-search", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            position = 0
            for payload in self._view.payloads():
                if self._stop.is_set():
                    return
                data = search_text(payload).lower().replace("\x00", " ").encode("utf-8") + _SEPARATOR
                self._starts.append(position)
                self._file.write(data)
                position += len(data)
            self._starts.append(position)
            self._file.flush()
            if position:
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        except Exception as exc:  # noqa: BLE001 - reported to every search instead of killing the thread
            self._failed = f"{type(exc).__name__}: {exc}"
            log.warning("jurist view: the search text could not be built: %s", self._failed)
        finally:
            self._ready.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    @property
    def error(self) -> str | None:
        return self._failed

    def search(self, query: str, *, timeout: float = 120.0) -> list[int]:
        """Rows whose text holds every word of ``query`` (every row for an empty query)."""
        words = query_words(query)
        if not words:
            return list(range(len(self._view.rows)))
        if not self._ready.wait(timeout) or self._map is None:
            return []
        first, rest = words[0], words[1:]
        found: list[int] = []
        data, starts = self._map, self._starts
        position = 0
        while True:
            at = data.find(first, position)
            if at < 0:
                return found
            row = bisect_right(starts, at) - 1
            end = starts[row + 1]
            if all(data.find(word, starts[row], end) >= 0 for word in rest):
                found.append(row)
            position = end

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._map is not None:
            self._map.close()
        self._file.close()
