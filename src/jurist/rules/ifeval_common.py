"""What IFEval's 25 checkers share: the registry, argument defaults, comparisons, language detection.

The reference evaluator (google-research ``instruction_following_eval``) fills a missing argument by a
draw from Python's global ``random``, so a prompt without, say, ``relation`` is scored against a
different instruction on every run. jurist makes the same kind of draw from a generator seeded by a fixed
string (:func:`seeded`), so a run repeats exactly; with the arguments present (every row of the IFEval
data) nothing is drawn and the outcome is the reference's.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.rules.base import CheckerRegistry

IFEVAL = CheckerRegistry()
"""Instruction id -> checker for the 25 IFEval ids; filled by ifeval_words and ifeval_format."""

log = logging.getLogger("jurist.rules")

LESS_THAN = "less than"
AT_LEAST = "at least"
RELATIONS = (LESS_THAN, AT_LEAST)

LANGUAGE_CODES = (
    "ar", "bg", "bn", "de", "en", "es", "fa", "fi", "fr", "gu", "he", "hi", "it", "ja", "kn",
    "ko", "ml", "mr", "ne", "pa", "pl", "pt", "ru", "sw", "ta", "te", "th", "uk", "ur", "vi",
)  # fmt: skip
"""The ISO 639-1 codes ``language:response_language`` accepts; the reference raises on any other."""

FALLBACK_WORDS = (
    "anchor", "basket", "canyon", "copper", "harbor", "lantern", "meadow", "orbit",
    "pepper", "puzzle", "ribbon", "summit", "thunder", "velvet", "violet", "willow",
)  # fmt: skip
"""Words drawn when a keyword argument is missing. The reference samples a random word list of its own;
any fixed list keeps the point (an arbitrary word) while making the draw repeatable."""


def seeded(instruction_id: str, argument: str, extra: str = "") -> random.Random:
    """The generator for one missing argument's draw: seeded by ``"<id>/<argument>/<extra>"`` (a string
    seed goes through SHA-512, so the draw is the same on every run and Python version)."""
    return random.Random(f"{instruction_id}/{argument}/{extra}")


def count_argument(kwargs: Mapping[str, Any], name: str, instruction_id: str, low: int, high: int) -> Any:
    """A numeric threshold: given, or (missing or negative, as the reference treats it) drawn from
    ``low..high`` inclusive. A non-number is left to fail where the reference fails, on ``< 0``."""
    value = kwargs.get(name)
    if value is None or value < 0:
        return seeded(instruction_id, name).randint(low, high)
    return value


def text_argument(kwargs: Mapping[str, Any], name: str, instruction_id: str, options: Sequence[str]) -> Any:
    """A phrase argument: stripped when it is text, drawn from ``options`` when missing."""
    value = kwargs.get(name)
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return seeded(instruction_id, name).choice(options)
    return value


def relation_argument(kwargs: Mapping[str, Any], name: str, instruction_id: str) -> str:
    """``less than`` or ``at least``: drawn when missing; anything else is an error, as upstream."""
    value = kwargs.get(name)
    if value is None:
        return seeded(instruction_id, name).choice(RELATIONS)
    if value not in RELATIONS:
        raise ValueError(f"{name} must be one of {RELATIONS}, not {value!r}")
    return str(value)


def compare(count: int, relation: str, threshold: Any) -> bool:
    """``less than``: strictly below the threshold; ``at least``: the threshold or more."""
    return bool(count < threshold) if relation == LESS_THAN else bool(count >= threshold)


def fallback_words(instruction_id: str, argument: str, k: int) -> list[str]:
    """``k`` distinct words standing in for a missing keyword argument."""
    return seeded(instruction_id, argument).sample(FALLBACK_WORDS, k)


def language_is(text: str, code: str) -> bool:
    """Whether langdetect (seeded with 0, as the reference outputs were made) names ``code`` for
    ``text``, computed by :mod:`jurist.rules.language_detect` (the same answer, faster). Text langdetect
    finds no features in (digits, emoji, an e-mail address) raises ``LangDetectException`` there; the
    reference logs it and counts the instruction as followed, so this returns True."""
    from langdetect import LangDetectException

    from jurist.rules.language_detect import detect

    try:
        return detect(text, seed=0) == code
    except LangDetectException as exc:
        log.debug("langdetect found no language in %r (%s): counted as followed, as upstream", text, exc)
        return True
