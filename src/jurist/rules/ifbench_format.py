"""IFBench ``format:*`` checkers: layout, brackets, quotes, bullets, markup and fixed templates.

Each follows the 2025-10 reference's procedure step by step, including its odd corners (documented per
checker), since a cleaner reading would score the shipped answers differently.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from jurist.rules import nltk_data
from jurist.rules.ifbench_common import (
    IFBENCH,
    PUNCT_SPACE,
    Splitter,
    drop_punctuation,
    guarded_index,
    register_both,
    split_sentences,
    text_arg,
)

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_LETTER_OPTIONS = re.compile(r"\W*[aA]\W*[bB]\W*[cC]\W*")
_QUOTE_TRIM = string.digits + string.punctuation.replace('"', "")


@IFBENCH.register("format:parentheses")
def parentheses(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Some bracket closes correctly after the open stack reached depth 5 (any mix of ``()[]{}``). A
    wrong or unmatched closer empties the stack and forgets the depth reached; a correct one does not,
    so after reaching depth 5 any later correct close passes."""
    stack: list[str] = []
    deepest = 0
    for char in response:
        if char in _OPENERS:
            stack.append(char)
            deepest = max(deepest, len(stack))
        elif char in ")]}":
            if stack and _OPENERS[stack[-1]] == char:
                stack.pop()
                if deepest >= 5 and len(stack) < deepest:
                    return True
            else:
                stack, deepest = [], 0
    return False


