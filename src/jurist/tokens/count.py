"""o200k token counts, exactly tiktoken's, bounded in time and memory on any text.

o200k (tiktoken, and jurist's count of it) cuts a text into pieces with the encoding's pattern
(:data:`~jurist.tokens.encoding.O200K_PATTERN`) and merges each piece's bytes. On a degenerate text one
piece is the whole text, and that costs: 20 MB of
one letter takes about 11 s in a single call (with tiktoken 0.13's merge; before it, quadratic), a run of
a million spaces overflows its regex engine's backtracking stack (a panic, not an exception), and the
token list of a 20 MB text alone holds ~200 MB. So a text longer than :data:`SEGMENT_CHARS` is counted
one segment at a time, each ending where the pattern always ends a piece (:data:`_PIECE_END`); tiktoken's
pattern looks ahead but never behind, so the segments' counts add up to the whole text's count, exactly.
Where the last :data:`SEARCH_CHARS` of a segment hold no such place (one piece longer than that: a run of
one letter, of spaces, a CJK line without punctuation), the segment is cut there all the same and the
count is an approximation, flagged by ``exact`` False: each such cut splits one piece in two, which
usually adds a token, so the count errs high by about one token per :data:`SEGMENT_CHARS` of such a
piece. A degenerate text repeats its segments, so a segment cut that way is counted once and looked up
after.

The count (:mod:`jurist.tokens.pieces`) is Python between short C calls (a segment's pieces found
without the GIL, a long piece merged by tiktoken), so a signal handler or the event loop runs meanwhile:
a huge text never holds Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from jurist.tokens.pieces import o200k_counter

SEGMENT_CHARS = 262_144
"""Texts up to this long are counted in one call (200k CJK characters without a break: exact, 0.1 s);
longer ones a segment of at most this at a time. A quarter of the run of spaces that overflows tiktoken's
regex engine."""

SEARCH_CHARS = 4_096
"""How far back from a segment's end a piece's end is looked for (~0.4 ms of scanning at most)."""

_REPEATED_KEPT = 16
"""Counts of segments cut inside a piece kept for one text: a degenerate text repeats a few of them."""

# tiktoken's \s: Unicode White_Space. Python's \s also takes U+001C..U+001F, which tiktoken's does not.
_WS = r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_WS_BUT_NEWLINES = r"\t\x0b\x0c \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Punctuation that neither continues a word (a letter, a mark, the ASCII apostrophe of 's) nor a number.
_PUNCTUATION = r"!\"#$%&()*+,\-./:;<=>?@\[\\\]^_`{|}~，。、；：？！（）【】《》「」『』“”‘’…"

_PIECE_END = re.compile(
    "|".join(
        [
            rf"[^{_WS}][{_WS_BUT_NEWLINES}]",  # no piece goes on from non-space into a space, tab ...
            rf"[\r\n][^{_WS}/]",  # ... nor from a line break into anything but space or '/'
            r"[A-Za-z][0-9]|[0-9][A-Za-z]",  # words and numbers are pieces of their own
            rf"[^\W\d_][{_PUNCTUATION}]",  # a letter or number before punctuation ends its piece
        ]
    )
)
"""Two characters between which every o200k piece ends, whatever comes before or after them (the
pattern's alternatives, read one by one, cannot carry a piece across): a segment may end between them."""


class TokenCount(NamedTuple):
    tokens: int
    exact: bool
    """False where a piece longer than :data:`SEARCH_CHARS` had to be cut: the count is then approximate
    (high by about a token for every :data:`SEGMENT_CHARS` of that piece)."""


def measure_tokens(text: str) -> TokenCount:
    """o200k_base tokens of ``text`` (special-token text counted as ordinary text, as upstream does), and
    whether the count is exact; bounded in time on any text (see the module's docstring)."""
    count = o200k_counter()
    if len(text) <= SEGMENT_CHARS:
        return TokenCount(count(text), True)
    total, exact, start, size = 0, True, 0, len(text)
    repeated: dict[str, int] = {}
    while start < size:
        stop = start + SEGMENT_CHARS
        if stop >= size:
            total += count(text[start:])
            break
        end = _PIECE_END.search(text, max(start + 1, stop - SEARCH_CHARS) - 1, stop)
        if end is not None:
            cut = end.start() + 1
            total += count(text[start:cut])
        else:  # one piece fills the search: cut it, an approximation
            cut, exact = stop, False
            segment = text[start:cut]
            counted = repeated.get(segment)
            if counted is None:
                if len(repeated) >= _REPEATED_KEPT:
                    repeated.clear()
                counted = repeated[segment] = count(segment)
            total += counted
        start = cut
    return TokenCount(total, exact)


def count_tokens(text: str) -> int:
    """o200k_base tokens of ``text``: exact, or (degenerate text) the approximation :func:`measure_tokens`
    flags."""
    return measure_tokens(text).tokens


def count_text_tokens(text: str) -> int:
    """Tokens of ``text`` with the o200k tokenizer (gpt-4o's), or about four bytes a token without it."""
    try:
        return count_tokens(text)
    except (RuntimeError, ImportError, OSError):
        return (len(text.encode("utf-8")) + 3) // 4
