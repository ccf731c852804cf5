"""How a placement is shown: one table per judge and model (the arena's ratings around it), a
calibration, or a tally of judged battles without human votes; the browser's title; the ``--tasks``
headline (the evaluated model's rating)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from jurist.report import print_rows, print_warnings

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.door import Scores

TITLE = "Arena placement (Elo among the human votes)"


def print_placement(scores: Scores, fmt: str, title: str, out: Console, err: Console) -> None:
    from jurist.families.placement.table import print_calibration, print_reports, print_tally

    detail = scores.detail
    if detail.kind == "calibration":
        if fmt == "json":
            print(json.dumps(detail.calibration, indent=2, ensure_ascii=False))
        else:
            print_calibration(out, detail.calibration)
    elif detail.kind == "tally":
        if fmt == "json":
            print(
                json.dumps({"judged": scores.rows, "elo_report": detail.stored}, indent=2, ensure_ascii=False)
            )
        else:
            print_tally(out, scores.rows, detail.stored, title)
    elif fmt == "json":
        reports = detail.reports
        print(json.dumps(reports if len(reports) != 1 else reports[0], indent=2, ensure_ascii=False))
    elif fmt in ("csv", "markdown"):
        print_rows(scores.rows, fmt)
    else:
        print_reports(out, detail.reports, [], title=title)
    print_warnings(err, [], scores.warnings)
