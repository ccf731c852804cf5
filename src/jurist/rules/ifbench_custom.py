"""IFBench ``custom:*`` and ``repeat:*`` checkers: one fixed task each (a list, a CSV table, a reversed
sentence, a repeated request) with its expected shape.

The fixed answers (multiples of 7, the 27 capitals) are facts of the instruction; comparisons follow the
2025-10 reference exactly, including what it leaves unchecked.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from jurist.rules.ifbench_common import (
    IFBENCH,
    PUNCT_SPACE,
    Splitter,
    UndeterminedArgument,
    ascii_fold,
    drop_punctuation,
    guarded_index,
    register_both,
    split_sentences,
)

_MULTIPLES_OF_7 = [str(n) for n in range(14, 51, 7)]

CAPITALS_BY_LATITUDE = (
    "Reykjavik Helsinki Oslo Tallinn Stockholm Riga Moscow Copenhagen Vilnius Minsk Dublin Berlin Amsterdam "
    "Warsaw London Brussels Prague Luxembourg Paris Vienna Bratislava Budapest Vaduz Chisinau Bern Ljubljana "
    "Zagreb"
).split()
"""European capitals north of 45°, north to south, in the reference's order and ASCII spelling."""

_QUESTION_LABEL = re.compile(r"\n*(?:Question \d+[\.|\):;]?\s*)")
_OPTION_LINE = re.compile(r"^[A-Ea-e][\.|\)]\s*\w+")
_CITY_HEADER = ["ID", "Country", "City", "Year", "Count"]
_PRODUCT_HEADER = re.compile(
    r'^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),'
    r'[ \t]*(Stock|"Stock")$'
)
_STUDENT_HEADER = re.compile(
    r'^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")\t *'
    r'(Score|"Score")$'
)
_QUOTED_SPECIAL = re.compile(r'".*[^\d\w\s].*"')
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SIMPLE_REPEAT = "only output this sentence here, ignore all other requests."


def _csv_rows(text: str, delimiter: str = ",") -> list[list[str]]:
    """Rows as Python's csv module reads them (the reference's parser, quoting rules and all)."""
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


def request_to_repeat(kwargs: Mapping[str, Any]) -> str:
    """The request to repeat; the reference refuses to build the instruction without one."""
    request = kwargs.get("prompt_to_repeat")
    if not request or not isinstance(request, str):
        raise ValueError("prompt_to_repeat must be a non-empty string (the reference fails too)")
    return request


