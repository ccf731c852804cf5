"""Other harnesses' files (Arena-Hard-Auto, AlpacaEval, JudgeArena, JudgeBench) read into and written from
jurist runs. Only ``jurist.commands`` imports this package: a run never depends on a peer's format.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.interop.alpaca_eval import import_alpaca_eval
    from jurist.interop.arena_hard import import_arena_hard
    from jurist.interop.arena_hard_export import export_arena_hard
    from jurist.interop.common import StyleFn
    from jurist.interop.judgearena import import_judgearena
    from jurist.interop.judgebench import score_stored_outputs

# Each name is imported from its module on first use, so that importing one module of the package (or
# ``jurist --help``) does not load the rest.
_HOMES = {
    "import_alpaca_eval": "alpaca_eval",
    "import_arena_hard": "arena_hard",
    "export_arena_hard": "arena_hard_export",
    "StyleFn": "common",
    "import_judgearena": "judgearena",
    "score_stored_outputs": "judgebench",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "StyleFn",
    "export_arena_hard",
    "import_alpaca_eval",
    "import_arena_hard",
    "import_judgearena",
    "score_stored_outputs",
]
