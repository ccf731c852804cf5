"""IFBench ``ratio:*`` and ``sentence:*`` checkers: proportions and per-sentence patterns.

Sentences are the 2025-10 reference's regex split (:func:`ifbench_common.split_sentences`) for
``c94da02``, so a sentence "ends with ``.``" only when that character is its last one (the splitter moves
a closing quote in front of the terminator; a closing parenthesis is not moved and opens the next
sentence); ``db69a6f`` splits with Punkt (``split=``, see :func:`ifbench_common.register_both`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from jurist.rules import nltk_data
from jurist.rules.ifbench_common import (
    IFBENCH,
    PUNCT_SPACE,
    Splitter,
    count_arg,
    drop_punctuation,
    register_both,
    split_sentences,
    text_arg,
    word_tokens,
)
from jurist.rules.nltk_data import STOPWORDS_RESOURCE


@functools.cache
def english_stopwords() -> frozenset[str]:
    """NLTK's English stop-word list (the reference's ``stopwords.words('english')``: 198 words in the
    current NLTK data), found offline or :class:`~jurist.rules.nltk_data.MissingNltkData`; there is no
    built-in copy, because a different list would silently change scores."""
    nltk_data.require(STOPWORDS_RESOURCE)
    nltk_data.full_nltk()  # nltk.corpus imports from the nltk.tokenize package
    from nltk.corpus import stopwords

    return frozenset(stopwords.words("english"))


def _endings(response: str, split: Splitter) -> list[str]:
    """The last character of each sentence (the regex split cuts "(Hi.) Ok." as "(Hi." and ") Ok.": both
    end in ".")."""
    return [sentence[-1:] for sentence in split(response)]


@register_both("ratio:stop_words", sentences=False, guard=True)
def stop_words(response: str, kwargs: Mapping[str, Any], prompt: str, *, guard: bool = False) -> bool:
    """Stop words are at most ``percentage`` % of the ``\\w+`` words (matched lower-cased). A response
    without a word character divides by zero in ``c94da02``, and here; ``db69a6f`` fails it."""
    limit = count_arg(kwargs, "percentage")
    stopwords = english_stopwords()
    words = word_tokens(response)
    if guard and not words:
        return False
    share = len([word for word in words if word.lower() in stopwords]) / len(words) * 100
    return bool(share <= limit)


@register_both("ratio:sentence_type")
def sentence_type(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """Sentences ending in ``.`` are exactly twice those ending in ``?`` (0 and 0 passes too)."""
    endings = _endings(response, split)
    return endings.count(".") == 2 * endings.count("?")


@register_both("ratio:sentence_balance")
def sentence_balance(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """As many sentences end in ``.`` as in ``?`` and as in ``!`` (0, 0, 0 passes too)."""
    endings = _endings(response, split)
    return endings.count(".") == endings.count("?") == endings.count("!")


@register_both("ratio:overlap", sentences=False, guard=True)
def overlap(response: str, kwargs: Mapping[str, Any], prompt: str, *, guard: bool = False) -> bool:
    """The share of the response's distinct *character* trigrams that also occur in ``reference_text``
    is within ``percentage`` ± 2 points, bounds included. Under three characters divides by zero, as in
    ``c94da02``; ``db69a6f`` fails it."""
    target = count_arg(kwargs, "percentage")
    reference = kwargs.get("reference_text")
    if reference is None:
        raise TypeError("ratio:overlap needs reference_text (the reference fails without it)")
    own = {response[i : i + 3] for i in range(len(response) - 2)}
    theirs = {reference[i : i + 3] for i in range(len(reference) - 2)}
    if guard and not own:
        return False
    share = len(own & theirs) / len(own)
    return bool(target - 2 <= share * 100 <= target + 2)


@register_both("ratio:sentence_words")
def sentence_words(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """Exactly three sentences of the same length in characters. The instruction also asks for all
    different words; the reference does not check that, so neither does this."""
    sentences = split(response)
    return len(sentences) == 3 and len({len(sentence) for sentence in sentences}) == 1


@register_both("sentence:alliteration_increment")
def alliteration_increment(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """Each sentence's alliteration score is higher than the previous one's (the first may be 0). The
    score adds 2 for a pair of adjacent words with the same first character and 1 for each further word
    extending that run; words are lower-cased and stripped of leading ASCII punctuation only."""
    previous = -1
    for sentence in split(response):
        words = [word.lstrip(PUNCT_SPACE) for word in sentence.lower().split()]
        words = [word for word in words if word]
        score, in_run = 0, False
        for left, right in pairwise(words):
            if left[0] == right[0]:
                score += 1 if in_run else 2
                in_run = True
            else:
                in_run = False
        if score <= previous:
            return False
        previous = score
    return True


@IFBENCH.register("sentence:keyword")
def keyword(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """``word`` occurs, case-insensitively and as a substring, in sentence number ``N`` (1-based). The
    reference indexes with ``N - 1``, so ``N=0`` inspects the last sentence. (``c94da02``; ``db69a6f``'s
    whole-word match is :func:`ifbench_db69a6f.keyword`.)"""
    word = text_arg(kwargs, "word", empty_is_missing=True)
    position = count_arg(kwargs, "N")
    sentences = split_sentences(response)
    if len(sentences) < position:
        return False
    return word.lower() in sentences[int(position - 1)].lower()


@register_both("sentence:increment")
def increment(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """Each sentence has exactly ``small_n`` more whitespace words than the one before, counted after
    ASCII punctuation is deleted (so "well-known" is one word and a lone "-" none)."""
    step = count_arg(kwargs, "small_n")
    sentences = split(response)
    previous = len(drop_punctuation(sentences[0]).split())
    for sentence in sentences[1:]:
        count = len(drop_punctuation(sentence).split())
        if count != previous + step:
            return False
        previous = count
    return True
