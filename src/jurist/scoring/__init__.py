"""The battle vocabulary every reader of battles shares (:mod:`jurist.scoring.common`: outcome values,
rounding, battles seen from a baseline's side) and the judges' position-swap sanity (:mod:`jurist.scoring.
sanity`), kept below :mod:`jurist.families` so that the judge-quality code and the families both use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.scoring.common import ALL, OUTCOME, Battle, Row, r
    from jurist.scoring.sanity import judge_sanity, sanity_warnings

_HOMES = {
    "ALL": "common",
    "OUTCOME": "common",
    "Battle": "common",
    "Row": "common",
    "r": "common",
    "judge_sanity": "sanity",
    "sanity_warnings": "sanity",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "ALL",
    "OUTCOME",
    "Battle",
    "Row",
    "r",
    "judge_sanity",
    "sanity_warnings",
]
