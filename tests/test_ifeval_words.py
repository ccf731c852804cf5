"""Hand-written cases for the keyword, language, length and case checkers: the reference's semantics at
the edges (boundary counts, regex keywords, unicode, blank answers), and repeatable argument defaults."""

from __future__ import annotations

import importlib.util
import re
from types import MappingProxyType
from typing import Any

import pytest

from jurist.rules.evaluate import check_instruction
from jurist.rules.ifeval_checks import IFEVAL
from jurist.rules.ifeval_common import RELATIONS, count_argument, relation_argument
from jurist.rules.ifeval_words import frequency_letter


def check(instruction_id: str, response: str, **kwargs: Any) -> bool:
    """The checker alone, with read-only arguments (a checker must not mutate them)."""
    return IFEVAL[instruction_id](response, MappingProxyType(kwargs), "the prompt")


def strict_loose(instruction_id: str, response: str, **kwargs: Any) -> tuple[bool, bool]:
    result = check_instruction(IFEVAL[instruction_id], instruction_id, response, kwargs, "the prompt")
    return result.strict, result.loose


# -- keywords --------------------------------------------------------------------------------------------
def test_existence_is_a_case_blind_regex_search_without_word_boundaries() -> None:
    assert check("keywords:existence", "We threw a PARTY.", keywords=["art", "Party"])
    assert not check("keywords:existence", "We threw a party.", keywords=["party", "cake"])
    assert check("keywords:existence", "What colour is it?", keywords=["colou?r"])
    assert check("keywords:existence", "Un CAFÉ, s'il vous plaît.", keywords=["café"])
    assert check("keywords:existence", "I like cats.", keywords=["C+"])  # a pattern, not the text "C+"
    with pytest.raises(re.error):
        check("keywords:existence", "I run *nix.", keywords=["*nix"])
    assert strict_loose("keywords:existence", "   \n", keywords=[" "]) == (False, False)


@pytest.mark.parametrize(
    ("relation", "count", "followed"),
    [("at least", 2, False), ("at least", 3, True), ("at least", 4, True)]
    + [("less than", 2, True), ("less than", 3, False), ("less than", 4, False)],
)
def test_keyword_frequency_boundaries(relation: str, count: int, followed: bool) -> None:
    response = " ".join(["Dog"] * count) + " and cats"
    assert check("keywords:frequency", response, keyword=" dog ", frequency=3, relation=relation) is followed


def test_keyword_frequency_counts_inside_words_and_rejects_other_relations() -> None:
    assert check("keywords:frequency", "dogma, hotdog, dog", keyword="dog", frequency=3, relation="at least")
    with pytest.raises(ValueError, match="relation"):
        check("keywords:frequency", "dog", keyword="dog", frequency=1, relation="at most")


def test_forbidden_words_match_whole_words_only() -> None:
    assert check("keywords:forbidden_words", "A party at the gallery.", forbidden_words=["art"])
    assert not check("keywords:forbidden_words", "Modern ART, mostly.", forbidden_words=["art", "art"])
    assert not check("keywords:forbidden_words", "Je suis naïve.", forbidden_words=["NAÏVE"])
    assert check("keywords:forbidden_words", "", forbidden_words=["art"])  # the checker alone...
    assert strict_loose("keywords:forbidden_words", "", forbidden_words=["art"]) == (False, False)  # ...blank


@pytest.mark.parametrize(
    ("relation", "text", "followed"),
    [("at least", "Aa", False), ("at least", "aAa", True)]
    + [("less than", "Aa", True), ("less than", "AAA", False)],
)
def test_letter_frequency_counts_both_cases(relation: str, text: str, followed: bool) -> None:
    args = {"letter": "A", "let_frequency": 3, "let_relation": relation}
    assert check("keywords:letter_frequency", text, **args) is followed


def test_letter_frequency_counts_the_lower_case_of_the_response() -> None:
    # "İ".lower() is "i" plus a combining dot, so a capital dotted I counts as an "i".
    assert check("keywords:letter_frequency", "İİ", letter="i", let_frequency=2, let_relation="at least")
    with pytest.raises(TypeError):  # upstream's ord() of a two-character lower case
        check("keywords:letter_frequency", "x", letter="İ", let_frequency=1, let_relation="at least")


