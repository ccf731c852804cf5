"""The NLTK data each instruction's checker reads, known without running the checker.

A run checks these before its first request, so a missing resource stops it with one line before any
answer is paid for; running every checker once instead (the old way) imported nltk, scipy through it, and
langdetect's profiles before the first request: two seconds of CPU at every IFEval start. Ids absent here
read no NLTK data. An id stands for every version of its checker (IFBench's ``db69a6f`` splits sentences
with Punkt where ``c94da02`` uses its own rules): a version needing less is asked for the union.
``tests/test_rule_needs.py`` checks the table against what the checkers ask NLTK for.
"""

from __future__ import annotations

from collections.abc import Mapping

from jurist.rules.nltk_data import PUNKT_RESOURCE, STOPWORDS_RESOURCE, TAGGER_RESOURCE

_PUNKT_USERS = (
    # IFEval
    "change_case:capital_word_frequency",
    "length_constraints:number_sentences",
    # IFBench, either version: word_tokenize or Punkt sentences
    "count:pronouns",
    "custom:sentence_alphabet",
    "custom:word_reverse",
    "format:emoji",
    "format:no_bullets_bullets",
    "format:title_case",
    "ratio:sentence_balance",
    "ratio:sentence_type",
    "ratio:sentence_words",
    "sentence:alliteration_increment",
    "sentence:increment",
    "sentence:keyword",
    "words:keywords_specific_position",
    "words:last_first",
    "words:start_verb",
    "words:words_position",
)

NLTK_NEEDS: Mapping[str, tuple[str, ...]] = {
    **{instruction_id: (PUNKT_RESOURCE,) for instruction_id in _PUNKT_USERS},
    "ratio:stop_words": (STOPWORDS_RESOURCE,),
    "words:start_verb": (TAGGER_RESOURCE, PUNKT_RESOURCE),
}
"""Instruction id -> the NLTK resources its checker may load, in the order it asks for them."""
