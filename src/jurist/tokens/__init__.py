"""Token counts and answer style metadata: every count jurist makes itself is made here.

What other packages use is exported here; :mod:`~jurist.tokens.encoding` reads the o200k_base ranks
jurist ships, :mod:`~jurist.tokens.pieces` counts from them as tiktoken encodes, :mod:`~jurist.tokens.count`
bounds that on any text (exactly, or flagged approximate on degenerate text),
:mod:`~jurist.tokens.counters` picks each model's own tokenizer (tiktoken's encodings, or the model's
files through :mod:`~jurist.tokens.files`) for the dry run and for replies without usage,
:mod:`~jurist.tokens.reported` checks the counts a server reports, :mod:`~jurist.tokens.style` adds
Arena-Hard's markdown counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.tokens.count import TokenCount, count_text_tokens, count_tokens, measure_tokens
    from jurist.tokens.counters import (
        APPROXIMATE,
        CountedModel,
        TiktokenCounter,
        TokenCounter,
        approximate_counter,
        counter_for,
        counter_or_approximate,
        merge_labels,
    )
    from jurist.tokens.encoding import (
        O200K_SHA256,
        find_o200k_ranks_file,
        o200k_encoding,
        read_o200k_ranks,
    )
    from jurist.tokens.pieces import hold_o200k, o200k_counter, release_o200k
    from jurist.tokens.reported import MAX_REPLY_TOKENS, shown, token_count
    from jurist.tokens.style import (
        answer_style_metadata,
        markdown_counts,
        stored_style_metadata,
        strip_code_blocks,
        style_vector,
    )

_HOMES = {
    "TokenCount": "count",
    "count_text_tokens": "count",
    "count_tokens": "count",
    "APPROXIMATE": "counters",
    "CountedModel": "counters",
    "TiktokenCounter": "counters",
    "TokenCounter": "counters",
    "approximate_counter": "counters",
    "counter_for": "counters",
    "counter_or_approximate": "counters",
    "merge_labels": "counters",
    "measure_tokens": "count",
    "MAX_REPLY_TOKENS": "reported",
    "shown": "reported",
    "token_count": "reported",
    "O200K_SHA256": "encoding",
    "find_o200k_ranks_file": "encoding",
    "o200k_encoding": "encoding",
    "read_o200k_ranks": "encoding",
    "release_o200k": "pieces",
    "hold_o200k": "pieces",
    "o200k_counter": "pieces",
    "answer_style_metadata": "style",
    "markdown_counts": "style",
    "stored_style_metadata": "style",
    "strip_code_blocks": "style",
    "style_vector": "style",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "APPROXIMATE",
    "CountedModel",
    "MAX_REPLY_TOKENS",
    "O200K_SHA256",
    "TiktokenCounter",
    "TokenCount",
    "TokenCounter",
    "answer_style_metadata",
    "approximate_counter",
    "count_text_tokens",
    "count_tokens",
    "counter_for",
    "counter_or_approximate",
    "find_o200k_ranks_file",
    "markdown_counts",
    "merge_labels",
    "shown",
    "measure_tokens",
    "o200k_counter",
    "o200k_encoding",
    "read_o200k_ranks",
    "release_o200k",
    "hold_o200k",
    "stored_style_metadata",
    "strip_code_blocks",
    "style_vector",
    "token_count",
]
