"""One interval format in every table (issue 27): ``(-x / +y)`` from one formatter, a zero-width interval
with its reason, an untrustworthy one marked."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

from jurist.families.placement.table import render_report, summary_line
from jurist.families.rubric.table import render_healthbench, render_writingbench
from jurist.families.rules.table import render_rule_table
from jurist.report import interval_text
from jurist.run.tasks import summary_table


def printed(table: Table) -> str:
    out = io.StringIO()
    Console(file=out, width=250).print(table)
    return out.getvalue()


def test_the_formatter() -> None:
    assert interval_text(62.5, 37.5, 87.5) == "(-25.0 / +25.0)"
    assert interval_text(0.5123, 0.5, 0.53, digits=4) == "(-0.0123 / +0.0177)"
    assert interval_text(7.0, 6.5, 7.2, scale=10.0) == "(-5.0 / +2.0)"
    assert interval_text(50.0, 50.0, 50.0) == "(±0: every resample gave the same value)"
    assert interval_text(100.0, 100.0, 100.0, zero_reason="won every game") == "(±0: won every game)"
    assert interval_text(80.0, 10.0, 100.0, unreliable=True) == "(-70.0 / +20.0)*"
    assert interval_text(None, 1.0, 2.0) == interval_text(1.0, None, 2.0) == "-"
    assert interval_text(5.0, 4.99, 5.04) == "(±<0.1)"  # some width, none at this precision
    assert interval_text(5.0, 4.99, 5.06) == "(-0.0 / +0.1)"  # one side shows its width


def test_rubric_tables_print_minus_plus_not_a_range() -> None:
    health = {
        "model": "m",
        "judge": "g",
        "score": 0.42,
        "bootstrap_std": 0.01,
        "ci_low": 0.40,
        "ci_high": 0.45,
        "n_answers": 10,
        "unscored_answers": 0,
        "unscored_items": 0,
    }
    text = printed(render_healthbench([health], title="t", ci_level=0.9))
    assert "(-0.0200 / +0.0300)" in text and "0.4000 - 0.4500" not in text
    requirement = {"R": 7.0, "C": 7.5}
    writing = {
        "model": "m",
        "judge": "g",
        "overall": 7.0,
        "overall_x10": 70.0,
        "ci_low": 6.71,
        "ci_high": 7.4,
        "requirements": {"style": requirement, "format": requirement, "length": requirement},
        "n_answers": 10,
        "unscored_answers": 0,
    }
    text = printed(render_writingbench([writing], title="t", ci_level=0.9))
    assert "(-2.9 / +4.0)" in text and "67.1 - 74.0" not in text


def test_rule_placement_and_tasks_tables_print_the_same_format() -> None:
    metrics = {"prompt_strict": 100.0, "inst_strict": 90.0, "prompt_loose": 80.0, "inst_loose": 70.0}
    rule: dict[str, Any] = {"model": "m", "headline": "prompt_strict", **metrics}
    rule |= {f"{m}_ci_low": v - 5.0 for m, v in metrics.items()} | {
        f"{m}_ci_high": v for m, v in metrics.items()
    }
    rule |= {"prompt_strict_ci_low": 100.0, "n_questions": 3, "samples": 1, "truncated": 0}
    assert "(±0: every answer passed)" in printed(render_rule_table([rule], title="t", ci_level=0.9))
    entry = {"model": "m", "rating": 1100.0, "ci_low": 1080.0, "ci_high": 1130.0, "n_battles": 9}
    report = {
        "model": "m",
        "arena": "a",
        "judge_model": "j",
        "n_bootstraps": 10,
        "ratings": [{**entry, "source": "evaluated"}],
        "jurist": {"rank": 1, "rank_ci": 1, "arena_models": 0},
    }
    assert "(-20.0 / +30.0)" in printed(render_report(report)) and "(-20.0 / +30.0)" in summary_line(report)
    task = {"task": "t", "model": "m", "judge": None, "metric": "score", "fraction": False}
    task |= {"value": 60.0, "ci_low": 55.0, "ci_high": 64.0}
    assert "(-5.0 / +4.0)" in printed(summary_table([task]))
