"""Answer style metadata in Arena-Hard v2's shape, computed fully offline.

``token_len`` counts o200k_base tokens (the gpt-4o encoding) of the whole answer, through tiktoken
(:mod:`jurist.tokens.count`); the markdown counts are taken after deleting the text inside fenced code
blocks, exactly as Arena-Hard does: every captured block body is removed wherever it occurs in the answer
(a literal ``str.replace``), which leaves the fences.

Both stay bounded on degenerate text (a 20 MB reply of one character). Where a count had to be
approximated to stay so (a token piece longer than :data:`jurist.tokens.count.SEARCH_CHARS` characters,
or so many distinct code blocks that removing each everywhere would take minutes), the metadata carries
``"approximate": true`` after the four groups upstream reads.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from jurist.tokens.count import measure_tokens

_FENCED_CODE = re.compile(r"```([^`]*)```")
# Upstream counts each level with its own ``^#{level}\s``: at a line start at most one level matches (the
# run of '#' is that long), so one pass counts them all, by the length of the run.
_HEADERS = re.compile(r"^(#{1,6})\s", re.MULTILINE)
# Upstream writes these two ``^\s*...``: the same matches, but ``\s*`` may cross line breaks, so every
# line start of a run of blank lines scanned the whole run again (quadratic: 20 MB of newlines never
# ended). Only the last line start of such a run can begin a match that the first would have begun, and
# findall counts it once either way.
_ORDERED = re.compile(r"^[^\S\n]*\d+\.\s", re.MULTILINE)
_UNORDERED = re.compile(r"^[^\S\n]*[-*+]\s", re.MULTILINE)
_BOLD_STARS = re.compile(r"\*\*[^*\n]+\*\*")
_BOLD_UNDERSCORES = re.compile(r"__[^_\n]+__")

REPLACE_BUDGET_CHARS = 1 << 28
"""Characters that removing code block bodies one by one may scan in one answer (~0.3 s): a 10 KB answer
with 20 blocks scans 0.2 MB."""


def strip_code_blocks(text: str) -> str:
    """Delete every fenced code block's body (each captured body is removed wherever it occurs)."""
    return _stripped(text)[0]


def _stripped(text: str) -> tuple[str, bool]:
    """:func:`strip_code_blocks`, and whether it is upstream's result exactly.

    The bodies are removed in order, as upstream does, skipping what cannot change the text: an empty
    body, and one already found absent since the text last changed (a degenerate answer repeats one
    block a million times). Should the removals that remain outgrow :data:`REPLACE_BUDGET_CHARS`, each
    block's body is removed where it stands instead (one pass; not exact where a body also occurs
    outside its block)."""
    stripped, absent, scanned = text, set(), 0
    for block in _FENCED_CODE.finditer(text):
        body = block.group(1)
        if not body or body in absent:
            continue
        scanned += len(stripped)
        if scanned > REPLACE_BUDGET_CHARS:
            return _FENCED_CODE.sub("``````", text), False
        shorter = stripped.replace(body, "")
        if len(shorter) == len(stripped):
            absent.add(body)
        else:
            absent.clear()
            stripped = shorter
    return stripped, True


def markdown_counts(text: str) -> dict[str, dict[str, int]]:
    """Header (h1..h6), list (ordered/unordered) and bold (``**``/``__``) counts of markdown text."""
    # A pattern that starts at line starts scans every character (10 ns each); one whose text has none
    # of the characters it needs is not run: a 20 MB reply of one character is counted in ~0.1 s.
    levels = Counter(map(len, _HEADERS.findall(text))) if "#" in text else Counter[int]()
    ordered = len(_ORDERED.findall(text)) if "." in text else 0
    unordered = len(_UNORDERED.findall(text)) if any(bullet in text for bullet in "-*+") else 0
    return {
        "header_count": {f"h{level}": levels[level] for level in range(1, 7)},
        "list_count": {"ordered": ordered, "unordered": unordered},
        "bold_count": {"**": len(_BOLD_STARS.findall(text)), "__": len(_BOLD_UNDERSCORES.findall(text))},
    }


def answer_style_metadata(text: str) -> dict[str, Any]:
    """Arena-Hard v2 answer ``metadata``: token_len plus markdown counts outside fenced code, and
    ``approximate`` where either had to be approximated (see the module's docstring)."""
    tokens = measure_tokens(text)
    stripped, exact = _stripped(text)
    metadata: dict[str, Any] = {"token_len": tokens.tokens}
    metadata.update(markdown_counts(stripped))
    if not (tokens.exact and exact):
        metadata["approximate"] = True
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
