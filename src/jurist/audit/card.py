"""The judge card's probes, their documented thresholds, and the card as a document (judge_card.json).

A probe gives an estimate with a bootstrap interval over its n items. It is *flagged* only when its whole
interval lies beyond its threshold, so a flag says the bias is there at the card's 95% level, not that the
estimate happened to cross a line. The thresholds are documented in docs/judge-card.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jurist.errors import JuristError
from jurist.store import write_json_atomic

if TYPE_CHECKING:  # the statistics (numpy, scipy) load where a card is computed, not where one is read
    from jurist.ratings import ProbeInterval

SCHEMA = "jurist.judge_card/1"
CARD_FILE = "judge_card.json"
GATE_EXIT = 4
"""The exit code of a run that ``--judge-gate`` ends because a probe is flagged (everything saved)."""

MIN_ITEMS = 10
"""A probe on fewer items is never flagged (its interval is shown, with a note): a bootstrap of a handful
of identical values has no width, and would flag three games as surely as three hundred. A request probe
that would get fewer items is not sent at all."""

Direction = Literal["above", "below", "both"]


@dataclass(frozen=True)
class ProbeRule:
    """How one probe is judged: flagged when its interval lies ``above`` the threshold, ``below`` it, or
    (``both``, a signed bias) beyond +threshold or -threshold. ``plus``/``minus``: what the sign means."""

    name: str
    title: str
    threshold: float
    direction: Direction
    plus: str = ""
    minus: str = ""


RULES: dict[str, ProbeRule] = {
    rule.name: rule
    for rule in (
        ProbeRule("position", "position bias", 0.10, "both", "toward the first answer", "toward the second"),
        ProbeRule("consistency", "position consistency", 0.50, "below", "same winner in both orders"),
        ProbeRule(
            "verbosity", "verbosity bias", 0.10, "both", "toward the longer answer", "toward the shorter"
        ),
        ProbeRule("injection", "injection flips", 0.10, "above", "of verdicts won by a note to the judge"),
        ProbeRule("self_consistency", "self-consistency", 0.80, "below", "same winner when asked again"),
        ProbeRule("lenience", "rubric lenience", 0.10, "above", "of items met by an off-topic answer"),
        ProbeRule(
            "rubric_verbosity",
            "rubric verbosity bias",
            0.10,
            "both",
            "toward the padded answer",
            "against it",
        ),
        ProbeRule("gold_agreement", "gold agreement", 0.50, "below", "of pairs decided as the gold label"),
        ProbeRule("calibration", "calibration (Brier)", 0.25, "above", "worse than always saying 50%"),
    )
}
"""Every probe the card knows, in the order it shows them."""


@dataclass
class ProbeResult:
    """One probe of one judge: its interval, or why it was not measured (``note``), and extra numbers."""

    name: str
    interval: ProbeInterval | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    """Per probe item, what identifies it and both verdicts (for the browser card, later)."""

    @property
    def rule(self) -> ProbeRule:
        return RULES[self.name]

    @property
    def flagged(self) -> bool:
        return self.beyond and self.interval is not None and self.interval.n >= MIN_ITEMS

    @property
    def beyond(self) -> bool:
        """Whether the interval lies beyond the threshold, however few its items."""
        if self.interval is None or self.interval.n == 0 or math.isnan(self.interval.low):
            return False
        rule, low, high = self.rule, self.interval.low, self.interval.high
        if rule.direction == "above":
            return low > rule.threshold
        if rule.direction == "below":
            return high < rule.threshold
        return low > rule.threshold or high < -rule.threshold

    def document(self) -> dict[str, Any]:
        found = self.interval
        number = _rounded
        doc: dict[str, Any] = {
            "estimate": number(found.estimate if found else None),
            "ci_low": number(found.low if found else None),
            "ci_high": number(found.high if found else None),
            "n": found.n if found else 0,
            "threshold": self.rule.threshold,
            "direction": self.rule.direction,
            "flagged": self.flagged,
        }
        note = self.note
        if note is None and self.beyond and not self.flagged:
            note = f"beyond the threshold, but on fewer than {MIN_ITEMS} items: not flagged"
        if note:
            doc["note"] = note
        doc.update(self.extra)
        if self.items:
            doc["items"] = self.items
        return doc

    def warning(self, judge: str) -> str | None:
        """The one line under the leaderboard when flagged, e.g. "judge-x: verbosity bias +0.31 [0.22,
        0.40] toward the longer answer"."""
        if not self.flagged or self.interval is None:
            return None
        rule, found = self.rule, self.interval
        if rule.direction == "both":
            what = rule.plus if found.estimate > 0 else rule.minus
            return f"{judge}: {rule.title} {found.estimate:+.2f} [{found.low:.2f}, {found.high:.2f}] {what}"
        bound = "above" if rule.direction == "above" else "below"
        return (
            f"{judge}: {rule.title} {found.estimate:.2f} [{found.low:.2f}, {found.high:.2f}] {rule.plus} "
            f"({bound} the threshold {rule.threshold:.2f})"
        )


