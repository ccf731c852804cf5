"""IFEval checkers that count words, letters, sentences and paragraphs, or detect the language.

Families ``keywords``, ``language``, ``length_constraints`` and ``change_case``. Each function repeats
what the reference evaluator's checker computes, quirks included (keywords are regular expressions,
paragraph counts ignore blank ends...), because scores are only comparable when the rules are the same.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any

from jurist.rules.ifeval_common import (
    IFEVAL,
    LANGUAGE_CODES,
    compare,
    count_argument,
    fallback_words,
    language_is,
    relation_argument,
    seeded,
)
from jurist.rules.nltk_data import regexp_tokenizer, sent_tokenize, word_tokenize

# -- keywords --------------------------------------------------------------------------------------------


@IFEVAL.register("keywords:existence")
def keywords_existence(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every keyword is found, ignoring case. Upstream searches each keyword as a regular expression with
    no word boundary, so "art" is found inside "party"; "colou?r" finds "color", and "*nix" is a bad
    pattern that raises."""
    keywords = kwargs.get("keywords") or fallback_words("keywords:existence", "keywords", 2)
    return all(re.search(keyword, response, flags=re.IGNORECASE) for keyword in sorted(keywords))


@IFEVAL.register("keywords:frequency")
def keywords_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """How often the keyword (a regular expression, ignoring case, inside words too) occurs, against
    ``frequency`` (drawn from 1..3 when missing) by ``relation``."""
    keyword = kwargs.get("keyword")
    keyword = keyword.strip() if keyword else fallback_words("keywords:frequency", "keyword", 1)[0]
    frequency = count_argument(kwargs, "frequency", "keywords:frequency", 1, 3)
    relation = relation_argument(kwargs, "relation", "keywords:frequency")
    return compare(len(re.findall(keyword, response, flags=re.IGNORECASE)), relation, frequency)


