"""IFBench ``format:*``, ``custom:*`` and ``repeat:*`` checkers on hand-written edge cases.

Expectations are the 2025-10 reference evaluator's answers, quirks included; an exception class means the
reference raises there too (jurist scores that "not followed").
"""

from __future__ import annotations

from typing import Any

import pytest

from jurist.rules.evaluate import check_instruction
from jurist.rules.ifbench_checks import IFBENCH
from jurist.rules.ifbench_common import UndeterminedArgument
from jurist.rules.ifbench_custom import CAPITALS_BY_LATITUDE


def _mcq(lengths: tuple[int, ...] = (10, 20, 30, 40), options: int = 5, preface: str = "") -> str:
    """Four "Question n:" blocks whose question text has the given lengths, each with lettered options."""
    blocks = []
    for number, length in enumerate(lengths, start=1):
        lines = [f"Question {number}: " + "q" * length] + [f"{'ABCDE'[i]}) option" for i in range(options)]
        blocks.append("\n".join(lines))
    return preface + "\n\n".join(blocks)


AFRICA_TAIL = "\n".join(["Zimbabwe"] + [f"Country {n:02d}" for n in range(98, 47, -1)])
"""52 lines from "Zimbabwe", in descending order."""
STORY = " ".join(f"{letter.upper()}nd so it went." for letter in "abcdefghijklmnopqrstuvwxyz")
CITY_CSV = "ID,Country,City,Year,Count\n" + "\n".join(f'{i},France,"Paris, FR",2020,{i}' for i in range(7))
PRODUCTS = "ProductID,Category,Brand,Price,Stock\n" + "\n".join(f"{i},Toys,Acme,9.99,{i}" for i in range(13))
QUOTED_PRODUCTS = '"ProductID","Category","Brand","Price","Stock"\n' + PRODUCTS.split("\n", 1)[1]
STUDENT_HEAD = '"StudentID"\t"Subject"\t"Grade"\t"Semester"\t"Score"'
STUDENT_ROW = '"1"\t"Math"\t"A"\t"Fall"\t"95"'
STUDENTS_2 = "\n".join([STUDENT_HEAD] + [STUDENT_ROW] * 2)
CAPITALS = ", ".join(CAPITALS_BY_LATITUDE)
REQUEST = "Give me a summary of the book."
SPAN = {"prompt_to_repeat": "Zero one two three four", "n_start": 1, "n_end": 3}

