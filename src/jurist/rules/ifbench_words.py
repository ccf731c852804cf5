"""IFBench ``words:*`` checkers: constraints on the letters, lengths, sounds and positions of words.

"Word" means what the 2025-10 reference splits on in each case (whitespace after deleting ASCII
punctuation, or NLTK's ``word_tokenize``); each docstring says which, since it decides the score.
"""

from __future__ import annotations

import functools
import string
from collections import Counter
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from jurist.rules import nltk_data
from jurist.rules.ifbench_common import (
    IFBENCH,
    PUNCT_SPACE,
    Splitter,
    UndeterminedArgument,
    count_arg,
    drop_punctuation,
    guarded_index,
    register_both,
    split_sentences,
    text_arg,
)
from jurist.rules.nltk_data import TAGGER_RESOURCE

_CONSONANTS = frozenset("bcdfghjklmnpqrstvwxyz")
_PRIMES = frozenset(
    {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97}
)
"""Primes up to 97 only: a longer word fails even when its length is prime, as in the reference."""


@register_both("words:alphabet", sentences=False, guard=True)
def alphabet(response: str, kwargs: Mapping[str, Any], prompt: str, *, guard: bool = False) -> bool:
    """Word initials run a, b, c... (after z comes a again), starting from whatever letter the first
    word has; words are split on whitespace after deleting ASCII punctuation. A first initial that is not
    a-z (a digit, "É") fails; the first initial is lower-cased alone, later ones as part of their word.
    No word at all: an IndexError in ``c94da02``, a fail in ``db69a6f``."""
    words = drop_punctuation(response).strip(PUNCT_SPACE).split()
    if not words:
        return guarded_index(
            guard, "words:alphabet on a response without words: the reference indexes words[0]"
        )
    letter = words[0][0].lower()
    if letter not in string.ascii_lowercase:
        return False
    for word in words[1:]:
        letter = string.ascii_lowercase[(string.ascii_lowercase.index(letter) + 1) % 26]
        if word.lower()[0] != letter:
            return False
    return True


