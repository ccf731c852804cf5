"""What the terminal shows: leaderboards, rubric and rule tables, the ledger, placement reports, progress.
Rows come from :mod:`jurist.scoring`; nothing here computes a score.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.report.formats import (
        judgebench_table,
        print_notes,
        render_csv,
        render_markdown,
        table_console,
    )
    from jurist.report.ledger_table import dollars, dry_run_table, print_ledger
    from jurist.report.progress import PrefixedProgress, StageProgress
    from jurist.report.scores import print_scores

# Each name is imported from its module on first use, so that importing one module of the package (or
# ``jurist --help``) does not load the rest.
_HOMES = {
    "judgebench_table": "formats",
    "print_notes": "formats",
    "render_csv": "formats",
    "render_markdown": "formats",
    "table_console": "formats",
    "dollars": "ledger_table",
    "dry_run_table": "ledger_table",
    "print_ledger": "ledger_table",
    "PrefixedProgress": "progress",
    "StageProgress": "progress",
    "print_scores": "scores",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "PrefixedProgress",
    "StageProgress",
    "dollars",
    "dry_run_table",
    "judgebench_table",
    "print_ledger",
    "print_notes",
    "print_scores",
    "render_csv",
    "render_markdown",
    "table_console",
]
