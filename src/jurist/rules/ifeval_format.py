"""IFEval checkers of layout and fixed phrases: markdown marks, sections, JSON, quotes, endings.

Families ``detectable_content``, ``detectable_format``, ``combination``, ``startend`` and
``punctuation``. The patterns are the reference evaluator's own, kept character for character where a
character changes what counts (``\\s`` that crosses newlines, unescaped user phrases...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from jurist.rules.ifeval_common import IFEVAL, count_argument, text_argument

# -- detectable content ----------------------------------------------------------------------------------


@IFEVAL.register("detectable_content:number_placeholders")
def number_placeholders(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``num_placeholders`` (1..4 when missing) bracketed spans ``[...]`` on one line each;
    ``[]`` counts too."""
    wanted = count_argument(kwargs, "num_placeholders", "detectable_content:number_placeholders", 1, 4)
    return bool(len(re.findall(r"\[.*?\]", response)) >= wanted)


_POSTSCRIPT_PATTERNS = {
    "P.P.S": r"\s*p\.\s?p\.\s?s.*$",
    "P.S.": r"\s*p\.\s?s\..*$",
}


@IFEVAL.register("detectable_content:postscript")
def postscript(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The marker occurs anywhere (not only at a line start: the pattern has no anchor), ignoring case.
    "P.S." and "P.P.S" allow one whitespace after each inner dot; any other marker is a regular expression."""
    marker = text_argument(kwargs, "postscript_marker", "detectable_content:postscript", ("P.S.", "P.P.S"))
    pattern = _POSTSCRIPT_PATTERNS.get(marker) or r"\s*" + marker.lower() + r".*$"
    return re.search(pattern, response.lower(), flags=re.MULTILINE) is not None


# -- detectable format -----------------------------------------------------------------------------------


@IFEVAL.register("detectable_format:number_bullet_lists")
def number_bullet_lists(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly ``num_bullets`` (1..5 when missing) lines starting with ``*`` (not ``**``) or ``-``.

    Upstream's patterns, kept: ``-`` lines include ``---`` rules and negative numbers; the leading
    ``\\s*`` may swallow blank lines, and the character after ``*`` may be a newline, so a lone ``*``
    line followed by text is a bullet.
    """
    wanted = count_argument(kwargs, "num_bullets", "detectable_format:number_bullet_lists", 1, 5)
    stars = re.findall(r"^\s*\*[^\*].*$", response, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", response, flags=re.MULTILINE)
    return bool(len(stars) + len(dashes) == wanted)


_CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@IFEVAL.register("detectable_format:constrained_response")
def constrained_response(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """One of the three fixed answers occurs anywhere, with its case and final dot."""
    text = response.strip()
    return any(option in text for option in _CONSTRAINED_OPTIONS)


@IFEVAL.register("detectable_format:number_highlighted_sections")
def number_highlighted_sections(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``num_highlights`` (1..4 when missing) highlights: ``*text*`` spans on one line plus,
    by a second pattern, ``**text**`` spans; blank spans do not count. The first pattern eats ``**``
    as an empty span, so ``**bold**`` counts once but ``***both***`` twice."""
    wanted = count_argument(kwargs, "num_highlights", "detectable_format:number_highlighted_sections", 1, 4)
    single = [span for span in re.findall(r"\*[^\n\*]*\*", response) if span.strip("*").strip()]
    double = [
        span
        for span in re.findall(r"\*\*[^\n\*]*\*\*", response)
        if span.removeprefix("**").removesuffix("**").strip()
    ]
    return bool(len(single) + len(double) >= wanted)


@IFEVAL.register("detectable_format:multiple_sections")
def multiple_sections(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``num_sections`` (1..5 when missing) places where the splitter word (case-sensitive,
    a regular expression) is followed by a number, e.g. "SECTION 2"; text before the first one is not
    a section."""
    instruction = "detectable_format:multiple_sections"
    splitter = text_argument(kwargs, "section_spliter", instruction, ("Section", "SECTION"))
    wanted = count_argument(kwargs, "num_sections", instruction, 1, 5)
    pieces = re.split(r"\s?" + splitter + r"\s?\d+\s?", response)
    return bool(len(pieces) - 1 >= wanted)


@IFEVAL.register("detectable_format:json_format")
def json_format(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response parses as JSON once a Markdown fence is taken off: the prefixes ```` ```json ````,
    ```` ```Json ````, ```` ```JSON ```` and ```` ``` ```` are each removed in turn, then one closing
    fence. Python's parser also takes ``NaN`` and a bare number or string."""
    text = response.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        text = text.removeprefix(fence)
    text = text.removesuffix("```").strip()
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@IFEVAL.register("detectable_format:title")
def title(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """A ``<<title>>`` on one line with something besides brackets and spaces inside; the match is
    greedy, so ``<<>> and <<>>`` on one line is one non-blank title."""
    spans = re.findall(r"<<[^\n]+>>", response)
    return any(span.lstrip("<").rstrip(">").strip() for span in spans)


# -- combination -----------------------------------------------------------------------------------------


@IFEVAL.register("combination:two_responses")
def two_responses(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Two different non-blank answers separated by ``******``; a blank piece is allowed only before
    the first or after the last separator."""
    pieces = response.split("******")
    answers = []
    for index, piece in enumerate(pieces):
        if piece.strip():
            answers.append(piece)
        elif index not in (0, len(pieces) - 1):
            return False
    return len(answers) == 2 and answers[0].strip() != answers[1].strip()


@IFEVAL.register("combination:repeat_prompt")
def repeat_prompt(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response starts with ``prompt_to_repeat`` (its argument, not the whole prompt), ignoring case
    and surrounding whitespace. Upstream refuses to build the instruction without it."""
    to_repeat = kwargs.get("prompt_to_repeat")
    if not to_repeat:
        raise ValueError("combination:repeat_prompt needs prompt_to_repeat")
    return bool(response.strip().lower().startswith(to_repeat.strip().lower()))


# -- start and end ---------------------------------------------------------------------------------------


@IFEVAL.register("startend:end_checker")
def end_checker(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response ends with ``end_phrase``, ignoring case, surrounding whitespace and double quotes
    around the whole response."""
    options = ("Any other questions?", "Is there anything else I can help with?")
    phrase = text_argument(kwargs, "end_phrase", "startend:end_checker", options)
    return response.strip().strip('"').lower().endswith(phrase.strip().lower())


@IFEVAL.register("startend:quotation")
def quotation(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The stripped response starts and ends with a straight double quote (a lone ``"`` does not)."""
    text = response.strip()
    return len(text) > 1 and text[0] == '"' and text[-1] == '"'


# -- punctuation -----------------------------------------------------------------------------------------


@IFEVAL.register("punctuation:no_comma")
def no_comma(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No ASCII comma; other scripts' commas (``，``, ``、``, ``،``) are allowed."""
    return "," not in response
