"""Judge replacement: a candidate judge qualified against a retired reference judge's stored verdicts on a
panel of published models, and the monotone map that re-anchors its scores onto the published leaderboard
(``jurist judges replace``; docs/judge-replacement.md). Imported by commands only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.replace.analysis import thresholds
    from jurist.replace.panel import PANEL_BENCHES, Panel, load_panel
    from jurist.replace.procedure import REPLACEMENT_FILE, replace_judge
    from jurist.replace.study import StudyRequest
    from jurist.replace.table import print_replacement

_HOMES = {
    "thresholds": "analysis",
    "PANEL_BENCHES": "panel",
    "Panel": "panel",
    "load_panel": "panel",
    "REPLACEMENT_FILE": "procedure",
    "replace_judge": "procedure",
    "StudyRequest": "study",
    "print_replacement": "table",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "PANEL_BENCHES",
    "REPLACEMENT_FILE",
    "Panel",
    "StudyRequest",
    "load_panel",
    "print_replacement",
    "replace_judge",
    "thresholds",
]
