"""Token counts and answer style metadata: o200k_base through tiktoken, built offline, bounded on any text.

What other packages use is exported here; :mod:`~jurist.tokens.encoding` builds the encoding from the
ranks jurist ships, :mod:`~jurist.tokens.count` counts (exactly, or flagged approximate on degenerate
text), :mod:`~jurist.tokens.style` adds Arena-Hard's markdown counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.tokens.count import TokenCount, count_tokens, measure_tokens
    from jurist.tokens.encoding import O200K_SHA256, find_o200k_ranks_file, o200k_encoding, read_o200k_ranks
    from jurist.tokens.style import (
        answer_style_metadata,
        markdown_counts,
        stored_style_metadata,
        strip_code_blocks,
        style_vector,
    )

_HOMES = {
    "TokenCount": "count",
    "count_tokens": "count",
    "measure_tokens": "count",
    "O200K_SHA256": "encoding",
    "find_o200k_ranks_file": "encoding",
    "o200k_encoding": "encoding",
    "read_o200k_ranks": "encoding",
    "answer_style_metadata": "style",
    "markdown_counts": "style",
    "stored_style_metadata": "style",
    "strip_code_blocks": "style",
    "style_vector": "style",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "O200K_SHA256",
    "TokenCount",
    "answer_style_metadata",
    "count_tokens",
    "find_o200k_ranks_file",
    "markdown_counts",
    "measure_tokens",
    "o200k_encoding",
    "read_o200k_ranks",
    "stored_style_metadata",
    "strip_code_blocks",
    "style_vector",
]