@IFBENCH.register("words:vowel")
def vowel(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """One line (after stripping the ends) using at most three of the vowels a, e, i, o, u, in either
    case; y and accented vowels do not count."""
    lines = response.strip().split("\n")
    return len(lines) == 1 and len(set(lines[0].lower()) & set("aeiou")) <= 3


@IFBENCH.register("words:consonants")
def consonants(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every whitespace token, lower-cased with its punctuation kept, holds two adjacent consonants
    (y counts as one): "a", "I", "1990" and "--" all fail."""
    for word in response.lower().split():
        if not any(a in _CONSONANTS and b in _CONSONANTS for a, b in pairwise(word)):
            return False
    return True


@IFBENCH.register("words:palindrome")
def palindrome(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ten palindromic words of five or more characters, repeats counted, after deleting ASCII
    punctuation and lower-casing ("Madam," is not one: five letters; "level," is)."""
    words = drop_punctuation(response).lower().split()
    return sum(word == word[::-1] and len(word) >= 5 for word in words) >= 10


@IFBENCH.register("words:prime_lengths")
def prime_lengths(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every word (whitespace split after deleting ASCII punctuation) has a prime length up to 97."""
    return all(len(word) in _PRIMES for word in drop_punctuation(response).split())


@functools.cache
def _require_tagger() -> None:
    """The POS tagger's model must be installed; offline there is no other source for it."""
    nltk_data.require(TAGGER_RESOURCE)


@IFBENCH.register("words:start_verb")
def start_verb(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The first ``word_tokenize`` token gets a verb tag (VB, VBD, VBG, VBN, VBP, VBZ) from NLTK's
    averaged perceptron tagger, tagging the whole response. Without the tagger's data this raises
    :class:`~jurist.rules.nltk_data.MissingNltkData` rather than guess."""
    _require_tagger()
    nltk = nltk_data.full_nltk()

    tokens = nltk_data.word_tokenize(response)
    return bool(tokens) and "VB" in str(nltk.pos_tag(tokens)[0][1])


@IFBENCH.register("words:repeats")
def repeats(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No word occurs more than ``small_n`` times (lower-cased, ASCII punctuation deleted, so "don't"
    and "dont" are the same word, and "the" counts like any other)."""
    limit = count_arg(kwargs, "small_n")
    counts = Counter(drop_punctuation(response.lower()).split())
    return all(count <= limit for count in counts.values())


@IFBENCH.register("words:odd_even_syllables")
def odd_even_syllables(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Adjacent words alternate odd and even syllable counts, by ``syllapy.count`` (which gives 0, even,
    for words with digits); words are split after deleting ASCII punctuation and lower-casing."""
    import syllapy

    parities = [syllapy.count(word) % 2 for word in drop_punctuation(response).lower().split()]
    return all(a != b for a, b in pairwise(parities))


@register_both("words:last_first", guard=True)
def last_first(
    response: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    *,
    split: Splitter = split_sentences,
    guard: bool = False,
) -> bool:
    """Each sentence's last word equals the next one's first word, case-insensitively. Only the outer
    ASCII punctuation of the sentence is trimmed, so "end." then "End," differ. A sentence with no word
    (a lone "!") makes ``c94da02`` fail with an IndexError, and this raise; ``db69a6f`` fails it."""
    sentences = split(response)
    for current, following in pairwise(sentences):
        last_words = current.rstrip(PUNCT_SPACE).split()
        first_words = following.lstrip(PUNCT_SPACE).split()
        if not last_words or not first_words:
            return guarded_index(
                guard, "words:last_first on a sentence without words: the reference fails here"
            )
        if last_words[-1].lower() != first_words[0].lower():
            return False
    return True


@IFBENCH.register("words:paragraph_last_first")
def paragraph_last_first(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Each non-blank line starts and ends with the same whitespace word, lower-cased, after trimming
    the line's outer ASCII punctuation (inner punctuation stays: "hello, world hello" fails)."""
    for line in response.split("\n"):
        words = line.strip().lower().strip(PUNCT_SPACE).split()
        if words and words[0] != words[-1]:
            return False
    return True


@IFBENCH.register("words:no_consecutive")
def no_consecutive(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No two adjacent words share their first character (lower-cased, ASCII punctuation deleted;
    digits and symbols count as characters too)."""
    words = drop_punctuation(response.lower()).split()
    return all(a[0] != b[0] for a, b in pairwise(words))


@IFBENCH.register("words:keywords_specific_position")
def keywords_specific_position(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Token ``m`` of sentence ``n`` (both 1-based; sentences by the reference's regex split, tokens by
    NLTK's ``word_tokenize``) is exactly ``keyword``, case-sensitively. The reference draws ``n``, ``m``
    or ``keyword`` at random when falsy, so those cannot be scored."""
    word = text_arg(kwargs, "keyword", empty_is_missing=True).strip()
    sentence_no = kwargs.get("n")
    word_no = kwargs.get("m")
    if not sentence_no or not word_no:
        raise UndeterminedArgument(
            f"n={sentence_no!r}, m={word_no!r}: the reference would draw them at random"
        )
    sentences = split_sentences(response)
    if len(sentences) < sentence_no:
        return False
    tokens = nltk_data.word_tokenize(sentences[sentence_no - 1])
    return bool(len(tokens) >= word_no and tokens[word_no - 1] == word)


@IFBENCH.register("words:words_position")
def words_position(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The second and the second-to-last ``word_tokenize`` tokens of the whole response are both exactly
    ``keyword`` (punctuation is a token: "Hi, vibrant" has "," second)."""
    word = text_arg(kwargs, "keyword").strip()
    tokens = nltk_data.word_tokenize(response)
    return len(tokens) >= 2 and tokens[1] == tokens[-2] == word
