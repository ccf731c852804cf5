"""Human annotations brought to a finished run: the judge card's gold agreement against a gold file.

A gold file is JSONL, one human label per line, keyed as the run's judgments are: ``uid`` (the question),
``model`` (the model compared with the baseline), optionally ``baseline`` and ``sample`` (where the run has
several), and either ``label`` — a verdict in jurist's labels with the baseline's answer as A ("A>B": the
baseline's answer is better, "B>A": the model's; "A>>B" counts as "A>B", "A=B" is a tie) — or ``winner``
(the model's name, the baseline's, or "tie"). Other fields (an annotator, a comment) are not read.

A replacement study's ``replacement.json`` (``jurist judges replace``) is accepted too: it names the
retired reference judge's own verdicts on its panel (``retired_verdicts.jsonl`` beside it, in the shape
above), so a later run's card shows its judges' agreement with the old reference.

The card is recomputed from the run's stored judgments alone, without a request: each judge's
``gold_agreement`` (accuracy by JudgeBench's two-game rule for a pairwise judge, one game for a preference
judge, and Cohen's kappa) replaces the card's one, and judge_card.json is written again; the leaderboard
is not touched. Ties in the gold file are left out (JudgeBench's rule needs a better side) and counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.audit.card import CARD_FILE, RULES, JudgeAudit, ProbeResult, card_document, read_card, write_card
from jurist.audit.verdicts import games_of, preference_decision, preference_of
from jurist.errors import JuristError
from jurist.judging import canonical_label
from jurist.ratings import gold_agreement

SOURCE = "imported human annotations"
"""What ``against`` names (with the file) for a gold agreement read from a gold file."""
TIE = "A=B"
_SIDES = {"A>>B": "A>B", "A>B": "A>B", "A=B": TIE, "B>A": "B>A", "B>>A": "B>A"}


@dataclass(frozen=True)
class GoldLine:
    """One line of a gold file: its key, and its ``label`` or ``winner`` as written (validated)."""

    path: Path
    line: int
    uid: str
    model: str
    baseline: str | None
    sample: int | None
    label: str | None
    winner: str | None

    def where(self, name: str) -> str:
        return f"{self.path}:{self.line}: field {name!r}"

    def pair_label(self, model: str, baseline: str) -> str:
        """The label with the baseline's answer as A ("A>B", "B>A" or a tie); a winner naming neither side
        is one line naming the file, the line and the field."""
        if self.label is not None:
            return self.label
        if self.winner == model:
            return "B>A"
        if self.winner == baseline:
            return "A>B"
        if self.winner == "tie":
            return TIE
        raise JuristError(
            f"{self.where('winner')}: {self.winner!r} is neither the model {model!r}, its baseline "
            f"{baseline!r} nor 'tie'"
        )


def _required(data: Mapping[str, Any], name: str, at: str) -> str:
    """A key field as a string (a JSON number is read as its digits); one line naming it otherwise."""
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        raise JuristError(f"{at}: field {name!r}: a non-empty string is required")
    return str(value)


def _optional(data: Mapping[str, Any], name: str, at: str) -> str | None:
    return None if data.get(name) is None else _required(data, name, at)


def _line(path: Path, number: int, text: str) -> GoldLine:
    at = f"{path}:{number}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise JuristError(f"{at}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise JuristError(f"{at}: a JSON object is required, one per line")
    uid = _required(data, "uid", at)
    model = _required(data, "model", at)
    baseline = _optional(data, "baseline", at)
    sample = data.get("sample")
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 0):
        raise JuristError(f"{at}: field 'sample': a whole number from 0 is required")
    if ("label" in data) == ("winner" in data):
        raise JuristError(f"{at}: field 'label' or 'winner': exactly one of them is required")
    label = winner = None
    if "label" in data:
        raw = data["label"]
        found = canonical_label(raw) if isinstance(raw, str) else None
        if found is None:
            raise JuristError(
                f"{at}: field 'label': {raw!r} is not a verdict label (A>>B, A>B, A=B, B>A, B>>A; the "
                "baseline's answer is A)"
            )
        label = _SIDES[found]
    else:
        winner = _required(data, "winner", at)
    return GoldLine(path, number, uid, model, baseline, sample, label, winner)


REPLACEMENT_SCHEMA_PREFIX = "jurist.judge_replacement/"
"""replacement.json's schema (:data:`jurist.families.pairwise.anchor.REPLACEMENT_SCHEMA`, above this
package)."""


def retired_gold(path: Path) -> tuple[Path, str] | None:
    """For a replacement.json: (its retired-verdicts gold file, what they are); None for a gold file."""
    try:
        head = path.read_bytes()[:1].strip()
        document = json.loads(path.read_text(encoding="utf-8")) if head == b"{" else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    if not str(document.get("schema", "")).startswith(REPLACEMENT_SCHEMA_PREFIX):
        return None
    name = document.get("retired_verdicts")
    if not isinstance(name, str):
        raise JuristError(f"{path}: field 'retired_verdicts': the study stored no per-item verdicts")
    return path.parent / name, f"the retired judge {document.get('retired_judge')}'s own verdicts"


def read_gold(path: Path) -> list[GoldLine]:
    """Every line of a gold file, validated: the first bad one is one line naming file, line and field."""
    retired = retired_gold(path)
    if retired is not None:
        path = retired[0]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JuristError(f"{path}: cannot read the gold file ({exc})") from None
    lines: list[GoldLine] = []
    seen: dict[tuple[str, str, str | None, int | None], int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        line = _line(path, number, raw)
        key = (line.uid, line.model, line.baseline, line.sample)
        if key in seen:
            raise JuristError(f"{path}:{number}: field 'uid': the same item as line {seen[key]}")
        seen[key] = number
        lines.append(line)
    if not lines:
        raise JuristError(f"{path}: the gold file holds no label")
    return lines


class GoldLabels:
    """A gold file's lines found by the judgment they label (uid, model, baseline, sample)."""

    def __init__(self, lines: Sequence[GoldLine]) -> None:
        self._by_item: dict[tuple[str, str], list[GoldLine]] = {}
        for line in lines:
            self._by_item.setdefault((line.uid, line.model), []).append(line)
        self.used: set[int] = set()

    def find(self, uid: str, model: str, baseline: str, sample: int) -> GoldLine | None:
        lines = self._by_item.get((uid, model), ())
        # a line naming the baseline or the sample is read before one that labels every baseline or sample
        for line in sorted(lines, key=lambda line: (line.baseline is None, line.sample is None)):
            if line.baseline in (None, baseline) and line.sample in (None, sample):
                self.used.add(line.line)
                return line
        return None