def test_a_letter_outside_a_to_z_is_a_seeded_draw() -> None:
    for bad in ("#", "!", "ab", "é", " ", None):
        letter = frequency_letter(bad)
        assert len(letter) == 1 and "a" <= letter <= "z" and frequency_letter(bad) == letter
    assert frequency_letter("#") != frequency_letter("!")
    assert frequency_letter("Q") == "q"
    k_heavy = "kkkk" + "#" * 10
    assert check("keywords:letter_frequency", k_heavy, letter="#", let_frequency=4, let_relation="at least")


# -- language --------------------------------------------------------------------------------------------
def test_response_language_uses_seeded_langdetect() -> None:
    french = "Bonjour, je m'appelle Marie et j'habite à Paris depuis dix ans."
    assert check("language:response_language", french, language="fr")
    assert not check("language:response_language", french, language="en")
    assert all(check("language:response_language", french, language="fr") for _ in range(5))


def test_text_without_language_features_counts_as_followed() -> None:
    assert check("language:response_language", "12345 !!! 😀", language="hi")
    assert strict_loose("language:response_language", "12345 !!! 😀", language="hi") == (True, True)


def test_a_language_outside_the_reference_list_is_an_error() -> None:
    with pytest.raises(ValueError, match="'nl'"):
        check("language:response_language", "Dit is een Nederlandse zin.", language="nl")
    result = check_instruction(IFEVAL["language:response_language"], "x", "Hallo", {"language": "nl"}, "")
    assert (result.strict, result.loose) == (False, False) and result.error and "ValueError" in result.error


# -- length constraints ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("relation", "threshold", "followed"),
    [("at least", 4, True), ("at least", 5, False), ("less than", 4, False), ("less than", 5, True)],
)
def test_sentence_count_is_punkt_s(relation: str, threshold: int, followed: bool) -> None:
    text = "Mr. Smith went home. He slept! Did he? Yes."  # Punkt keeps "Mr." inside: four sentences
    got = check("length_constraints:number_sentences", text, num_sentences=threshold, relation=relation)
    assert got is followed


def test_paragraphs_are_split_by_three_stars() -> None:
    def paragraphs(text: str, n: int) -> bool:
        return check("length_constraints:number_paragraphs", text, num_paragraphs=n)

    assert paragraphs("One.\n***\nTwo **bold**.\n***\nThree.", 3)
    assert paragraphs("***\nOne.\n***\nTwo.\n***", 2)  # blank ends do not count
    assert not paragraphs("One.\n***\n\n***\nTwo.", 2)  # a blank middle fails
    assert not paragraphs("One.\n******\nTwo.", 2)  # six stars are two dividers around a blank
    assert not paragraphs("One.\n***\nTwo.", 3)


@pytest.mark.parametrize(
    ("relation", "threshold", "followed"),
    [("at least", 7, True), ("at least", 8, False), ("less than", 7, False), ("less than", 8, True)],
)
def test_words_are_runs_of_word_characters(relation: str, threshold: int, followed: bool) -> None:
    text = "Don't stop: naïve café, 東京 2024!"  # Don, t, stop, naïve, café, 東京, 2024
    got = check("length_constraints:number_words", text, num_words=threshold, relation=relation)
    assert got is followed


def test_word_count_is_nltk_s_so_marks_stay_inside_words_with_nltk_3_10() -> None:
    """NLTK 3.10 runs ``RegexpTokenizer`` on the ``regex`` engine (module ``nltk.redos``), whose ``\\w``
    keeps Devanagari vowel signs in the word; older NLTK used ``re``, which cuts "प्रिय" into three."""
    words = 2 if importlib.util.find_spec("nltk.redos") else 6
    text = "प्रिय मित्र"
    assert check("length_constraints:number_words", text, num_words=words, relation="at least")
    assert not check("length_constraints:number_words", text, num_words=words + 1, relation="at least")


