"""Rule-checked instruction following (IFEval, IFBench): a checker per instruction id, no judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.rules.answers import visible_answer, visible_text
    from jurist.rules.base import Checker
    from jurist.rules.evaluate import check_response, require_resources
    from jurist.rules.ifbench_sentence import STOPWORDS_RESOURCE
    from jurist.rules.ifbench_words import TAGGER_RESOURCE
    from jurist.rules.nltk_data import PUNKT_RESOURCE, download_hint, installed_in
    from jurist.rules.registry import checkers

_HOMES = {
    "visible_answer": "answers",
    "visible_text": "answers",
    "Checker": "base",
    "check_response": "evaluate",
    "require_resources": "evaluate",
    "STOPWORDS_RESOURCE": "ifbench_sentence",
    "TAGGER_RESOURCE": "ifbench_words",
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
    "installed_in",
    "require_resources",
    "visible_answer",
    "visible_text",
]
