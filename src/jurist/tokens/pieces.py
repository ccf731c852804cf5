"""o200k_base token counts without tiktoken's tables: the encoding's pieces, each merged from the ranks.

All jurist does with o200k is count (answer lengths for Arena-Hard's style metadata, request sizes), and
a count needs less than tiktoken keeps. Its ``CoreBPE`` holds the 200k tokens three times over (47 MB
resident, 71 MB at the peak of its build) and builds in one call that holds the GIL for ~0.15 s, which
stalls a run's event loop just as its first requests go out. jurist counts as tiktoken encodes, step for
step, in one of two ways:

* :class:`CompiledO200kCounter`, wherever jurist's one C module (``jurist.tokens._o200k``, compiled at
  install) is present: the ranks held in 4 MB; ASCII text cut into the pattern's pieces and merged in C,
  the rest cut by the ``regex`` module and merged in C. Arena-Hard v2.0's 750 prompts (0.78M characters,
  333 of them not all ASCII): built in 0.04 s and counted in 0.05 s, where tiktoken builds in 0.26 s and
  counts in 0.07 s, and the Python count builds in 0.09 s and counts in 0.34 s. o3-mini's 750 answers
  (2.5M characters, nearly all with box drawing, em spaces or Cyrillic): 0.25 s, tiktoken 0.22 s.
* :class:`O200kCounter`, without it (installed where no C compiler was): the ranks held once (a dict,
  17 MB), the text cut by the ``regex`` module, whose ``\\s`` is Unicode White_Space as the Rust engine's
  is, and each piece that is no token merged in Python.

Either way a piece that is a token counts one; any other is merged as tiktoken's ``byte_pair_merge``
does: the adjacent pair of lowest rank joined first, the leftmost of equal ranks, until no pair is a
token. A piece longer than :data:`LONG_PIECE` bytes (:data:`COMPILED_LONG_PIECE` in C) that is no token
(a run of one letter, a CJK paragraph without punctuation) is handed to tiktoken's own merge, linear where
these are quadratic; only such text builds tiktoken's encoding.

The Python count trades CPU for memory: ~0.43 µs a character where tiktoken takes ~0.09 (49 MB of the
shared data's texts: 21 s against 4.3). A process that has counted :data:`NATIVE_AFTER` characters that
way (a large run's answers) builds tiktoken's encoding and counts the rest with it: from there tiktoken's
0.3 s build and 47 MB cost less than the Python count would.

``tests/test_token_pieces.py`` checks both counts equal tiktoken's on a sample of the shared data's texts
and on degenerate and random text. Run once over every string of the shared data's JSONL files (74,024
texts, 49M characters), neither count differed from tiktoken's anywhere (the C one took 3.1 s of CPU
there, tiktoken 4.0 s without its build).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast

from jurist.tokens.encoding import (
    O200K_PATTERN,
    o200k_encoding,
    o200k_ranks,
    read_o200k_ranks,
    release_o200k_encoding,
)

LONG_PIECE = 512
"""Bytes above which a piece that is not a token goes to tiktoken's merge (this one's steps grow with
the square of a piece's length: ~2 ms at this length)."""

CACHED_PIECES = 1 << 16
"""Distinct pieces whose counts are kept (~5.5 MB when full, then emptied): a text's words recur across
answers, a merge costs ~15 µs where a lookup costs 0.1, and looking every piece up by its text in one
``map`` skips its UTF-8 encoding and the ranks' lookup (750 o3-mini answers counted a second time:
0.51-0.75 -> 0.35-0.46 s; a first pass, mostly merges, is unchanged at ~1.4 s)."""

NATIVE_AFTER = 4_000_000
"""Characters counted in Python before a process switches to tiktoken's encoding: ~1.4 s of CPU more than
tiktoken would have taken, the most this counter spends for its smaller tables (a 750-question run's
answers are ~1.2M characters)."""

COMPILED_LONG_PIECE = 4096
"""Bytes above which a piece that is no token goes to tiktoken's merge from the C one (~5 ms at this
length, which a CJK paragraph without punctuation reaches)."""

HANDOVER_WINDOW = 16
HANDOVER_CHARS = 24
"""Where the C scan has handed over to the ``regex`` module :data:`HANDOVER_WINDOW` times within fewer
than ``HANDOVER_WINDOW * HANDOVER_CHARS`` characters (a text dense with characters outside ASCII: each
hand-over costs ~4.6 µs, where the regex module cuts ~24 characters), the regex module cuts the rest of
the text in one call and C merges its pieces."""