def test_nth_paragraph_first_word() -> None:
    def first(text: str, n: int, nth: int, word: str) -> bool:
        kwargs = {"num_paragraphs": n, "nth_paragraph": nth, "first_word": word}
        return check("length_constraints:nth_paragraph_first_word", text, **kwargs)

    text = 'Intro here.\n\n"Second," she said.\n\nThird one.'
    assert first(text, 3, 2, "second") and first(text, 3, 2, "SECOND") and first(text, 3, 1, "intro")
    assert not first(text, 2, 2, "second")  # wrong paragraph count
    assert not first(text, 3, 3, "third.")  # the word is compared without its punctuation
    assert first("Intro.\n\n\nSecond\n\n", 2, 2, "second")  # a third newline stays inside the piece
    # Upstream's quirk: blank pieces are not counted, but the nth is picked among all pieces.
    assert not first("\n\nAlpha.\n\nBeta.", 2, 1, "alpha")
    assert not first("Alpha.", 2, 2, "alpha")  # too few paragraphs for the nth


# -- change case -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("relation", "threshold", "followed"),
    [("at least", 6, True), ("at least", 7, False), ("less than", 6, False), ("less than", 7, True)],
)
def test_capital_words_are_upper_case_nltk_tokens(relation: str, threshold: int, followed: bool) -> None:
    text = "HELLO WORLD and U.S. things, I said COVID-19 ÉCOLE"  # HELLO WORLD U.S. I COVID-19 ÉCOLE
    kwargs = {"capital_frequency": threshold, "capital_relation": relation}
    assert check("change_case:capital_word_frequency", text, **kwargs) is followed


def test_english_capital_and_lowercase() -> None:
    assert check("change_case:english_capital", "THIS IS AN ENGLISH SENTENCE ABOUT THE WEATHER TODAY.")
    assert not check("change_case:english_capital", "THIS IS AN ENGLISH SENTENCE ABOUT THE WEATHEr TODAY.")
    assert not check("change_case:english_capital", "ЭТО ПРЕДЛОЖЕНИЕ НА РУССКОМ ЯЗЫКЕ О ПОГОДЕ СЕГОДНЯ.")
    assert not check("change_case:english_capital", "1234 !!!")  # no cased character: not upper
    assert check("change_case:english_capital", "ADMIN@EXAMPLE.COM")  # upper, and no language features
    assert check("change_case:english_lowercase", "this is an english sentence about the weather today.")
    assert not check("change_case:english_lowercase", "This is an english sentence about the weather.")
    assert not check("change_case:english_lowercase", "das ist ein deutscher satz über das wetter heute.")
    assert check("change_case:english_lowercase", "admin@example.com")


def test_loose_mode_forgives_a_capitalised_first_line() -> None:
    text = "Sure! Here Is My Answer:\nthis is an english sentence about the weather today."
    assert strict_loose("change_case:english_lowercase", text) == (False, True)


# -- defaults for missing arguments ----------------------------------------------------------------------
def test_missing_thresholds_and_relations_are_repeatable_draws() -> None:
    def num_words(**kwargs: Any) -> Any:
        return count_argument(kwargs, "num_words", "length_constraints:number_words", 100, 500)

    drawn = num_words()
    assert 100 <= drawn <= 500 and num_words(num_words=-3) == drawn and num_words(num_words=0) == 0
    assert relation_argument({}, "relation", "x") in RELATIONS
    assert relation_argument({}, "relation", "x") == relation_argument({}, "relation", "x")
    with pytest.raises(ValueError):
        relation_argument({"relation": "at most"}, "relation", "x")


def test_every_checker_runs_without_arguments_and_repeats_itself() -> None:
    response = 'SECTION 1\n* point\n- point\n<<Title>> *hi* [name]\n\nP.S. "done" My answer is yes.'
    for instruction_id, checker in IFEVAL.items():
        if instruction_id == "combination:repeat_prompt":
            with pytest.raises(ValueError, match="prompt_to_repeat"):
                checker(response, MappingProxyType({}), "the prompt")
            continue
        outcomes = {checker(response, MappingProxyType({}), "the prompt") for _ in range(3)}
        assert len(outcomes) == 1 and isinstance(outcomes.pop(), bool), instruction_id