@IFBENCH.register("format:quotes")
def quotes(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Quotes nest three deep: a ``"`` or ``'`` equal to the innermost open one closes it, any other one
    opens a level, and the check passes once a close leaves the depth three below the deepest reached.
    Apostrophes count as quotes, so "it's" opens a level; curly quotes are ignored."""
    stack: list[str] = []
    deepest = 0
    for char in response:
        if stack and char == stack[-1]:
            stack.pop()
            if deepest - len(stack) >= 3:
                return True
        elif char in "\"'":
            stack.append(char)
            deepest = max(deepest, len(stack))
    return False


@IFBENCH.register("format:options")
def options(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response is one of ``options``. The list is split on ``/`` if present, else on the substring
    ``or`` (even inside a word), else on ``,``. Letter options ("a), b), c), d)") must match exactly,
    unstripped; text options match case-insensitively once ASCII punctuation and spaces are trimmed."""
    spec = text_arg(kwargs, "options")
    separator = "/" if "/" in spec else "or" if "or" in spec else ","
    choices = [choice.strip() for choice in spec.split(separator)]
    if _LETTER_OPTIONS.match(spec):
        return response in choices
    answer = response.strip(PUNCT_SPACE).lower()
    return any(choice.strip(PUNCT_SPACE).lower() == answer for choice in choices)


@IFBENCH.register("format:newline")
def newline(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """As many non-empty lines as whitespace words, after deleting ASCII punctuation (a line holding only
    spaces still counts as a line; two words on one line balanced by a spaces-only line pass)."""
    text = drop_punctuation(response).strip()
    lines = [line for line in text.split("\n") if line != ""]
    return len(lines) == len(text.split())


def _is_emoji(char: str) -> bool:
    """One code point that the emoji package lists as a whole emoji (imported late: rule tasks only)."""
    import emoji

    return bool(emoji.is_emoji(char))


@register_both("format:emoji", guard=True)
def emoji_sentences(
    response: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    *,
    split: Splitter = split_sentences,
    guard: bool = False,
) -> bool:
    """Every sentence ends with an emoji: one of its last two characters once ASCII punctuation is
    deleted and the ends stripped (the second covers a trailing variation selector), or else the next
    sentence's first such character (the splitter puts an emoji after "." into the next sentence). A
    sentence of punctuation only makes ``c94da02`` fail with an IndexError, and this raise; ``db69a6f``
    fails it."""
    sentences = [drop_punctuation(sentence).strip() for sentence in split(response)]
    for index, text in enumerate(sentences):
        if not text:
            return guarded_index(
                guard, "format:emoji on a sentence of punctuation only: the reference fails here"
            )
        if _is_emoji(text[-1]) or _is_emoji(text[-2] if len(text) > 1 else text[-1]):
            continue
        if index == len(sentences) - 1:
            return False
        following = sentences[index + 1]
        if not following or not _is_emoji(following[0]):
            return False
    return True


def _drop_blank_lines_like_the_reference(lines: list[str]) -> list[str]:
    """The reference removes blank lines from the list it is iterating over, so the line right after a
    removed one is never looked at, and ``list.remove`` takes the first equal line, not this one."""
    lines = list(lines)
    index = 0
    while index < len(lines):
        if not lines[index].strip():
            lines.remove(lines[index])
        index += 1
    return lines


@IFBENCH.register("format:line_indent")
def line_indent(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Each line is indented by more leading spaces (tabs do not count) than the line before, blank
    lines aside; a blank line that directly follows another blank one is kept, so it breaks the stairs."""
    lines = _drop_blank_lines_like_the_reference(response.split("\n"))
    indents = [len(line) - len(line.lstrip(" ")) for line in lines]
    return all(after > before for before, after in pairwise(indents))


@IFBENCH.register("format:quote_unquote")
def quote_unquote(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """With curly double quotes made straight, the literal ``'"'`` removed and all whitespace deleted,
    no two ``"`` are adjacent and the text, once trailing digits and other ASCII punctuation are trimmed
    from both ends, does not end with ``"``. Text with nothing left fails (an IndexError upstream)."""
    text = response.replace("\u201c", '"').replace("\u201d", '"').replace("'\"'", "")
    text = "".join(text.split())
    if '""' in text:
        return False
    trimmed = text.strip(_QUOTE_TRIM)
    if not trimmed:
        raise IndexError("format:quote_unquote with nothing left after trimming: the reference fails here")
    return trimmed[-1] != '"'


@IFBENCH.register("format:list")
def special_bullets(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The marker ``sep`` occurs at least twice anywhere (non-overlapping), not necessarily at line
    starts: a "-" marker is met by any two hyphens."""
    return response.count(text_arg(kwargs, "sep")) >= 2


@IFBENCH.register("format:thesis")
def thesis(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """From the first ``<i>`` (else the first ``<em>``), a closing ``</i>`` (else ``</em>``) follows with
    non-blank text between and after. The reference measures both tags as if three and four characters
    long, so with ``<em>``/``</em>`` the stray ``>`` counts as text and empty tags pass."""
    start = response.find("<i>")
    if start == -1:
        start = response.find("<em>")
        if start == -1:
            return False
    rest = response[start:]
    end = rest.find("</i>")
    if end == -1:
        end = rest.find("</em>")
        if end == -1:
            return False
    return rest[3:end].strip() != "" and rest[end + 4 :].strip() != ""


@IFBENCH.register("format:sub-bullets")
def sub_bullets(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every stretch of text after a ``*`` holds a ``-`` before the next ``*``. A response without ``*``
    passes, and ``**bold**`` fails (the empty stretch between the two stars has no hyphen)."""
    return all("-" in piece for piece in response.split("*")[1:])


@register_both("format:no_bullets_bullets")
def no_bullets_bullets(
    response: str, kwargs: Mapping[str, Any], prompt: str, *, split: Splitter = split_sentences
) -> bool:
    """At least two sentences, then at least two lines starting (after spaces) with ``*``, and nothing
    after them, not even an empty line. Reproduced quirk: the reference keeps the sentence list of the
    last prose line as its "still in prose" flag, so a prose line after an empty line fails."""
    in_prose = True
    sentence_count = 0
    bullet_count = 0
    for line in response.split("\n"):
        if line.strip().startswith("*"):
            in_prose = False
            if sentence_count < 2:
                return False
            bullet_count += 1
        elif in_prose:
            found = split(line.strip())
            sentence_count += len(found)
            in_prose = bool(found)
        else:
            return False
    return bullet_count >= 2


@IFBENCH.register("format:title_case")
def title_case(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No ``word_tokenize`` token starts with a lower-case letter and continues all-lower or all-upper.
    One-letter tokens ("a") and tokens without cased letters pass; "of", "the" and "n't" fail."""
    for token in nltk_data.word_tokenize(response):
        if token[0].islower() and (token[1:].islower() or token[1:].isupper()):
            return False
    return True


@IFBENCH.register("format:output_template")
def output_template(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The three labels appear, case-sensitively, anywhere and in any order."""
    return "My Answer:" in response and "My Conclusion:" in response and "Future Outlook:" in response


@IFBENCH.register("format:no_whitespace")
def no_whitespace(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No character is whitespace by ``str.isspace`` (Unicode spaces included)."""
    return not any(char.isspace() for char in response)
