"""Rule-checked instruction following (IFEval, IFBench): a checker per instruction id, no judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.rules.ahead import forget_checked_ahead
    from jurist.rules.answers import visible_answer, visible_text
    from jurist.rules.base import Checker
    from jurist.rules.evaluate import check_response, require_resources, start_checking
    from jurist.rules.nltk_data import (
        PUNKT_RESOURCE,
        STOPWORDS_RESOURCE,
        TAGGER_RESOURCE,
        download_hint,
        installed_in,
    )
    from jurist.rules.registry import checkers

_HOMES = {
    "visible_answer": "answers",
    "visible_text": "answers",
    "Checker": "base",
    "check_response": "evaluate",
    "require_resources": "evaluate",
    "start_checking": "evaluate",
    "forget_checked_ahead": "ahead",
    "STOPWORDS_RESOURCE": "nltk_data",
    "TAGGER_RESOURCE": "nltk_data",
    "PUNKT_RESOURCE": "nltk_data",
    "download_hint": "nltk_data",
    "installed_in": "nltk_data",
    "checkers": "registry",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "PUNKT_RESOURCE",
    "STOPWORDS_RESOURCE",
    "TAGGER_RESOURCE",
    "Checker",
    "check_response",
    "checkers",
    "download_hint",
    "forget_checked_ahead",
    "installed_in",
    "require_resources",
    "start_checking",
    "visible_answer",
    "visible_text",
]
