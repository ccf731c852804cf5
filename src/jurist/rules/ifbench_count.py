"""IFBench ``count:*`` checkers: how many words, names, numbers, pronouns... a response holds.

Each reproduces the 2025-10 reference's counting exactly, quirks included (noted per checker), because
the point is to score like the shipped results, not to judge the instruction better.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jurist.rules.ifbench_common import (
    IFBENCH,
    PUNCT_SPACE,
    count_arg,
    drop_punctuation,
    text_arg,
    word_tokens,
)

_CONJUNCTIONS = frozenset({"and", "but", "for", "nor", "or", "so", "yet"})

PERSON_NAMES = (
    "Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Charlotte Alexander Amelia "
    "Benjamin Harper Leo Zoe Daniel Chloe Samuel Lily Matthew Grace Owen Abigail Gabriel Ella Jacob "
    "Scarlett Nathan Victoria Elijah Layla Nicholas Audrey David Hannah Christopher Penelope Thomas Nora "
    "Andrew Aria Joseph Claire Ryan Stella Jonathan"
).split()
"""The 50 names the instruction lists; only these count."""

_PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself "
    "she her hers herself it its itself they them their theirs themselves".split()
)

_JAPANESE = re.compile("[\u3040-\u30ff\u4e00-\u9fff]")
"""Hiragana, katakana (with their punctuation block) and the CJK unified ideographs."""

_KEYWORD_TIMES = (("keyword1", 1), ("keyword2", 2), ("keyword3", 3), ("keyword4", 5), ("keyword5", 7))


@IFBENCH.register("count:word_count_range")
def word_count_range(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """``min_words <= number of \\w+ runs <= max_words`` (so "don't" is two words, "3.5" two)."""
    low, high = count_arg(kwargs, "min_words"), count_arg(kwargs, "max_words")
    return bool(low <= len(word_tokens(response)) <= high)


@IFBENCH.register("count:unique_word_count")
def unique_word_count(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``N`` distinct lower-cased whitespace words, each trimmed of ASCII punctuation at both
    ends; a token of punctuation only (``-``, ``---``) becomes the empty word and counts as one."""
    wanted = count_arg(kwargs, "N")
    distinct = {word.strip(PUNCT_SPACE) for word in response.lower().split()}
    return bool(len(distinct) >= wanted)


@IFBENCH.register("count:conjunctions")
def conjunctions(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """``small_n`` or more distinct coordinating conjunctions. A token qualifies when, trimmed and
    lower-cased, it is one of the seven FANBOYS, but distinctness is judged on the token as written:
    ``and``, ``And`` and ``and,`` count as three."""
    wanted = count_arg(kwargs, "small_n")
    found = {word for word in response.split() if word.strip(PUNCT_SPACE).lower() in _CONJUNCTIONS}
    return bool(len(found) >= wanted)


@IFBENCH.register("count:person_names")
def person_names(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``N`` of the listed names occur as case-sensitive substrings: "Leonardo" holds "Leo",
    "Miami" holds "Mia"; no named-entity recognition is involved."""
    wanted = count_arg(kwargs, "N")
    return bool(sum(name in response for name in PERSON_NAMES) >= wanted)


@IFBENCH.register("count:numbers")
def numbers(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly ``N`` runs of digits once ASCII punctuation is deleted, so "3.14" and "1,000" are one
    number each but "3 14" is two; any Unicode digit counts."""
    wanted = count_arg(kwargs, "N")
    return bool(len(re.findall(r"\d+", drop_punctuation(response))) == wanted)


@IFBENCH.register("count:punctuation")
def punctuation(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """An interrobang (``?!``, ``!?`` or ``‽``) plus each of ``. , ! ? ; :``. The first ``?!`` (else the
    first ``!?``) is removed before looking for the six, so it cannot supply the ``?`` and ``!``."""
    if "?!" not in response and "!?" not in response and "\u203d" not in response:
        return False
    rest = response.replace("?!", "", 1)
    if len(rest) == len(response):
        rest = response.replace("!?", "", 1)
    return set(".,!?;:") <= set(rest)


@IFBENCH.register("count:words_japanese")
def words_japanese(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every ``N``-th whitespace word (1-based), trimmed of ASCII punctuation, holds a Japanese
    character, unless it is then empty or all digits (such words are excused). ``N=0`` divides by zero,
    as in the reference."""
    period = count_arg(kwargs, "N")
    for position, raw in enumerate(response.split(), start=1):
        word = raw.strip(PUNCT_SPACE)
        if position % period == 0 and word and not word.isdigit() and not _JAPANESE.search(word):
            return False
    return True


@IFBENCH.register("count:pronouns")
def pronouns(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``N`` personal pronouns among the words left after ``/`` becomes a space and ASCII
    punctuation is deleted; apostrophes vanish too, so "it's" counts as "its"."""
    wanted = count_arg(kwargs, "N")
    words = drop_punctuation(response.replace("/", " ").lower()).split()
    return bool(sum(word in _PRONOUNS for word in words) >= wanted)


@IFBENCH.register("count:keywords_multiple")
def keywords_multiple(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Keyword 1..5 occur exactly 1, 2, 3, 5 and 7 times, counted case-insensitively as non-overlapping
    substrings ("cascade" inside "cascades" counts); keywords are stripped of surrounding whitespace."""
    wanted = [(text_arg(kwargs, name).strip().lower(), times) for name, times in _KEYWORD_TIMES]
    lowered = response.lower()
    return all(lowered.count(keyword) == times for keyword, times in wanted)