@IFEVAL.register("keywords:forbidden_words")
def keywords_forbidden_words(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """None of the words occurs as a whole word (``\\b`` on both sides, ignoring case); each word is
    still a regular expression."""
    words = kwargs.get("forbidden_words")
    chosen = sorted(set(words)) if words else fallback_words("keywords:forbidden_words", "forbidden_words", 2)
    return not any(re.search(rf"\b{word}\b", response, flags=re.IGNORECASE) for word in chosen)


def frequency_letter(letter: Any) -> str:
    """The letter ``keywords:letter_frequency`` counts, lower case.

    Upstream keeps the given letter only when it is one character whose lower case lies in a..z;
    otherwise (``"#"``, ``"!"``, ``"ab"``, missing) it counts ``random.choice(string.ascii_letters)``,
    lowered: a different letter on every run. jurist draws that letter from a generator seeded by
    ``"keywords:letter_frequency/letter/<the given letter>"``, so "#" always stands for the same letter.
    A character whose lower case is two characters (``"İ"``) makes upstream's ``ord`` raise; so does it
    here.
    """
    if not letter or len(letter) > 1 or not 97 <= ord(letter.lower()) <= 122:
        return seeded("keywords:letter_frequency", "letter", str(letter)).choice(string.ascii_letters).lower()
    return str(letter).strip().lower()


@IFEVAL.register("keywords:letter_frequency")
def keywords_letter_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """How often the letter occurs in the lower-cased response, against ``let_frequency`` (1..10 when
    missing) by ``let_relation``."""
    letter = frequency_letter(kwargs.get("letter"))
    frequency = count_argument(kwargs, "let_frequency", "keywords:letter_frequency", 1, 10)
    relation = relation_argument(kwargs, "let_relation", "keywords:letter_frequency")
    return compare(Counter(response.lower())[letter], relation, frequency)


# -- language --------------------------------------------------------------------------------------------


@IFEVAL.register("language:response_language")
def response_language(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """langdetect names the requested language for the whole response (True when it can name none).
    A code outside IFEval's 30 is an error, as upstream's description lookup raises on it."""
    language = kwargs.get("language")
    if language is None:
        language = seeded("language:response_language", "language").choice(LANGUAGE_CODES)
    if language not in LANGUAGE_CODES:
        raise ValueError(f"language {language!r} is not one of IFEval's codes {LANGUAGE_CODES}")
    return language_is(response, language)


# -- length constraints ----------------------------------------------------------------------------------


@IFEVAL.register("length_constraints:number_sentences")
def number_sentences(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """NLTK Punkt's English sentence count against ``num_sentences`` (1..20 when missing)."""
    threshold = count_argument(kwargs, "num_sentences", "length_constraints:number_sentences", 1, 20)
    relation = relation_argument(kwargs, "relation", "length_constraints:number_sentences")
    return compare(len(sent_tokenize(response)), relation, threshold)


def starred_paragraphs(response: str) -> int | None:
    """Paragraphs split by ``***`` (with one optional space or newline either side); blank pieces at
    either end do not count, and a blank piece in the middle makes the layout invalid (None)."""
    pieces = re.split(r"\s?\*\*\*\s?", response)
    count = len(pieces)
    for index, piece in enumerate(pieces):
        if not piece.strip():
            if index not in (0, len(pieces) - 1):
                return None
            count -= 1
    return count


@IFEVAL.register("length_constraints:number_paragraphs")
def number_paragraphs(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly ``num_paragraphs`` (1..5 when missing) paragraphs separated by ``***``."""
    wanted = count_argument(kwargs, "num_paragraphs", "length_constraints:number_paragraphs", 1, 5)
    count = starred_paragraphs(response)
    return count is not None and count == wanted


@functools.lru_cache(maxsize=1)
def _word_runs() -> Any:
    """The reference's word counter, NLTK's ``RegexpTokenizer(r"\\w+")``, built once.

    Not ``re.findall``: NLTK 3.10 compiles tokenizer patterns with the third-party ``regex`` engine,
    whose ``\\w`` keeps combining marks inside a word ("प्रिय" is one word; stdlib ``re`` makes it
    three). Calling NLTK keeps jurist equal to the reference run with the same NLTK.
    """
    return regexp_tokenizer(r"\w+")


@IFEVAL.register("length_constraints:number_words")
def number_words(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Runs of word characters ("don't" is two words, a number is a word) against ``num_words``
    (100..500 when missing)."""
    threshold = count_argument(kwargs, "num_words", "length_constraints:number_words", 100, 500)
    relation = relation_argument(kwargs, "relation", "length_constraints:number_words")
    return compare(len(_word_runs().tokenize(response)), relation, threshold)


def leading_word(paragraph: str) -> str:
    """The first word lower-cased: quotes stripped from its front, cut at the first ``.,?!'"``."""
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    kept = []
    for char in word:
        if char in ".,?!'\"":
            break
        kept.append(char.lower())
    return "".join(kept)


@IFEVAL.register("length_constraints:nth_paragraph_first_word")
def nth_paragraph_first_word(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly ``num_paragraphs`` non-blank paragraphs split by ``\\n\\n``, and paragraph
    ``nth_paragraph`` starts with ``first_word`` (ignoring case and trailing punctuation).

    Upstream's quirk, kept: the count skips blank pieces, but the nth paragraph is taken from the pieces
    *including* blank ones, so a blank piece there fails the check.
    """
    instruction = "length_constraints:nth_paragraph_first_word"
    wanted = count_argument(kwargs, "num_paragraphs", instruction, 1, 5)
    nth = kwargs.get("nth_paragraph")
    if nth is None or nth <= 0 or nth > wanted:
        nth = seeded(instruction, "nth_paragraph").randint(1, wanted + 1)
    first_word = kwargs.get("first_word")
    if first_word is None:
        first_word = fallback_words(instruction, "first_word", 1)[0]
    pieces = response.split("\n\n")
    count = sum(1 for piece in pieces if piece.strip())
    if nth > count:
        return False
    paragraph = pieces[nth - 1].strip()
    if not paragraph:
        return False
    return bool(count == wanted and leading_word(paragraph) == first_word.lower())


# -- change case -----------------------------------------------------------------------------------------


@IFEVAL.register("change_case:capital_word_frequency")
def capital_word_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """NLTK ``word_tokenize`` tokens that are all capitals (``str.isupper``: "U.S." and "COVID-19"
    count, "I" counts) against ``capital_frequency`` (1..20 when missing; a negative value is kept)."""
    frequency = kwargs.get("capital_frequency")
    if frequency is None:
        frequency = seeded("change_case:capital_word_frequency", "capital_frequency").randint(1, 20)
    relation = relation_argument(kwargs, "capital_relation", "change_case:capital_word_frequency")
    capitals = sum(1 for token in word_tokenize(response) if token.isupper())
    return compare(capitals, relation, frequency)


@IFEVAL.register("change_case:english_capital")
def english_capital(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """All cased characters are capitals (and there is one) and langdetect says English. langdetect is
    weak on capitals: an all-capital French sentence can come out as "en"."""
    return response.isupper() and language_is(response, "en")


@IFEVAL.register("change_case:english_lowercase")
def english_lowercase(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """All cased characters are lower case (and there is one) and langdetect says English."""
    return response.islower() and language_is(response, "en")
