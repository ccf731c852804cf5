"""What the terminal shows, whatever the family: csv/markdown/rich helpers, intervals, the pairwise
leaderboard and sanity tables, the judge card, the ledger, progress. Each family's own tables are its own
(:mod:`jurist.families`); nothing here computes a score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.report.card_table import print_card, render_card
    from jurist.report.formats import (
        DRAWING_MODULES,
        judgebench_table,
        print_notes,
        print_rows,
        print_warnings,
        render_csv,
        render_markdown,
        render_sanity,
        render_table,
        stderr_console,
        table_console,
    )
    from jurist.report.intervals import interval_text
    from jurist.report.ledger_table import dollars, dry_run_table, print_ledger
    from jurist.report.progress import PrefixedProgress, StageProgress

_HOMES = {
    "DRAWING_MODULES": "formats",
    "print_card": "card_table",
    "render_card": "card_table",
    "judgebench_table": "formats",
    "print_notes": "formats",
    "print_rows": "formats",
    "print_warnings": "formats",
    "render_sanity": "formats",
    "render_table": "formats",
    "render_csv": "formats",
    "render_markdown": "formats",
    "stderr_console": "formats",
    "table_console": "formats",
    "interval_text": "intervals",
    "dollars": "ledger_table",
    "dry_run_table": "ledger_table",
    "print_ledger": "ledger_table",
    "PrefixedProgress": "progress",
    "StageProgress": "progress",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "DRAWING_MODULES",
    "PrefixedProgress",
    "StageProgress",
    "dollars",
    "dry_run_table",
    "interval_text",
    "judgebench_table",
    "print_card",
    "print_ledger",
    "print_notes",
    "print_rows",
    "print_warnings",
    "render_card",
    "render_csv",
    "render_markdown",
    "render_sanity",
    "render_table",
    "stderr_console",
    "table_console",
]