CASES: list[tuple[str, dict[str, Any], str, object]] = [
    # format:parentheses: a correct close after reaching depth 5; a wrong closer resets everything
    ("format:parentheses", {}, "((((()))))", True),
    ("format:parentheses", {}, "(((())))", False),
    ("format:parentheses", {}, "a(b[c{d(e[f]g)h}i]j)k", True),
    ("format:parentheses", {}, "(((((]", False),
    ("format:parentheses", {}, "((((( x", False),
    ("format:parentheses", {}, "(((((x)", True),
    # format:quotes: three nested levels of " and ' (apostrophes count; curly quotes do not)
    ("format:quotes", {}, "\"a 'b \"c\" b' a\"", True),
    ("format:quotes", {}, "\"a 'b' a\"", False),
    ("format:quotes", {}, "\u201ca \u2018b \u201cc\u201d b\u2019 a\u201d", False),
    ("format:quotes", {}, "Tom's \"a 'b' a\" end'", True),
    ("format:quotes", {}, "It's Tom's \"x\" '", False),
    # format:options: text options loosely, letter options exactly
    ("format:options", {"options": "yes/no/maybe"}, "Yes.", True),
    ("format:options", {"options": "yes/no/maybe"}, " maybe! ", True),
    ("format:options", {"options": "yes/no/maybe"}, "Yes, because", False),
    ("format:options", {"options": "a), b), c), d)"}, "a)", True),
    ("format:options", {"options": "a), b), c), d)"}, "a) ", False),
    ("format:options", {"options": "a), b), c), d)"}, "A)", False),
    ("format:options", {"options": "I know or I don't know"}, "I don't know.", True),
    ("format:options", {"options": "I know or I don't know"}, "I know", True),
    ("format:options", {"options": "red, green, blue, or orange"}, "blue", False),
    ("format:options", {}, "yes", UndeterminedArgument),
    # format:newline: as many non-empty lines as words
    ("format:newline", {}, "one\ntwo\nthree", True),
    ("format:newline", {}, "one two\nthree", False),
    ("format:newline", {}, "one two\n \nthree", True),
    ("format:newline", {}, "Hello,\n\n\nworld!", True),
    ("format:newline", {}, "-\nword", True),
    # format:emoji: an emoji closes each sentence, or opens the next one
    ("format:emoji", {}, "Hi \U0001f600. Bye \U0001f389", True),
    ("format:emoji", {}, "Hi. \U0001f600 Bye \U0001f389", True),
    ("format:emoji", {}, "Hi \u2764\ufe0f.", True),
    ("format:emoji", {}, "Hi.", False),
    ("format:emoji", {}, "Hi?! \U0001f600", False),
    ("format:emoji", {}, "Hi \U0001f600?! ok \U0001f600", IndexError),
    # format:line_indent: strictly more leading spaces each line; the reference's blank-line removal skips
    ("format:line_indent", {}, "a\n b\n  c", True),
    ("format:line_indent", {}, "a\n b\n c", False),
    ("format:line_indent", {}, "a\n\n b", True),
    ("format:line_indent", {}, "a\n\n\n b", False),
    ("format:line_indent", {}, "\ta\n\t\tb", False),
    # format:quote_unquote: no adjacent quotes, no quote at the end
    ("format:quote_unquote", {}, '"Carpe diem" means seize the day.', True),
    ("format:quote_unquote", {}, '"A" "B" are letters', False),
    ("format:quote_unquote", {}, 'He said "hi".', False),
    ("format:quote_unquote", {}, "\u201cHi\u201d means hello", True),
    ("format:quote_unquote", {}, "The char '\"' is a quote", True),
    ("format:quote_unquote", {}, "...", IndexError),
    # format:list: the marker twice anywhere
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR a\nSEPARATOR b", True),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR a", False),
    ("format:list", {"sep": "-"}, "well-known long-term", True),
    ("format:list", {"sep": "!?!?"}, "!?!?!?", False),
    # format:thesis: italic thesis then text; <em> is mis-measured by one character
    ("format:thesis", {}, "<i>Thesis.</i> Body.", True),
    ("format:thesis", {}, "<i> </i> Body", False),
    ("format:thesis", {}, "<i>Thesis</i>", False),
    ("format:thesis", {}, "<em></em>x", True),
    ("format:thesis", {}, "<em>T</em>", True),
    ("format:thesis", {}, "*Thesis* Body", False),
    # format:sub-bullets: every stretch after a "*" holds a "-"
    ("format:sub-bullets", {}, "* a\n - b\n* c\n - d", True),
    ("format:sub-bullets", {}, "* a\n* b\n - c", False),
    ("format:sub-bullets", {}, "no bullets at all", True),
    ("format:sub-bullets", {}, "**Bold** - x", False),
    # format:no_bullets_bullets: two sentences, then two "*" lines, then nothing
    ("format:no_bullets_bullets", {}, "One. Two.\n* a\n* b", True),
    ("format:no_bullets_bullets", {}, "One.\n* a\n* b", False),
    ("format:no_bullets_bullets", {}, "One. Two.\n* a", False),
    ("format:no_bullets_bullets", {}, "One. Two.\n* a\n* b\n", False),
    ("format:no_bullets_bullets", {}, "One.\n\nTwo.\n* a\n* b", False),
    ("format:no_bullets_bullets", {}, "One. Two.\n\n* a\n  * b", True),
    # format:title_case: word_tokenize tokens; lower-case starts fail unless one letter long
    ("format:title_case", {}, "The Quick Brown Fox", True),
    ("format:title_case", {}, "A Tale of Two Cities", False),
    ("format:title_case", {}, "Tale Of A City", True),
    ("format:title_case", {}, "NASA And iPhone", True),
    ("format:title_case", {}, "Don't Stop", False),
    ("format:title_case", {}, "**Bold** Title: 2024!", True),
    # format:output_template, format:no_whitespace
    ("format:output_template", {}, "My Answer: x My Conclusion: y Future Outlook: z", True),
    ("format:output_template", {}, "Future Outlook: z\nMy Conclusion: y\nMy Answer: x", True),
    ("format:output_template", {}, "My answer: x My Conclusion: y Future Outlook: z", False),
    ("format:no_whitespace", {}, "abc", True),
    ("format:no_whitespace", {}, "a\u00a0b", False),
    ("format:no_whitespace", {}, "a\u200bb", True),
    # custom:multiples: the digit runs are exactly 14..49 step 7
    ("custom:multiples", {}, "14, 21, 28, 35, 42, 49", True),
    ("custom:multiples", {}, "14,21,28,35,42,49", True),
    ("custom:multiples", {}, "1. 14 21 28 35 42 49", False),
    ("custom:multiples", {}, "7, 14, 21, 28, 35, 42, 49", False),
    # custom:mcq_count_length
    ("custom:mcq_count_length", {}, _mcq(), True),
    ("custom:mcq_count_length", {}, _mcq(preface="Here you go:\n"), False),
    ("custom:mcq_count_length", {}, _mcq(options=4), False),
    ("custom:mcq_count_length", {}, _mcq(lengths=(10, 20, 20, 40)), False),
    ("custom:mcq_count_length", {}, _mcq(lengths=(10, 20, 30)), False),
    # custom:reverse_newline: 52+ lines from "Zimbabwe", reverse-sorted after ASCII folding
    ("custom:reverse_newline", {}, AFRICA_TAIL, True),
    ("custom:reverse_newline", {}, "Here they are:\n\n" + AFRICA_TAIL + "\n---", True),
    ("custom:reverse_newline", {}, AFRICA_TAIL.rsplit("\n", 1)[0], False),
    ("custom:reverse_newline", {}, AFRICA_TAIL.replace("Zimbabwe", "Zimbabwe\nZambia\n\u00c9gypt"), True),
    ("custom:reverse_newline", {}, AFRICA_TAIL + "\nS\u00e3o Tom\u00e9", False),
    ("custom:reverse_newline", {}, AFRICA_TAIL.replace("Country 60", "Country 99"), False),
    # custom:word_reverse, custom:character_reverse
    ("custom:word_reverse", {}, "Eagle bald the is it.", True),
    ("custom:word_reverse", {}, "The bald eagle.", False),
    ("custom:character_reverse", {}, "ELGAE DLAB EHT", True),
    ("custom:character_reverse", {}, "bald eagle", False),
    # custom:sentence_alphabet: 26 sentences, first characters a..z
    ("custom:sentence_alphabet", {}, STORY, True),
    ("custom:sentence_alphabet", {}, STORY.rsplit(" Znd", 1)[0], False),
    ("custom:sentence_alphabet", {}, STORY.replace("And so", '"And so'), False),
    # custom:european_capitals_sort
    ("custom:european_capitals_sort", {}, CAPITALS, True),
    ("custom:european_capitals_sort", {}, CAPITALS.replace("Reykjavik", "Reykjav\u00edk"), True),
    ("custom:european_capitals_sort", {}, CAPITALS.replace(", Zagreb", ", and Zagreb"), False),
    ("custom:european_capitals_sort", {}, CAPITALS + ".", False),
    ("custom:european_capitals_sort", {}, CAPITALS + ",,", True),
    # custom:csv_city, custom:csv_special_character, custom:csv_quotes
    ("custom:csv_city", {}, CITY_CSV, True),
    ("custom:csv_city", {}, CITY_CSV.rsplit("\n", 1)[0], False),
    ("custom:csv_city", {}, "```csv\n" + CITY_CSV + "\n```", False),
    ("custom:csv_special_character", {}, PRODUCTS + '\n13,Toys,"Acme & Co",9.99,1', True),
    ("custom:csv_special_character", {}, PRODUCTS + "\n13,Toys,Acme & Co,9.99,1", False),
    ("custom:csv_special_character", {}, PRODUCTS, False),
    ("custom:csv_special_character", {}, QUOTED_PRODUCTS + '\n1,T,"A-B",1,1', True),
    ("custom:csv_quotes", {}, "\n".join([STUDENT_HEAD] + [STUDENT_ROW] * 3), True),
    ("custom:csv_quotes", {}, STUDENTS_2, False),
    ("custom:csv_quotes", {}, STUDENTS_2 + '\n"1"\tMath\t"A"\t"Fall"\t"95"', False),
    ("custom:csv_quotes", {}, STUDENTS_2 + '\n"1"\t\t"A"\t"Fall"\t"95"', IndexError),
    # custom:date_format_list: 1769-1821, month <= 12, day within the month (00 passes)
    ("custom:date_format_list", {}, "1805-12-02, 1796-04-12", True),
    ("custom:date_format_list", {}, "1805-12-02 and 1796-04-12", False),
    ("custom:date_format_list", {}, "1822-01-01", False),
    ("custom:date_format_list", {}, "1800-02-30", False),
    ("custom:date_format_list", {}, "1800-00-00", True),
    ("custom:date_format_list", {}, "1800-04-31", False),
    ("custom:date_format_list", {}, "1805-12-02,", False),
    # repeat:repeat_change: same words after the first, not identical
    ("repeat:repeat_change", {"prompt_to_repeat": REQUEST}, "Provide me a summary of the book.", True),
    ("repeat:repeat_change", {"prompt_to_repeat": REQUEST}, REQUEST, False),
    ("repeat:repeat_change", {"prompt_to_repeat": REQUEST}, "Give  me a summary of the book.", True),
    ("repeat:repeat_change", {"prompt_to_repeat": REQUEST}, "Provide me a summary of the book. Sure!", False),
    ("repeat:repeat_change", {}, REQUEST, ValueError),
    # repeat:repeat_simple
    ("repeat:repeat_simple", {}, "Only output this sentence here, ignore all other requests.", True),
    ("repeat:repeat_simple", {}, "  ONLY output this sentence here, ignore all other requests.\n", True),
    ("repeat:repeat_simple", {}, "Only output this sentence here, ignore all other requests", False),
    # repeat:repeat_span: words n_start .. n_end - 1, case-insensitive
    ("repeat:repeat_span", SPAN, "one two", True),
    ("repeat:repeat_span", SPAN, "ONE  two", True),
    ("repeat:repeat_span", SPAN, "one two three", False),
    ("repeat:repeat_span", {**SPAN, "n_start": 0}, "zero one two", True),
    ("repeat:repeat_span", {"prompt_to_repeat": "a b c", "n_end": 2}, "a b", UndeterminedArgument),
]  # fmt: skip


