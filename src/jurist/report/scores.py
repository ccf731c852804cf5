"""Printing a run's scores, whatever their family: ``jurist run`` (at its end) and ``jurist show`` both
print :class:`jurist.scoring.door.Scores` through :func:`print_scores`, so they print the same headline and
rows. ``table``: the family's tables on stdout, then its warnings; other formats: the rows alone on stdout.
Notes go to stderr in every format.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from jurist.scoring import Scores

FORMATS = ("table", "json", "csv", "markdown")


def print_scores(
    scores: Scores,
    fmt: str = "table",
    *,
    out: Console | None = None,
    err: Console | None = None,
    detail: bool = False,
) -> None:
    """The scores in ``fmt`` (``detail``: the per-instruction / subdomain breakdowns too)."""
    from jurist.report.formats import print_notes, print_warnings, table_console

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    out = out or table_console()
    err = err or Console(stderr=True)
    title = f"{scores.title} ({scores.headline})"
    if scores.family == "pairwise":
        _pairwise(scores, fmt, title, out, err)
    elif scores.family == "judge-accuracy":
        _judge_accuracy(scores, fmt, title, out)
    elif scores.family == "rules" and scores.rows:
        from jurist.report.rules_table import print_rule_rows

        ci = float(scores.settings["ci_level"])
        print_rule_rows(out, scores.rows, title=title, ci_level=ci, fmt=fmt, detail=detail)
    elif scores.family == "rubric" and scores.rows:
        from jurist.report.rubric_table import print_rubric_rows

        ci = float(scores.settings["ci_level"])
        print_rubric_rows(out, scores.rows, title=title, ci_level=ci, fmt=fmt, detail=detail)
    elif scores.family == "placement":
        _placement(scores, fmt, title, out)
    if scores.family != "pairwise":
        print_warnings(err, [], scores.warnings)
    print_notes(err, scores.notes)


def _rows(rows: list[dict[str, Any]], fmt: str, columns: tuple[str, ...] | None = None) -> None:
    """Rows on stdout as json, csv or markdown."""
    from jurist.report.formats import render_csv, render_markdown

    if fmt == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif columns is None:
        print((render_csv if fmt == "csv" else render_markdown)(rows), end="")
    else:
        print((render_csv if fmt == "csv" else render_markdown)(rows, columns), end="")


def _pairwise(scores: Scores, fmt: str, title: str, out: Console, err: Console) -> None:
    """The leaderboard, the judges' sanity and the warnings; other formats: the rows (warnings to stderr)."""
    from jurist.report.formats import print_warnings, render_sanity, render_table

    sanity = scores.detail.sanity
    if fmt != "table":
        _rows(scores.rows, fmt)
        print_warnings(err, sanity, scores.warnings)
        return
    ci_level = float(scores.settings["ci_level"])
    out.print(render_table(scores.rows, title=title, ci_level=ci_level, sanity=sanity))
    if sanity:
        out.print(render_sanity(sanity))
    print_warnings(out, sanity, scores.warnings)


def _judge_accuracy(scores: Scores, fmt: str, title: str, out: Console) -> None:
    from jurist.benchmarks.judgebench_scoring import ROW_FIELDS
    from jurist.report.formats import judgebench_table

    if fmt == "table":
        out.print(judgebench_table(scores.rows, title=title))
    else:
        _rows(scores.rows, fmt, None if fmt == "json" else ROW_FIELDS)


def _placement(scores: Scores, fmt: str, title: str, out: Console) -> None:
    """The placement tables (one per judge and model), a calibration, or a judged-only tally."""
    from jurist.report.placement_table import print_calibration, print_reports, print_tally

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
        _rows(scores.rows, fmt)
    else:
        print_reports(out, detail.reports, [], title=title)
