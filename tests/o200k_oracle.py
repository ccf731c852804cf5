"""tiktoken's own o200k_base encoding, built from the same bundled ranks: the reference the lean counter
(jurist.tokens.o200k) is checked against, and what tests use to cut a reply at a token count."""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

from jurist.tokens.o200k import O200K_PATTERN
from jurist.tokens.style import read_o200k_ranks

SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


@cache
def tiktoken_o200k() -> Any:
    import tiktoken

    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in read_o200k_ranks().splitlines() if line)
    }
    encoding = tiktoken.Encoding(
        "o200k_base", pat_str=O200K_PATTERN, mergeable_ranks=ranks, special_tokens=SPECIAL
    )
    encoding._mergeable_ranks = {}  # kept only to pickle (jurist released it too when it used tiktoken)
    return encoding


def tiktoken_count(text: str) -> int:
    return len(tiktoken_o200k().encode(text, disallowed_special=()))
