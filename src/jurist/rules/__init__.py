"""Rule-checked instruction following (IFEval, IFBench): a checker per instruction id, no judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.rules.answers import visible_answer, visible_text
    from jurist.rules.base import Checker
    from jurist.rules.evaluate import check_response, require_resources
    from jurist.rules.registry import checkers

_HOMES = {
    "visible_answer": "answers",
    "visible_text": "answers",
    "Checker": "base",
    "check_response": "evaluate",
    "require_resources": "evaluate",
    "checkers": "registry",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "Checker",
    "check_response",
    "checkers",
    "require_resources",
    "visible_answer",
    "visible_text",
]
