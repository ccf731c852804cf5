"""IFBench checkers that upstream rewrote between ``c94da02`` (2025-10-17) and ``db69a6f`` (2026-08-19),
as ``db69a6f`` checks them; registered in :data:`ifbench_common.IFBENCH_DB69A6F`.

Upstream's commits: ``8e6a9be`` (#19: Punkt sentences, whole-word names and ``sentence:keyword``,
case-insensitive positions, crash guards, and ``format:quote_unquote`` no longer making curly quotes
straight), ``86ee248`` (``words_position`` looks past a trailing punctuation token), ``34f0927`` (more
pronouns), ``1091c4c`` (#25: ``repeat_span`` in characters, ``keywords_specific_position`` without
punctuation tokens). Checkers whose only change is the sentence splitter or a crash guard stay in their
family modules (:func:`ifbench_common.register_both`). Upstream's defects are kept, as elsewhere: this is
its benchmark, scored its way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jurist.rules import nltk_data
from jurist.rules.ifbench_common import (
    IFBENCH_DB69A6F,
    PUNCTUATION,
    UndeterminedArgument,
    count_arg,
    punkt_sentences,
    text_arg,
)
from jurist.rules.ifbench_count import PERSON_NAMES
from jurist.rules.ifbench_custom import request_to_repeat

_PRONOUNS = frozenset(
    "i me we us you he him she her it they them my mine our ours your yours his hers its their theirs "
    "myself ourselves yourself yourselves himself herself itself themselves this that these those who "
    "whom whose which what whoever whomever whatever whichever anybody anyone anything everybody "
    "everyone everything nobody nothing somebody someone something each either neither both all some "
    "any none".split()
)
"""``34f0927``'s list: personal, possessive, reflexive, demonstrative, interrogative, indefinite."""

_QUOTE_TRIM = "0123456789" + PUNCTUATION.replace('"', "")


def _whole_word(word: str, text: str, flags: int = 0) -> bool:
    """``word`` between ``\\b`` boundaries (upstream's pattern: "C++" followed by a space does not match)."""
    return re.search(rf"\b{re.escape(word)}\b", text, flags) is not None


@IFBENCH_DB69A6F.register("count:person_names")
def person_names(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``N`` of the listed names occur as whole words, case-sensitively ("Leonardo" no longer
    holds "Leo")."""
    wanted = count_arg(kwargs, "N")
    return bool(sum(_whole_word(name, response) for name in PERSON_NAMES) >= wanted)


@IFBENCH_DB69A6F.register("sentence:keyword")
def keyword(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """``word`` occurs as a whole word, in any case, in Punkt sentence number ``N`` (1-based; ``N=0``
    still inspects the last sentence, as upstream indexes with ``N - 1``)."""
    word = text_arg(kwargs, "word", empty_is_missing=True)
    position = count_arg(kwargs, "N")
    sentences = punkt_sentences(response)
    if len(sentences) < position:
        return False
    return _whole_word(word, sentences[int(position - 1)], re.IGNORECASE)


@IFBENCH_DB69A6F.register("count:pronouns")
def pronouns(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``N`` of the 63 pronoun tokens among NLTK's ``word_tokenize`` tokens of the lower-cased
    response, ``/`` read as a space ("it's" is "it" and "'s"; "this", "all", "some" count now)."""
    wanted = count_arg(kwargs, "N")
    tokens = nltk_data.word_tokenize(response.replace("/", " ").lower())
    return bool(sum(token in _PRONOUNS for token in tokens) >= wanted)


@IFBENCH_DB69A6F.register("format:quote_unquote")
def quote_unquote(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """With the literal ``'"'`` removed and all whitespace deleted, no two ``"`` are adjacent and the
    text, trimmed of digits and other ASCII punctuation, does not end with ``"``; nothing left passes.

    Curly quotes stay as they are: ``8e6a9be`` turned the line that made them straight into one that
    replaces ``"`` by ``"``, so ``“`` and ``”`` are no longer quotes to this check (upstream's behaviour,
    kept; see docs/benchmarks.md)."""
    text = "".join(response.replace("'\"'", "").split())
    if '""' in text:
        return False
    trimmed = text.strip(_QUOTE_TRIM)
    return not (trimmed and trimmed[-1] == '"')


@IFBENCH_DB69A6F.register("words:keywords_specific_position")
def keywords_specific_position(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Word ``m`` of Punkt sentence ``n`` (both 1-based) is ``keyword`` in any case, where words are the
    ``word_tokenize`` tokens holding a letter or digit (punctuation tokens no longer count)."""
    word = text_arg(kwargs, "keyword", empty_is_missing=True).strip()
    sentence_no = kwargs.get("n")
    word_no = kwargs.get("m")
    if not sentence_no or not word_no:
        raise UndeterminedArgument(
            f"n={sentence_no!r}, m={word_no!r}: the reference would draw them at random"
        )
    sentences = punkt_sentences(response)
    if len(sentences) < sentence_no:
        return False
    tokens = nltk_data.word_tokenize(sentences[sentence_no - 1])
    words = [token for token in tokens if any(char.isalnum() for char in token)]
    return bool(len(words) >= word_no and words[word_no - 1].lower() == word.lower())


@IFBENCH_DB69A6F.register("words:words_position")
def words_position(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The second ``word_tokenize`` token and the second-to-last one are ``keyword`` in any case; when
    the last token is punctuation (by Python's substring test on ASCII punctuation, so ``()`` and ``-.``
    count too, ``...`` not) the third-to-last is compared instead."""
    word = text_arg(kwargs, "keyword").strip().lower()
    tokens = nltk_data.word_tokenize(response)
    if len(tokens) < 2:
        return False
    if tokens[-1] in PUNCTUATION:
        return len(tokens) >= 3 and tokens[1].lower() == tokens[-3].lower() == word
    return tokens[1].lower() == tokens[-2].lower() == word


@IFBENCH_DB69A6F.register("repeat:repeat_span")
def repeat_span(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response, stripped and lower-cased, equals ``prompt_to_repeat``'s characters ``n_start`` to
    ``n_end`` *inclusive* (0-based), stripped and lower-cased. ``db69a6f`` takes 0 as 0; only a missing
    index is drawn at random upstream, and cannot be scored here."""
    request = request_to_repeat(kwargs)
    start, end = kwargs.get("n_start"), kwargs.get("n_end")
    if start is None or end is None:
        raise UndeterminedArgument(
            f"n_start={start!r}, n_end={end!r}: the reference would draw them at random"
        )
    return response.strip().lower() == request[start : end + 1].strip().lower()


@IFBENCH_DB69A6F.register("format:title_case")
def title_case(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every ``word_tokenize`` token that starts with a letter is capitalised: a one-letter token must
    not be lower case ("a" fails now), a longer one fails when it starts lower case and continues all
    lower or all upper; tokens starting with a digit or punctuation are skipped."""
    for token in nltk_data.word_tokenize(response):
        if not token or not token[0].isalpha():
            continue
        if len(token) == 1:
            if token.islower():
                return False
            continue
        if token[0].islower() and (token[1:].islower() or token[1:].isupper()):
            return False
    return True