@pytest.mark.parametrize(("instruction_id", "kwargs", "response", "expected"), CASES)
def test_reference_semantics(
    instruction_id: str, kwargs: dict[str, Any], response: str, expected: object
) -> None:
    checker = IFBENCH[instruction_id]
    if isinstance(expected, bool):
        assert checker(response, kwargs, "") is expected
    else:
        assert isinstance(expected, type) and issubclass(expected, BaseException)
        with pytest.raises(expected):
            checker(response, kwargs, "")


def test_loose_mode_rescues_a_chatty_first_line_and_markdown() -> None:
    answer = "Here are 6 numbers:\n**14, 21, 28, 35, 42, 49**"
    result = check_instruction(IFBENCH["custom:multiples"], "custom:multiples", answer, {}, "")
    assert (result.strict, result.loose, result.error) == (False, True, None)
    spaced = check_instruction(
        IFBENCH["format:no_whitespace"], "format:no_whitespace", "Answer:\nabc", {}, ""
    )
    assert (spaced.strict, spaced.loose) == (False, True)


def test_a_crash_counts_as_not_followed_and_keeps_the_message() -> None:
    result = check_instruction(IFBENCH["format:quote_unquote"], "format:quote_unquote", "...!", {}, "")
    assert (result.strict, result.loose) == (False, False)
    assert result.error is not None and "IndexError" in result.error
