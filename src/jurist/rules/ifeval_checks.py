"""jurist's own checkers for the 25 IFEval instruction ids (Zhou et al. 2023), one function each.

They reproduce the reference evaluator (google-research ``instruction_following_eval``) row for row on
its GPT-4 demo data; see ifeval_common for how arguments missing from a prompt are filled repeatably,
ifeval_words and ifeval_format for the checkers and the reference quirks they keep.
"""

from __future__ import annotations

from jurist.rules import ifeval_format, ifeval_words
from jurist.rules.ifeval_common import IFEVAL

__all__ = ["IFEVAL", "IFEVAL_IDS"]

IFEVAL_IDS = frozenset(
    {
        "keywords:existence",
        "keywords:frequency",
        "keywords:forbidden_words",
        "keywords:letter_frequency",
        "language:response_language",
        "length_constraints:number_sentences",
        "length_constraints:number_paragraphs",
        "length_constraints:number_words",
        "length_constraints:nth_paragraph_first_word",
        "detectable_content:number_placeholders",
        "detectable_content:postscript",
        "detectable_format:number_bullet_lists",
        "detectable_format:constrained_response",
        "detectable_format:number_highlighted_sections",
        "detectable_format:multiple_sections",
        "detectable_format:json_format",
        "detectable_format:title",
        "combination:two_responses",
        "combination:repeat_prompt",
        "startend:end_checker",
        "startend:quotation",
        "change_case:capital_word_frequency",
        "change_case:english_capital",
        "change_case:english_lowercase",
        "punctuation:no_comma",
    }
)
"""The ids upstream's registry enables (its commented-out ones, such as ``rephrase``, are not)."""

_LOADED = (ifeval_words, ifeval_format)  # imported for their @IFEVAL.register side effect
if set(IFEVAL) != IFEVAL_IDS:  # pragma: no cover - a checker module lost or gained an id
    raise RuntimeError(f"IFEval registry mismatch: {sorted(set(IFEVAL) ^ IFEVAL_IDS)}")