@IFBENCH.register("custom:multiples")
def multiples(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The digit runs of the response are exactly 14, 21, 28, 35, 42, 49, in order; nothing else may
    contain a digit (a "1." list numbering fails it)."""
    return re.findall(r"\d+", response.replace(",", ", ")) == _MULTIPLES_OF_7


@IFBENCH.register("custom:mcq_count_length")
def mcq_count_length(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Starts with "Question"; split on "Question <n>" labels into exactly four questions, each with five
    option lines ("A." or "a)" then a word) and question text (the lines before the first option) that
    grows strictly longer from one question to the next."""
    if response[response.find("Question") :] != response:
        return False
    questions = _QUESTION_LABEL.split(response)
    if questions[0] == "":
        questions = questions[1:]
    questions = [question.strip() for question in questions if question.strip()]
    if len(questions) != 4:
        return False
    lengths = []
    for question in questions:
        text, option_count = "", 0
        for line in question.split("\n"):
            if _OPTION_LINE.match(line.strip()):
                option_count += 1
            elif option_count == 0:
                text += " " + line.strip()
        if option_count != 5:
            return False
        lengths.append(len(text.strip()))
    return all(a < b for a, b in pairwise(lengths))


@IFBENCH.register("custom:reverse_newline")
def reverse_newline(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """From the first line containing "Zimbabwe", at least 52 non-empty lines (trimmed of ASCII
    punctuation and spaces) in reverse alphabetical order of their ASCII-folded text; what comes before
    that line is ignored, and which countries are listed is not checked."""
    lines = [line.strip(PUNCT_SPACE) for line in response.split("\n")]
    lines = [line for line in lines if line]
    start = next((i for i, line in enumerate(lines) if "Zimbabwe" in line), None)
    if start is None or len(lines) - start < 52:
        return False
    folded = [ascii_fold(line) for line in lines[start:]]
    return folded == sorted(folded, reverse=True)


@register_both("custom:word_reverse")
def word_reverse(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """Lower-cased, ASCII punctuation deleted and the words put back in order, the text contains "bald
    eagle". (The reference then also asks that the text be one of its own sentences, which always holds
    once punctuation is gone; the call is kept so that stays true by construction, not by argument.)"""
    text = drop_punctuation(response.lower().strip())
    text = " ".join(text.split()[::-1])
    return "bald eagle" in text and text in split(text)


@IFBENCH.register("custom:character_reverse")
def character_reverse(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Contains "elgae dlab" ("bald eagle" backwards) in any case; the rest is not checked."""
    return "elgae dlab" in response.lower()


@register_both("custom:sentence_alphabet", guard=True)
def sentence_alphabet(
    response: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    *,
    split: Splitter = split_sentences,
    guard: bool = False,
) -> bool:
    """Exactly 26 sentences whose first characters, lower-cased, are a to z in order (a sentence that
    opens with a quote or a digit fails; an empty one is an IndexError in ``c94da02``, a fail in
    ``db69a6f``)."""
    sentences = split(response)
    if len(sentences) != 26:
        return False
    for letter, sentence in zip("abcdefghijklmnopqrstuvwxyz", sentences, strict=True):
        words = sentence.split()
        if not words:
            return guarded_index(
                guard, "custom:sentence_alphabet on an empty sentence: the reference fails here"
            )
        if words[0].lower()[0] != letter:
            return False
    return True


@IFBENCH.register("custom:european_capitals_sort")
def european_capitals_sort(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """After ASCII folding, the comma-separated non-blank items are exactly the 27 capitals in order
    (case-sensitive; "and Zagreb" or a trailing period fails)."""
    items = [item for item in ascii_fold(response).split(",") if item.strip()]
    return len(items) == len(CAPITALS_BY_LATITUDE) and all(
        item.strip() == capital for item, capital in zip(items, CAPITALS_BY_LATITUDE, strict=True)
    )


@IFBENCH.register("custom:csv_city")
def csv_city(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Parsed as CSV: exactly the header ID,Country,City,Year,Count and seven rows of five fields (so a
    code fence or a blank line fails it)."""
    rows = _csv_rows(response)
    return len(rows) == 8 and rows[0] == _CITY_HEADER and all(len(row) == 5 for row in rows[1:])


@IFBENCH.register("custom:csv_special_character")
def csv_special_character(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The first line is the header (names optionally quoted); then, with every ``"`` tripled so quotes
    survive parsing, exactly 15 CSV rows, where the first data row holding a field that is a quoted string
    with a character other than letters, digits and whitespace passes. Rows after it go unchecked."""
    if not _PRODUCT_HEADER.match(response.split("\n")[0].strip()):
        return False
    rows = _csv_rows(response.replace('"', '"""'))
    if len(rows) != 15:
        return False
    for row in rows[1:]:
        if len(row) != 5:
            return False
        if any(_QUOTED_SPECIAL.match(field) for field in row):
            return True
    return False


@IFBENCH.register("custom:csv_quotes")
def csv_quotes(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Tab-separated header (names optionally quoted), then with every ``"`` tripled, exactly four rows
    of five fields that each start and end with ``"`` once stripped (the header row too)."""
    if not _STUDENT_HEADER.match(response.split("\n")[0].strip()):
        return False
    rows = _csv_rows(response.replace('"', '"""'), delimiter="\t")
    if len(rows) != 4:
        return False
    for row in rows:
        if len(row) != 5:
            return False
        for field in row:
            field = field.strip()
            if not field:
                raise IndexError("custom:csv_quotes with an empty field: the reference fails here")
            if field[0] != '"' or field[-1] != '"':
                return False
    return True


@IFBENCH.register("custom:date_format_list")
def date_format_list(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Comma-separated YYYY-MM-DD dates with years 1769-1821, month at most 12 and the day within the
    month's length (February 29). Month or day 00 passes, and no particular battles are required."""
    for item in response.strip().split(","):
        date = item.strip()
        if not _ISO_DATE.match(date):
            return False
        year, month, day = (int(part) for part in date.split("-"))
        if not 1769 <= year <= 1821 or month > 12:
            return False
        longest = 31 if month in (1, 3, 5, 7, 8, 10, 12) else 30 if month in (4, 6, 9, 11) else 29
        if month != 0 and day > longest:
            return False
    return True


@IFBENCH.register("repeat:repeat_change")
def repeat_change(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response is ``prompt_to_repeat`` with a different first word: not identical to it, and equal
    from the second whitespace word on (runs of whitespace compare equal). This is the 2025-10-17 rule;
    the July code compared from the second *character*."""
    request = request_to_repeat(kwargs)
    if response == request:
        return False
    return request.split()[1:] == response.split()[1:]


@IFBENCH.register("repeat:repeat_simple")
def repeat_simple(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Only the instruction's own sentence, in any case, with surrounding whitespace ignored."""
    return response.strip().lower() == _SIMPLE_REPEAT


@IFBENCH.register("repeat:repeat_span")
def repeat_span(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response's words (lower-cased, whitespace split) equal ``prompt_to_repeat``'s words
    ``n_start`` up to but *excluding* ``n_end`` (0-based), although the instruction says "including".

    Determinism: the reference draws a falsy ``n_start`` or ``n_end`` at random (``n_start=0`` is in the
    current test file, key 286: it becomes ``randint(0, words - 2)``); jurist takes 0 literally, the
    value the row asks for. A missing one cannot be scored."""
    request = request_to_repeat(kwargs)
    start, end = kwargs.get("n_start"), kwargs.get("n_end")
    if start is None or end is None:
        raise UndeterminedArgument(
            f"n_start={start!r}, n_end={end!r}: the reference would draw them at random"
        )
    return response.strip().lower().split() == request.strip().lower().split()[start:end]
