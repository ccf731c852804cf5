"""Verdict labels and strict parsing of judge replies.

Only the five labels (and their mirrored spellings such as ``A<B``) are accepted; Arena-Hard's own regex
accepts any string over ``[AB<>=]`` and then crashes the leaderboard on e.g. ``A>>>B``. The last valid
label in the reply wins, as upstream, except that labels listed as options (a judge repeating the
re-ask's list) are not verdicts (see :func:`_committed`).

Answers under judgement may themselves contain verdict labels (a prompt injection, or a question about
judging). Two rules keep those from deciding a verdict:

- :func:`neutralize_labels` rewrites every bracketed label in the material shown to the judge (question
  and answers) as ``((A>>B))``, which no pattern here accepts. A judge that quotes what it was shown
  therefore quotes no valid label, whatever it quotes and wherever; this is exact, not a heuristic.
- JSON verdict objects are left intact in answers (they may be code under review), so an embedded
  ``{"verdict": ...}`` object in a reply that also appears verbatim in the shown material counts as a
  quote and is skipped. A reply that *is* a JSON object is the schema-constrained verdict and is trusted.

Removing verbatim echoes of the *original* answers would instead be unsound: it would also discard the
judge's own verdict whenever an answer happens to contain the same label, so it is not done.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

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
# Case-insensitive on the original text (not on text.upper(), whose length can differ from the text's).
_DOUBLE = re.compile(rf"\[\[\s*({_ALTERNATION})\s*\]\]", re.IGNORECASE)
_SINGLE = re.compile(rf"(?<!\[)\[\s*({_ALTERNATION})\s*\](?!\])", re.IGNORECASE)
# Any bracket run around a label: a superset of what _DOUBLE and _SINGLE accept.
_BRACKETED = re.compile(rf"\[+\s*(?:{_ALTERNATION})\s*\]+", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
# What may stand between two labels of one list: separators, "or"/"and", a bullet or item number.
_LIST_GAP = re.compile(r"(?:[\s,;:/|.*\-]|\bor\b|\band\b|\d+[.)])*", re.IGNORECASE)
_LIST_MIN = 3  # distinct labels that make a run a list, not a verdict

# (winner side, strong?) per canonical label, from the point of view of positions A and B.
LABEL_OUTCOME: dict[str, tuple[str | None, bool]] = {
    "A>>B": ("A", True),
    "A>B": ("A", False),
    "A=B": (None, False),
    "B>A": ("B", False),
    "B>>A": ("B", True),
}

# How much each label says "B is better" (ties split): the soft preference of a verdict distribution.
B_SHARE = {"A>>B": 0.0, "A>B": 0.0, "A=B": 0.5, "B>A": 1.0, "B>>A": 1.0}

# The logprob protocol's one-token verdicts.
DIGIT_LABELS = {"1": "A>>B", "2": "A>B", "3": "A=B", "4": "B>A", "5": "B>>A"}
_LEADING_DIGIT = re.compile(r"\W*([1-5])(?![0-9])")

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": list(LABELS)}},
    "required": ["verdict"],
    "additionalProperties": False,
}


def canonical_label(raw: str) -> str | None:
    return _CANONICAL.get(raw.strip().upper().replace(" ", ""))


def neutralize_labels(text: str) -> str:
    """``text`` with every bracketed verdict label turned into ``((label))``, which no parser accepts.

    Only label-shaped bracket groups change, so code with ``[[`` (nested lists, shell tests) reaches the
    judge untouched.
    """
    if "[" not in text:
        return text
    return _BRACKETED.sub(lambda m: m.group(0).replace("[", "(").replace("]", ")"), text)


def _label_from_object(candidate: str) -> str | None:
    try:
        data = json.loads(candidate)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("verdict"), str):
        return canonical_label(data["verdict"])
    return None


def parse_json_verdict(text: str, quoted: Sequence[str] = ()) -> str | None:
    """The label of a ``{"verdict": ...}`` reply, else of the last embedded object that is not a quote."""
    whole = _label_from_object(text.strip())
    if whole is not None:
        return whole
    for candidate in reversed(_JSON_OBJECT.findall(text)):
        if any(candidate in source for source in quoted):
            continue
        label = _label_from_object(candidate)
        if label is not None:
            return label
    return None


def parse_verdict(text: str, quoted: Sequence[str] = ()) -> str | None:
    """The last whitelisted label in ``text`` (``[[X]]``, else ``[X]``), or a JSON verdict; else None.

    ``quoted`` is the material the judge was shown (after :func:`neutralize_labels`); JSON objects copied
    from it are not verdicts.
    """
    for pattern in (_DOUBLE, _SINGLE):
        candidates = _committed(list(pattern.finditer(text)), text)
        if candidates:
            return canonical_label(candidates[-1])
    return parse_json_verdict(text, quoted)


def _committed(matches: list[re.Match[str]], text: str) -> list[str]:
    """The labels of ``matches`` that may be a verdict: those not part of an enumeration of the options.

    A judge that answers the re-ask with its list of options ("exactly one of: [[A>>B]], [[A>B]], ...")
    has chosen nothing, yet the last label of the list would read as a verdict (``B>>A``, the strongest
    for one side). So a run of labels joined only by separators (commas, "or", bullets) that holds three or
    more distinct labels is a list, and every label up to the point where all five have appeared is an
    enumeration too; a verdict is a label after that, outside any list.
    """
    if not matches:
        return []
    labels = [canonical_label(m.group(1)) or "" for m in matches]
    listed = [False] * len(matches)
    start = 0
    for i in range(1, len(matches) + 1):
        joined = i < len(matches) and _LIST_GAP.fullmatch(text, matches[i - 1].end(), matches[i].start())
        if not joined:
            if len(set(labels[start:i])) >= _LIST_MIN:
                listed[start:i] = [True] * (i - start)
            start = i
    seen: set[str] = set()
    for i, label in enumerate(labels):
        seen.add(label)
        if len(seen) == len(LABELS):
            listed[: i + 1] = [True] * (i + 1)
            break
    return [m.group(1) for m, drop in zip(matches, listed, strict=True) if not drop]


def parse_digit_verdict(text: str) -> str | None:
    """The label of a reply that starts with a verdict digit 1-5 (the logprob protocol's text fallback)."""
    match = _LEADING_DIGIT.match(text.strip())
    return DIGIT_LABELS[match.group(1)] if match else None


def _positions(logprobs: Any) -> Iterable[tuple[str, dict[str, float]]]:
    """(sampled token, {token: logprob} of its alternatives) per generated position, for both shapes.

    Chat completions (OpenAI, vLLM, llama.cpp):
    ``{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}``; legacy completions:
    ``{"tokens": [...], "token_logprobs": [...], "top_logprobs": [{token: logprob}]}``.
    """
    if not isinstance(logprobs, dict):
        return
    content = logprobs.get("content")
    if isinstance(content, list):
        for entry in content:
            if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
                continue
            alternatives: dict[str, float] = {}
            for alt in entry.get("top_logprobs") or []:
                if isinstance(alt, dict) and isinstance(alt.get("token"), str):
                    alternatives.setdefault(alt["token"], float(alt.get("logprob", -math.inf)))
            if isinstance(entry.get("logprob"), (int, float)):
                alternatives.setdefault(entry["token"], float(entry["logprob"]))
            yield entry["token"], alternatives
        return
    tokens, token_lps = logprobs.get("tokens"), logprobs.get("token_logprobs")
    tops = logprobs.get("top_logprobs")
    if isinstance(tokens, list):
        for i, token in enumerate(tokens):
            alternatives = {}
            if isinstance(tops, list) and i < len(tops) and isinstance(tops[i], dict):
                alternatives = {str(k): float(v) for k, v in tops[i].items()}
            if isinstance(token_lps, list) and i < len(token_lps) and token_lps[i] is not None:
                alternatives.setdefault(str(token), float(token_lps[i]))
            yield str(token), alternatives


def verdict_distribution(logprobs: Any) -> tuple[dict[str, float], float] | None:
    """P(label) read at the reply's first word-like token, and the share of probability it covers.

    Tokens that are blank or only punctuation (``**``, quotes) before the verdict are skipped. Spellings of
    one digit (``"3"``, ``" 3"``) are pooled; digits missing from ``top_logprobs`` count as probability 0,
    as AlpacaEval does. None when there are no logprobs or the first word-like token is not a digit 1-5.
    """
    for token, alternatives in _positions(logprobs):
        if not any(ch.isalnum() for ch in token):
            continue
        if token.strip() not in DIGIT_LABELS:
            return None
        pooled: dict[str, float] = {}
        for alt, logprob in alternatives.items():
            label = DIGIT_LABELS.get(alt.strip())
            if label is not None and logprob > -math.inf:
                pooled[label] = pooled.get(label, 0.0) + math.exp(logprob)
        covered = sum(pooled.values())
        if covered <= 0.0:
            return None
        return {label: pooled.get(label, 0.0) / covered for label in LABELS}, min(covered, 1.0)
    return None


def soft_preference(probs: dict[str, float]) -> float:
    """P(B is better), a tie counting one half for each side: AlpacaEval's preference minus one."""
    return sum(B_SHARE[label] * p for label, p in probs.items())


def swap_label(label: str) -> str:
    """The same verdict with positions A and B exchanged."""
    return {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}[label]