COMPILED_ABI = 1
"""The ``ABI_VERSION`` of ``jurist.tokens._o200k`` this module calls; an older build (an editable install
whose C source changed since) is not used."""

_NO_TOKEN = 1 << 62
"""The rank of a pair that is no token: above every real rank."""


class O200kCounter:
    """Counts o200k_base tokens of ordinary text (special-token text counted as text, as upstream does)."""

    def __init__(self, ranks: dict[bytes, int]) -> None:
        import regex  # with the tables, not at import: 13 ms of a run's start, before its first request

        self._split = regex.compile(O200K_PATTERN).findall
        self._ranks = ranks
        self._merged: dict[str, int] = {}
        self._counted = 0
        self.handed_over = False
        """Whether this process has counted :data:`NATIVE_AFTER` characters, and counts with tiktoken."""

    def count(self, text: str) -> int:
        """Tokens of ``text``, as ``len(tiktoken encoding.encode_ordinary(text))``: a lone surrogate (no
        UTF-8 has one) is read as tiktoken reads it, the text's UTF-16 decoded with replacement."""
        if not self.handed_over:
            self._counted += len(text)
            if self._counted > NATIVE_AFTER:  # tiktoken's tables replace these, let go before it builds
                self.handed_over = True
                self._ranks, self._merged = {}, {}
        ranks, merged = self._ranks, self._merged
        if not ranks:  # handed over, by this thread or another: a thread never counts with emptied tables
            return len(o200k_encoding().encode_ordinary(text))
        try:
            return self._count(text, ranks, merged)
        except UnicodeEncodeError:
            readable = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return self._count(readable, ranks, merged)

    def _count(self, text: str, ranks: dict[bytes, int], merged: dict[str, int]) -> int:
        pieces = self._split(text, concurrent=len(text) > 65_536)
        counts = list(map(merged.get, pieces))  # most pieces are words seen before: one C loop for them
        if None not in counts:
            return sum(cast("list[int]", counts))
        total = 0
        for piece, known in zip(pieces, counts, strict=True):
            if known is None:
                known = merged.get(piece)  # counted earlier in this same text
                if known is None:
                    known = self._first_count(piece, ranks, merged)
            total += known
        return total

    @staticmethod
    def _first_count(piece: str, ranks: dict[bytes, int], merged: dict[str, int]) -> int:
        """A piece not counted lately: one token, or merged; remembered unless it went to tiktoken."""
        data = piece.encode("utf-8")
        if data in ranks:
            count = 1
        elif len(data) > LONG_PIECE:
            return len(o200k_encoding()._encode_single_piece(data))
        else:
            count = merged_parts(data, ranks)
        if len(merged) >= CACHED_PIECES:
            merged.clear()
        merged[piece] = count
        return count


def merged_parts(data: bytes, ranks: dict[bytes, int]) -> int:
    """How many tokens byte-pair merging leaves of ``data``: tiktoken's ``byte_pair_merge``, counted.

    ``bounds[i]`` starts part ``i``; ``pairs[i]`` is the rank of parts ``i`` and ``i + 1`` joined (or
    :data:`_NO_TOKEN`). ``min`` and ``index`` pick the lowest rank, leftmost first, as tiktoken's scan
    does; joining parts ``i`` and ``i + 1`` changes only the pairs on either side of the new part."""
    get = ranks.get
    bounds = list(range(len(data) + 1))
    pairs = [get(data[i : i + 2], _NO_TOKEN) for i in range(len(data) - 1)]
    while pairs:
        best = min(pairs)
        if best == _NO_TOKEN:
            break
        i = pairs.index(best)
        del bounds[i + 1]
        del pairs[i]
        if i < len(pairs):
            pairs[i] = get(data[bounds[i] : bounds[i + 2]], _NO_TOKEN)
        if i > 0:
            pairs[i - 1] = get(data[bounds[i - 1] : bounds[i + 1]], _NO_TOKEN)
    return len(bounds) - 1


