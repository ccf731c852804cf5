"""The judge card as a table: one row per judge and probe, from judge_card.json's document (so
``jurist run`` and ``jurist judges card RUN`` print the same thing), and its warning lines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where the card is drawn, at a run's end
    from rich.console import Console
    from rich.table import Table

_SIGNED = frozenset({"position", "verbosity", "rubric_verbosity"})
"""Probes whose estimate is a signed shift, shown with its sign."""


def _number(value: Any, signed: bool) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def render_card(document: Mapping[str, Any]) -> Table:
    """Per judge and probe: the estimate, its interval, n, the threshold and whether it is flagged (or
    why the probe was not measured)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"judge card (probe seed {document.get('seed')}; docs/judge-card.md)")
    for name in ("judge", "probe", "estimate", "95% interval", "n", "threshold", ""):
        table.add_column(name, justify="left" if name in ("judge", "probe", "") else "right")
    for judge, card in (document.get("judges") or {}).items():
        for probe, found in card["probes"].items():
            signed = probe in _SIGNED
            interval = (
                f"[{_number(found['ci_low'], signed)}, {_number(found['ci_high'], signed)}]"
                if found.get("ci_low") is not None
                else ""
            )
            bound = {"above": "> ", "below": "< ", "both": "± "}[found["direction"]]
            mark = Text("FLAGGED", style="bold red") if found["flagged"] else Text(found.get("note") or "ok")
            table.add_row(
                judge,
                probe,
                _number(found["estimate"], signed),
                interval,
                str(found["n"]),
                f"{bound}{found['threshold']:.2f}",
                mark,
            )
        spent = f"{card['probe_requests']} probe request(s) of {card['probe_budget']} allowed"
        table.add_row(judge, Text("requests", style="dim"), "", "", "", "", Text(spent, style="dim"))
    return table


def print_card(document: Mapping[str, Any], *, out: Console | None, err: Console) -> None:
    """The card's table on ``out`` (None: no table, e.g. with --format json), then its notes and one
    warning line per flagged probe on ``err``."""
    if out is not None and document.get("judges"):
        out.print(render_card(document))
    for judge, card in (document.get("judges") or {}).items():
        for note in card.get("notes") or ():
            err.print(f"note: judge card {judge}: {note}", style="dim", markup=False, highlight=False)
    for line in document.get("warnings") or ():
        err.print(f"warning: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)
