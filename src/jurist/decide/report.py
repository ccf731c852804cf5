"""Comparisons and gate outcomes for people: a terminal table, JSON, and a one-file browser page (every
text escaped, no script, a strict Content-Security-Policy, as the run browser's page)."""

from __future__ import annotations

import html
import json
import math
from typing import Any

from rich.console import Console
from rich.table import Table

SCHEMA = "jurist.compare/1"


def _number(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _p(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _cells(row: dict[str, Any]) -> list[str]:
    low, high = row["difference"]["ci"]
    task = row["task"] + (f" [{row['judge']}]" if row.get("judge") else "")
    return [
        task,
        row["a"],
        row["b"],
        str(row["n"]),
        f"{_number(row['score_a'])} -> {_number(row['score_b'])}",
        f"{row['difference']['estimate']:+.2f}",
        f"[{low:+.2f}, {high:+.2f}]",
        _p(row["p"]),
        _p(row.get("p_holm")),
        _number(row.get("mdd")),
        row["decision"],
    ]


HEADERS = ("task", "a", "b", "n", "score a -> b", "b - a", "interval", "p", "p (Holm)", "MDD", "decision")


def print_comparisons(console: Console, rows: list[dict[str, Any]], level: float) -> None:
    """One line per task and pair: the paired difference, its interval, p-values and the decision."""
    table = Table(title=f"paired comparisons ({level:.0%} intervals; MDD at 80% power)", title_justify="left")
    for header in HEADERS:
        table.add_column(
            header, justify="right" if header in ("n", "b - a", "p", "p (Holm)", "MDD") else "left"
        )
    styles = {"better": "green", "worse": "red"}
    for row in rows:
        table.add_row(*_cells(row), style=styles.get(row["decision"]))
    console.print(table)
    units = sorted({f"{row['task']}: {row['units']}" for row in rows})
    console.print("differences in " + "; ".join(units), style="dim", markup=False, highlight=False)


def print_gate(console: Console, outcomes: list[dict[str, Any]]) -> None:
    """Every gate rule's outcome, passed or failed, then the verdict."""
    for outcome in outcomes:
        mark = "PASS" if outcome["passed"] else "FAIL"
        judge = f" [{outcome['judge']}]" if outcome.get("judge") else ""
        console.print(
            f"gate {mark} {outcome['run']}: {outcome['rule']}{judge}: {outcome['why']}",
            style="green" if outcome["passed"] else "red",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    failed = sum(1 for outcome in outcomes if not outcome["passed"])
    verdict = (
        f"gate failed: {failed} of {len(outcomes)} rules" if failed else f"gate passed: {len(outcomes)} rules"
    )
    console.print(verdict, style="bold red" if failed else "bold green", markup=False, highlight=False)


def comparison_document(rows: list[dict[str, Any]], gate: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``--format json``: ``{"comparisons": [...]}`` (and ``gate`` when one was checked)."""
    document: dict[str, Any] = {"schema": SCHEMA, "comparisons": rows}
    if gate is not None:
        document["gate"] = {"passed": all(o["passed"] for o in gate), "rules": gate}
    return document


def render_json(document: dict[str, Any]) -> str:
    """JSON with NaN written as null (strict JSON readers refuse NaN)."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return json.dumps(clean(document), indent=2)


_STYLE = (
    "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:left}"
    ".better{background:#e6f4ea}.worse{background:#fce8e6}.FAIL{color:#b00}.PASS{color:#070}"
)


def render_page(rows: list[dict[str, Any]], gate: list[dict[str, Any]] | None, level: float) -> str:
    """The comparison as one HTML page (no script; every value escaped)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    body = "".join(
        f'<tr class="{html.escape(row["decision"])}">'
        + "".join(f"<td>{html.escape(cell)}</td>" for cell in _cells(row))
        + "</tr>"
        for row in rows
    )
    gate_html = ""
    if gate is not None:
        items = "".join(
            f'<li class="{"PASS" if o["passed"] else "FAIL"}">{"PASS" if o["passed"] else "FAIL"} '
            f"{html.escape(o['run'])}: {html.escape(o['rule'])}: {html.escape(o['why'])}</li>"
            for o in gate
        )
        gate_html = f"<h2>gate</h2><ul>{items}</ul>"
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>jurist compare</title><style>{_STYLE}</style></head><body>"
        f"<h1>paired comparisons ({level:.0%} intervals)</h1><table><tr>{head}</tr>{body}</table>"
        f"{gate_html}</body></html>\n"
    )
