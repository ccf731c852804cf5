"""Verdict labels and strict parsing of judge replies.

Only the five labels (and their mirrored spellings such as ``A<B``) are accepted; Arena-Hard's own regex
accepts any string over ``[AB<>=]`` and then crashes the leaderboard on e.g. ``A>>>B``. The last valid
label in the reply wins, as upstream.
"""

from __future__ import annotations

import json
import re

LABELS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")

# Mirrored spellings normalised to the five canonical labels.
_CANONICAL = {label: label for label in LABELS} | {
    "B<<A": "A>>B",
    "B<A": "A>B",
    "B=A": "A=B",
    "A<B": "B>A",
    "A<<B": "B>>A",
}
_ALTERNATION = "|".join(re.escape(label) for label in sorted(_CANONICAL, key=len, reverse=True))
_DOUBLE = re.compile(rf"\[\[\s*({_ALTERNATION})\s*\]\]")
_SINGLE = re.compile(rf"(?<!\[)\[\s*({_ALTERNATION})\s*\](?!\])")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")

# (winner side, strong?) per canonical label, from the point of view of positions A and B.
LABEL_OUTCOME: dict[str, tuple[str | None, bool]] = {
    "A>>B": ("A", True),
    "A>B": ("A", False),
    "A=B": (None, False),
    "B>A": ("B", False),
    "B>>A": ("B", True),
}

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": list(LABELS)}},
    "required": ["verdict"],
    "additionalProperties": False,
}


def canonical_label(raw: str) -> str | None:
    return _CANONICAL.get(raw.strip().upper().replace(" ", ""))


def parse_json_verdict(text: str) -> str | None:
    """The label in a ``{"verdict": ...}`` object (the structured protocol's reply), if any."""
    candidates = [text.strip()] + _JSON_OBJECT.findall(text)[::-1]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("verdict"), str):
            label = canonical_label(data["verdict"])
            if label is not None:
                return label
    return None


def parse_verdict(text: str) -> str | None:
    """The last whitelisted label in ``text`` (``[[X]]``, else ``[X]``), or a JSON verdict; else None."""
    upper = text.upper()
    for pattern in (_DOUBLE, _SINGLE):
        matches = pattern.findall(upper)
        if matches:
            return canonical_label(matches[-1])
    return parse_json_verdict(text)


def swap_label(label: str) -> str:
    """The same verdict with positions A and B exchanged."""
    return {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}[label]
