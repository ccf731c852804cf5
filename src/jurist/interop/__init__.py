"""Other harnesses' files (Arena-Hard-Auto, AlpacaEval, JudgeArena, JudgeBench) read into and written from
jurist runs. Only ``jurist.commands`` imports this package: a run never depends on a peer's format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.interop.alpaca_eval import import_alpaca_eval
    from jurist.interop.arena_hard import import_arena_hard
    from jurist.interop.arena_hard_battles import is_arena_hard_battles, score_arena_hard_battles
    from jurist.interop.arena_hard_export import export_arena_hard
    from jurist.interop.common import StyleFn
    from jurist.interop.judgearena import import_judgearena
    from jurist.interop.judgebench import score_stored_outputs

_HOMES = {
    "import_alpaca_eval": "alpaca_eval",
    "import_arena_hard": "arena_hard",
    "is_arena_hard_battles": "arena_hard_battles",
    "score_arena_hard_battles": "arena_hard_battles",
    "export_arena_hard": "arena_hard_export",
    "StyleFn": "common",
    "import_judgearena": "judgearena",
    "score_stored_outputs": "judgebench",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "StyleFn",
    "export_arena_hard",
    "import_alpaca_eval",
    "import_arena_hard",
    "import_judgearena",
    "is_arena_hard_battles",
    "score_arena_hard_battles",
    "score_stored_outputs",
]