class CompiledO200kCounter:
    """Counts o200k_base tokens as :class:`O200kCounter` does, in C: ``Ranks.scan`` cuts and merges a run
    of ASCII text up to the first piece whose end depends on a character outside it; from there the
    ``regex`` module cuts pieces (each merged in C) until one ends before an ASCII character again, or,
    in a text dense with such characters (:data:`HANDOVER_WINDOW`), cuts all the rest at once. The
    pattern has no look-behind or anchor, so cutting from a piece's end gives the pieces ``findall`` would."""

    def __init__(self, ranks_file: bytes) -> None:
        import regex

        from jurist.tokens._o200k import Ranks

        pattern = regex.compile(O200K_PATTERN)
        self._pieces_from, self._split = pattern.finditer, pattern.findall
        self._ranks = Ranks(ranks_file, COMPILED_LONG_PIECE, _tiktoken_piece_count)
        self.handed_over = False
        """Always False: this count is never slower than tiktoken's (:class:`O200kCounter`'s hand-over)."""

    def count(self, text: str) -> int:
        """Tokens of ``text``, as ``len(tiktoken encoding.encode_ordinary(text))``: a lone surrogate (no
        UTF-8 has one) is read as tiktoken reads it, the text's UTF-16 decoded with replacement."""
        try:
            return self._count(text)
        except UnicodeEncodeError:
            return self._count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    def _count(self, text: str) -> int:
        ranks, size = self._ranks, len(text)
        total, at = ranks.scan(text, 0)
        window_start, handed = at, 0
        while at < size:
            handed += 1
            if handed == HANDOVER_WINDOW:  # text dense with characters outside ASCII: regex cuts the rest
                if at - window_start < HANDOVER_WINDOW * HANDOVER_CHARS:
                    return total + ranks.count(self._split(text, at, concurrent=size - at > 65_536))
                window_start, handed = at, 0
            pieces = []
            for piece in self._pieces_from(text, at, concurrent=size - at > 65_536):
                pieces.append(piece.group())
                at = piece.end()
                if at == size or text[at] < "\x80":
                    break
            total += ranks.count(pieces)
            scanned, at = ranks.scan(text, at)
            total += scanned
        return total


def _tiktoken_piece_count(data: bytes) -> int:
    return len(o200k_encoding()._encode_single_piece(data))


def compiled_counting() -> bool:
    """Whether this install has the C count (``jurist.tokens._o200k``, of the ABI this module calls)."""
    import importlib

    try:
        compiled = importlib.import_module("jurist.tokens._o200k")
    except ImportError:
        return False
    return getattr(compiled, "ABI_VERSION", None) == COMPILED_ABI


def build_o200k_counter() -> CompiledO200kCounter | O200kCounter:
    """The C count where this install has it, else the Python one; either reads the verified ranks file."""
    if compiled_counting():
        return CompiledO200kCounter(read_o200k_ranks())
    return O200kCounter(o200k_ranks())


_counter: CompiledO200kCounter | O200kCounter | None = None
_building = threading.Lock()


def o200k_counter() -> Callable[[str], int]:
    """The process's o200k count, built on first use (0.04 s in C, 0.1 s in Python) and kept; a second caller
    waits for the first one's build (answers are counted in threads) instead of building it again."""
    global _counter
    if _counter is None:
        with _building:
            if _counter is None:
                _counter = build_o200k_counter()
    return _counter.count


_users = 0
"""Callers between :func:`hold_o200k` and their :func:`release_o200k` (runs answering at once)."""
_users_lock = threading.Lock()


def hold_o200k() -> None:
    """A caller that will count soon (a run about to answer: each answer's style metadata counts its
    tokens) says so; the tables are built by its first count, in the thread that counts (a run's answer
    writer), and kept until it is done (:func:`release_o200k`).

    They were once built ahead, in a thread started before the run's endpoint check: that build holds the
    GIL for ~0.1 s in long C calls, and the run's last set-up and first answer requests, which wait on the
    GIL after every system call, took 0.13 s from the check's reply to the first answer request instead of
    0.03 (Arena-Hard v2.0's answers, median of 6 alternating runs; wall 5.74 -> 5.62 s). Built at the first
    answer, it runs while the event loop waits on the other replies."""
    global _users
    with _users_lock:
        _users += 1


def release_o200k(*, let_go: bool = True) -> None:
    """The end of a :func:`hold_o200k` caller's counting (a run whose answers are all written):
    once no such caller is left, the o200k tables are let go, the counter's (4 MB in C, 17 MB in Python:
    there Arena-Hard's judged run peaked at 115 MB instead of 126) and tiktoken's if it was built
    (47 MB); a later count builds them again (0.04 s in C). ``let_go=False``: done, but the tables may stay (a
    run that ends with its answers: its process frees them, and a run after it finds them built)."""
    global _counter, _users
    with _users_lock:
        _users = max(0, _users - 1)
        if _users or not let_go:
            return
        with _building:
            _counter = None
    release_o200k_encoding()
