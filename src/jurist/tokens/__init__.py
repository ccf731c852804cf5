"""Token counts and answer style metadata: o200k_base through tiktoken, built offline, bounded on any text.

What other packages use is exported here; :mod:`~jurist.tokens.encoding` builds the encoding from the
ranks jurist ships, :mod:`~jurist.tokens.count` counts (exactly, or flagged approximate on degenerate
text), :mod:`~jurist.tokens.style` adds Arena-Hard's markdown counts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

# Each name is imported from its module on first use, so that importing one module of the package (or
# ``jurist --help``) does not load the rest.
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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


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
