"""Hand-written cases for the layout and phrase checkers (content, format, combination, start/end,
punctuation): the reference's patterns at their edges, markdown, unicode look-alikes, loose mode."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from jurist.rules.evaluate import check_instruction
from jurist.rules.ifeval_checks import IFEVAL


def check(instruction_id: str, response: str, **kwargs: Any) -> bool:
    """The checker alone, with read-only arguments (a checker must not mutate them)."""
    return IFEVAL[instruction_id](response, MappingProxyType(kwargs), "the prompt")


def strict_loose(instruction_id: str, response: str, **kwargs: Any) -> tuple[bool, bool]:
    result = check_instruction(IFEVAL[instruction_id], instruction_id, response, kwargs, "the prompt")
    return result.strict, result.loose


# -- detectable content ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("wanted", "followed"), [(2, True), (3, True), (4, False)])
def test_placeholders_are_bracketed_spans_on_one_line(wanted: int, followed: bool) -> None:
    text = "Dear [name], see [] and [[date]. Not [a\nplaceholder]."  # [name], [], [[date]
    assert check("detectable_content:number_placeholders", text, num_placeholders=wanted) is followed


def test_postscript_markers() -> None:
    def ps(text: str, marker: str) -> bool:
        return check("detectable_content:postscript", text, postscript_marker=marker)

    assert ps("Bye.\n\nP.S. See you.", "P.S.") and ps("bye\np. s. later", " P.S. ")
    assert ps("as the p.s. said", "P.S.")  # not anchored to a line start
    assert not ps("Bye.\nPS see you", "P.S.")
    assert ps("Bye.\nP.P.S. more", "P.P.S") and ps("Bye.\np. p. s more", "P.P.S")
    assert not ps("Bye.\nP.S. only", "P.P.S")
    assert ps("Notes:\nNOTE: this", "Note:")
    assert ps("This is possible.", "P.S")  # any other marker is a regex: "p.s" finds "pos"


# -- detectable format -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("wanted", "followed"), [(3, False), (4, True), (5, False)])
def test_bullets_count_star_and_dash_lines(wanted: int, followed: bool) -> None:
    text = "Intro:\n* one\n  * two\n- three\n**Bold line** is no bullet\n1. nor a number\n-5 degrees"
    assert check("detectable_format:number_bullet_lists", text, num_bullets=wanted) is followed


def test_bullet_pattern_quirks() -> None:
    assert check("detectable_format:number_bullet_lists", "Text\n\n---\n\nMore", num_bullets=1)  # a rule
    assert check("detectable_format:number_bullet_lists", "*\nfollowing text", num_bullets=1)
    assert check("detectable_format:number_bullet_lists", "• one\n• two", num_bullets=0)  # not markdown


def test_constrained_response_needs_the_exact_phrase() -> None:
    assert check("detectable_format:constrained_response", "Well... My answer is maybe. Because.")
    assert not check("detectable_format:constrained_response", "my answer is yes.")
    assert not check("detectable_format:constrained_response", "My answer is yes")
    assert strict_loose("detectable_format:constrained_response", "**My answer is no.**") == (True, True)


@pytest.mark.parametrize(
    ("text", "count"),
    [("*a* and *b*", 2), ("**bold**", 1), ("***both***", 2), ("*a* **b**", 2), ("* *", 0), ("*a\nb*", 0)]
    + [("**", 0), ("*é* *東京*", 2)],
)
def test_highlights(text: str, count: int) -> None:
    def at_least(n: int) -> bool:
        return check("detectable_format:number_highlighted_sections", text, num_highlights=n)

    assert at_least(count) and not at_least(count + 1)


def test_sections_are_splitter_then_number() -> None:
    def sections(text: str, splitter: str, n: int) -> bool:
        return check("detectable_format:multiple_sections", text, section_spliter=splitter, num_sections=n)

    text = "Preface\nSECTION 1\nfoo\nSECTION2\nbar\nSECTION X\nbaz"
    assert sections(text, "SECTION", 2) and not sections(text, "SECTION", 3)
    assert not sections(text, "Section", 1)  # case-sensitive
    assert sections("Day 1: go\nDay 2: rest", " Day ", 2)  # the splitter is stripped


@pytest.mark.parametrize(
    ("text", "followed"),
    [
        ('```json\n{"a": 1}\n```', True),
        ('{"a": [1, 2]}', True),
        ("```JSON\n[1, 2]\n```", True),
        ("```\nnull\n```", True),
        ('"just a string"', True),
        ("NaN", True),
        ('{"a": 1} and more', False),
        ("Here is the JSON:\n```json\n{}\n```", False),
        ("{'a': 1}", False),
    ],
)
def test_json_format(text: str, followed: bool) -> None:
    assert check("detectable_format:json_format", text) is followed


def test_json_after_an_intro_line_passes_loose_only() -> None:
    text = 'Here you go:\n{"a": 1}'
    assert strict_loose("detectable_format:json_format", text) == (False, True)


@pytest.mark.parametrize(
    ("text", "followed"),
    [
        ("<<My Title>>\nbody", True),
        ("<<  >>\nbody", False),
        ("<<a\nb>>", False),
        ("<<>> and <<>>", True),  # one greedy match whose inside is ">> and <<"
        ("«Title»", False),
        ("<<東京>>", True),
    ],
)
def test_title(text: str, followed: bool) -> None:
    assert check("detectable_format:title", text) is followed


# -- combination -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "followed"),
    [
        ("First.\n******\nSecond.", True),
        ("Same.\n******\n Same. ", False),
        ("A ****** B ****** C", False),
        ("******\nA\n******\nB\n******", True),  # blank pieces at the ends are allowed
        ("A\n******\n\n******\nB", False),  # but not in the middle
        ("A*******B", True),  # seven stars: "A" and "*B"
        ("Only one.", False),
    ],
)
def test_two_responses(text: str, followed: bool) -> None:
    assert check("combination:two_responses", text) is followed


def test_repeat_prompt_uses_its_argument_not_the_prompt() -> None:
    args = {"prompt_to_repeat": "Write a poem about the sea."}
    assert check("combination:repeat_prompt", "  write a POEM about the sea. Waves...", **args)
    assert not check("combination:repeat_prompt", "Sure! Write a poem about the sea.", **args)
    with pytest.raises(ValueError):
        check("combination:repeat_prompt", "Write a poem about the sea.")
    after_a_greeting = "Sure!\nWrite a poem about the sea."
    assert strict_loose("combination:repeat_prompt", after_a_greeting, **args) == (False, True)


# -- start and end ---------------------------------------------------------------------------------------
def test_end_phrase() -> None:
    def ends(text: str) -> bool:
        return check("startend:end_checker", text, end_phrase=" Any other questions? ")

    assert ends("Done. Any other questions?") and ends('"Done. any other QUESTIONS?"\n  ')
    assert not ends("Any other questions? Bye.") and not ends("Any other questions")
    text = "Done. Any other questions?\n(written by a bot)"
    assert strict_loose("startend:end_checker", text, end_phrase="Any other questions?") == (False, True)


@pytest.mark.parametrize(
    ("text", "followed"),
    [('"hi"', True), ('  "hi"\n', True), ('""', True), ('"', False), ("“hi”", False), ("'hi'", False)],
)
def test_quotation(text: str, followed: bool) -> None:
    assert check("startend:quotation", text) is followed


# -- punctuation -----------------------------------------------------------------------------------------
def test_no_comma_means_no_ascii_comma() -> None:
    assert not check("punctuation:no_comma", "one, two")
    assert check("punctuation:no_comma", "一，二、三 ، four")
    assert check("punctuation:no_comma", "")
    assert strict_loose("punctuation:no_comma", "") == (False, False)  # a blank answer follows nothing
    assert strict_loose("punctuation:no_comma", "Intro, sure:\nno commas here") == (False, True)
