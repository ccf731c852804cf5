"""Rule-checked instruction following (IFEval, IFBench): a checker per instruction id, no judge."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.rules.answers import visible_answer, visible_text
    from jurist.rules.base import Checker
    from jurist.rules.evaluate import check_response, require_resources
    from jurist.rules.registry import checkers

# Each name is imported from its module on first use, so that importing one module of the package (or
# ``jurist --help``) does not load the rest.
_HOMES = {
    "visible_answer": "answers",
    "visible_text": "answers",
    "Checker": "base",
    "check_response": "evaluate",
    "require_resources": "evaluate",
    "checkers": "registry",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "Checker",
    "check_response",
    "checkers",
    "require_resources",
    "visible_answer",
    "visible_text",
]