def _judgments(run_dir: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(judge, judgment) for the latest stored judgment of every item (as on resume, the last wins)."""
    from jurist.store import iter_jsonl

    root = run_dir / "judgments"
    if not root.is_dir():
        raise JuristError(f"{run_dir}: no judgments/ folder (is this a judged jurist run directory?)")
    latest: dict[tuple[str, str, str, str, int], dict[str, Any]] = {}
    for path in sorted(root.glob("*/*.jsonl")):
        for record in iter_jsonl(path, repair=False):
            if "uid" not in record or "model" not in record or "baseline" not in record:
                continue
            judge = str(record.get("judge") or path.parent.name)
            sample = int(record.get("sample", 0))
            latest[(judge, str(record["model"]), str(record["baseline"]), str(record["uid"]), sample)] = (
                record
            )
    for (judge, *_), record in latest.items():
        yield judge, record


def _pair_games(record: Mapping[str, Any]) -> tuple[list[str | None], int] | None:
    """A judgment's verdicts in the pair's own order (the baseline as A) and the requests they took;
    None for a judgment the gold probe does not read (a rubric grade)."""
    baseline = str(record["baseline"])
    if isinstance(record.get("games"), list):
        games = games_of({"games": [game for game in record["games"] if isinstance(game, dict)]})
        return [game.decision(baseline) for game in games], len(games)
    if "p_model" in record:  # a preference judge's one game: the side its probability favours
        return [preference_decision(preference_of(record).p_model)], 1
    return None


@dataclass
class _JudgeGold:
    kind: str
    requests: int = 0
    labels: list[str] = field(default_factory=list)
    games: list[list[str | None]] = field(default_factory=list)
    ties: int = 0


def _gold_probe(found: _JudgeGold, against: str, *, seed: int) -> ProbeResult:
    extra: dict[str, Any] = {"against": against, "gold_ties_left_out": found.ties}
    if not found.labels:
        why = "no judgment of this judge has a decisive gold label in the gold file"
        return ProbeResult("gold_agreement", note=why, extra=extra)
    agreed = gold_agreement(found.labels, found.games, seed=seed)
    kappa = None if math.isnan(agreed.kappa) else round(agreed.kappa, 4)
    return ProbeResult("gold_agreement", agreed.accuracy, extra={"kappa": kappa, **extra})


def gold_card(run_dir: Path, gold_path: Path) -> dict[str, Any]:
    """The run's judge card with every judge's gold agreement against ``gold_path``, read from the run's
    stored judgments (no request); judge_card.json written again and its document returned. A run
    without a card gets one holding the gold probe alone (with a note saying so)."""
    gold = GoldLabels(read_gold(gold_path))
    retired = retired_gold(gold_path)
    judges: dict[str, _JudgeGold] = {}
    for judge, record in _judgments(run_dir):
        read = _pair_games(record)
        entry = judges.setdefault(judge, _JudgeGold(str(record.get("kind") or "pairwise")))
        if read is None:
            continue
        games, requests = read
        entry.requests += requests
        line = gold.find(
            str(record["uid"]), str(record["model"]), str(record["baseline"]), int(record.get("sample", 0))
        )
        if line is None:
            continue
        label = line.pair_label(str(record["model"]), str(record["baseline"]))
        if label == TIE:
            entry.ties += 1
            continue
        entry.labels.append(label)
        entry.games.append(games)
    if not gold.used:
        raise JuristError(
            f"{gold_path}: no line labels a judgment of {run_dir} (keys: uid, model, and baseline/sample "
            "where given)"
        )
    readable = {judge: entry for judge, entry in judges.items() if entry.requests}
    source = SOURCE if retired is None else retired[1]
    matched = f"{source} ({gold_path.name}: {len(gold.used)} of its lines matched"
    had_card = (run_dir / CARD_FILE).is_file()
    document = read_card(run_dir) if had_card else _bare_card(readable)
    seed = int(document.get("seed") or 0)
    for judge, entry in readable.items():
        left_out = f"; {entry.ties} tie(s) left out" if entry.ties else ""
        probe = _gold_probe(entry, f"{matched}{left_out})", seed=seed)
        _replace_gold(document, judge, probe, kind=entry.kind, requests=entry.requests)
    write_card(run_dir, document)
    return document


def _bare_card(judges: Mapping[str, _JudgeGold]) -> dict[str, Any]:
    note = "the run made no judge card: only gold agreement, from jurist judges card --gold"
    audits = [
        JudgeAudit(judge, entry.kind, entry.requests, 0, notes=[note]) for judge, entry in judges.items()
    ]
    return card_document(audits, seed=0, sample=0)


def _replace_gold(
    document: dict[str, Any], judge: str, probe: ProbeResult, *, kind: str, requests: int
) -> None:
    """Put ``probe`` in place of the judge's gold agreement in a card document, with its warning line."""
    if judge not in document["judges"]:  # a judge the card did not probe (e.g. added to the run later)
        note = "not probed when the card was made: only gold agreement, from jurist judges card --gold"
        document["judges"][judge] = JudgeAudit(judge, kind, requests, 0, notes=[note]).document()
    audit = document["judges"][judge]
    old = audit["probes"].get("gold_agreement")
    if old is not None and not str(old.get("against", "")).startswith(SOURCE):
        audit["notes"] = [
            *audit.get("notes", []),
            f"gold agreement against {old.get('against')} replaced by --gold",
        ]
    probes = {**audit["probes"], "gold_agreement": probe.document()}
    order = list(RULES)
    audit["probes"] = {name: probes[name] for name in sorted(probes, key=order.index)}
    title = f"{judge}: {RULES['gold_agreement'].title} "
    warnings = [line for line in document.get("warnings", []) if not str(line).startswith(title)]
    warning = probe.warning(judge)
    document["warnings"] = warnings if warning is None else [*warnings, warning]