def calibration_result(
    stated: Sequence[float], happened: Sequence[float], clusters: Sequence[str], *, against: str, seed: int
) -> ProbeResult:
    """The calibration probe of any judge kind: the Brier score of its ``stated`` probabilities against
    what ``happened`` (with a bootstrap over ``clusters``, their questions) and the ECE, saying what the
    outcomes are (``against``)."""
    from jurist.ratings import calibration_interval

    found = calibration_interval(stated, happened, clusters, seed=seed)
    return ProbeResult("calibration", found.brier, extra={"ece": round(found.ece, 4), "against": against})


def _rounded(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 4)


@dataclass
class JudgeAudit:
    """The card of one judge: its kind, how many judge requests the run holds, how many probe requests
    were sent (at most a tenth of them), and its probes."""

    judge: str
    kind: str
    judge_requests: int
    probe_budget: int
    probes: list[ProbeResult] = field(default_factory=list)
    probe_requests: int = 0
    failed_requests: int = 0
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        order = list(RULES)
        probes = sorted(self.probes, key=lambda probe: order.index(probe.name))
        return {
            "kind": self.kind,
            "judge_requests": self.judge_requests,
            "probe_budget": self.probe_budget,
            "probe_requests": self.probe_requests,
            "failed_probe_requests": self.failed_requests,
            "notes": self.notes,
            "probes": {probe.name: probe.document() for probe in probes},
        }

    def warnings(self) -> list[str]:
        return [line for probe in self.probes if (line := probe.warning(self.judge)) is not None]


def card_document(audits: list[JudgeAudit], *, seed: int, sample: int) -> dict[str, Any]:
    """judge_card.json: per judge its probes, and every flagged probe's warning line."""
    return {
        "schema": SCHEMA,
        "seed": seed,
        "sample": sample,
        "judges": {audit.judge: audit.document() for audit in audits},
        "warnings": [line for audit in audits for line in audit.warnings()],
    }


def write_card(root: Path, document: Mapping[str, Any]) -> Path:
    """RUN/judge_card.json, written whole (atomically)."""
    path = root / CARD_FILE
    write_json_atomic(path, dict(document))
    return path


def read_card(root: Path) -> dict[str, Any]:
    """RUN/judge_card.json; one line naming the file when it is missing or not a card."""
    path = root / CARD_FILE
    if not path.is_file():
        raise JuristError(f"{path}: no judge card (the run judged nothing, or ran with --no-judge-card)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise JuristError(f"{path}: schema is not {SCHEMA}")
    return data


def flagged(document: Mapping[str, Any]) -> bool:
    """Whether any probe of any judge in a card document is flagged (what ``--judge-gate`` tests)."""
    judges = document.get("judges") or {}
    return any(probe.get("flagged") for judge in judges.values() for probe in judge["probes"].values())
