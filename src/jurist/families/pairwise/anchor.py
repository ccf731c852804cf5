"""Scores under a replacement judge carried onto the retired judge's published scale (``--anchor``), and
the label of a run judged off the reference without one.

A replacement study (``jurist judges replace``, docs/judge-replacement.md) writes ``replacement.json``:
a monotone map from the candidate judge's scale to the retired judge's, with bootstrap replicates of it
(panels resampled by models and questions). Anchoring a leaderboard row reads the map at the row's score;
its interval reads every replicate at the score redrawn from the row's own sampling error, so it holds the
run's uncertainty and the map's. Each anchored row says where it would rank in the published leaderboard.

Without ``--anchor``, a pairwise run whose judge is not the benchmark's reference model is labelled
:data:`NOT_COMPARABLE` in its table, its leaderboard.json rows and its page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from jurist.errors import InputError, JuristError
from jurist.ratings import MonotoneMap, anchor_score

if TYPE_CHECKING:
    from jurist.families.door import Scores

REPLACEMENT_SCHEMA = "jurist.judge_replacement/1"
NOT_COMPARABLE = "not comparable to the published leaderboard"
ANCHOR_LEVEL = 0.95


def _knots(path: Path, where: str, value: Any) -> MonotoneMap:
    if not isinstance(value, Mapping):
        raise InputError(path, where, "a map needs fields 'x' and 'y'")
    xs, ys = value.get("x"), value.get("y")
    if not (isinstance(xs, list) and isinstance(ys, list) and xs and len(xs) == len(ys)):
        raise InputError(path, where, "fields 'x' and 'y' must be lists of one length")
    try:
        return MonotoneMap(tuple(float(v) for v in xs), tuple(float(v) for v in ys))
    except (TypeError, ValueError):
        raise InputError(path, where, "fields 'x' and 'y' must hold numbers") from None


def read_replacement(path: Path) -> dict[str, Any]:
    """A replacement.json document, its schema and map checked (one line naming the field otherwise)."""
    if path.is_dir():
        path = path / "replacement.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JuristError(f"--anchor {path}: no such file") from None
    except ValueError as exc:
        raise InputError(path, "", f"not JSON ({exc})") from None
    if not isinstance(document, dict) or document.get("schema") != REPLACEMENT_SCHEMA:
        raise InputError(path, "", f"field 'schema' is not {REPLACEMENT_SCHEMA!r}")
    mapping = document.get("map")
    if not isinstance(mapping, dict):
        raise InputError(path, "", "no field 'map'")
    _knots(path, "map", mapping)
    for number, replicate in enumerate(mapping.get("replicates") or []):
        _knots(path, f"map.replicates[{number}]", replicate)
    document["_path"] = str(path)
    return document


def _row_score(row: Mapping[str, Any], field: str, ci_level: float) -> tuple[float, float] | None:
    """(score on the map's scale, its standard error) of a row, None when it has none."""
    value = row.get(field, row.get("score"))
    if not isinstance(value, (int, float)) or math.isnan(float(value)):
        return None
    se = row.get(f"{field}_standard_error")
    if isinstance(se, (int, float)):
        return float(value), float(se)
    low, high = row.get("ci_low"), row.get("ci_high")
    if field in row and "win_rate_standard_error" not in row and field != "score":
        low, high = row.get("winrate_ci_low", low), row.get("winrate_ci_high", high)
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        z = NormalDist().inv_cdf(0.5 + ci_level / 2.0)
        return float(value), (float(high) - float(low)) / (2.0 * z)
    return float(value), math.nan


def anchor_rows(
    rows: Sequence[dict[str, Any]], document: Mapping[str, Any], bench: str, ci_level: float
) -> list[str]:
    """Add ``anchored`` (score, ci, published rank) to every non-baseline row; the notes to print."""
    if document.get("bench") not in (None, bench):
        raise JuristError(
            f"--anchor {document.get('_path')}: a study of {document.get('bench')}, not of {bench}"
        )
    mapping = document["map"]
    point = _knots(Path(str(document.get("_path"))), "map", mapping)
    replicates = [MonotoneMap(tuple(m["x"]), tuple(m["y"])) for m in mapping.get("replicates") or []]
    field = str(mapping.get("score_field") or "score")
    board = sorted((float(v) for v in (document.get("published_leaderboard") or {}).values()), reverse=True)
    low, high = (mapping.get("range") or [-math.inf, math.inf])[:2]
    outside: list[str] = []
    for number, row in enumerate(rows):
        found = None if row.get("baseline") else _row_score(row, field, ci_level)
        if found is None:
            continue
        anchored = anchor_score(found[0], found[1], point, replicates, level=ANCHOR_LEVEL, seed=number)
        rank = 1 + sum(score > anchored.estimate for score in board)
        row["anchored"] = {
            "score": round(anchored.estimate, 4),
            "ci": [round(anchored.low, 4), round(anchored.high, 4)],
            "ci_level": ANCHOR_LEVEL,
            "published_rank": rank,
            "of": len(board) + 1,
            "from": field,
        }
        if not low <= found[0] <= high:
            outside.append(str(row.get("model")))
    notes = [
        f"anchored: {field} under {document.get('candidate', {}).get('model')} re-anchored onto "
        f"{document.get('retired_judge')}'s published scale by {document.get('_path')} "
        f"(verdict: {document.get('verdict')}); rank among the published leaderboard's "
        f"{len(board)} rows"
    ]
    if document.get("verdict") != "qualified":
        notes.append(
            f"the anchoring study did not qualify this judge: {'; '.join(document.get('reasons') or [])}"
        )
    if outside:
        notes.append(
            f"{', '.join(outside)}: outside the panel's range [{low}, {high}]: the map is flat there, so "
            "the anchored score is a bound, not an estimate"
        )
    return notes


def off_reference(run_fields: Mapping[str, Any]) -> list[str]:
    """The judges of a run that are not its benchmark's reference model (empty: no reference, or all are)."""
    preset = run_fields.get("judge_preset")
    if not isinstance(preset, Mapping) or preset.get("reference", {}).get("model") is None:
        return []
    return sorted(
        str(alias)
        for alias, entry in (preset.get("judges") or {}).items()
        if any(str(d).startswith("model ") for d in entry.get("deviations") or [])
    )


def label_not_comparable(rows: Sequence[dict[str, Any]], judges: Sequence[str]) -> list[str]:
    """Label the rows of ``judges`` not comparable to the published leaderboard; the note to print."""
    for row in rows:
        if str(row.get("judge", "")) in judges or len(judges) == 1:
            row["published"] = NOT_COMPARABLE
    return [
        f"{', '.join(judges)}: not the benchmark's reference judge, so these scores are {NOT_COMPARABLE} "
        "(re-anchor them with jurist judges replace, then --anchor DIR/replacement.json)"
    ]


def anchor_scores(scores: Scores, run_fields: Mapping[str, Any], bench: str, anchor: Path | None) -> None:
    """``--anchor`` (else the run's recorded one) applied to a pairwise score's rows and headline; without
    one, the rows of a judge off the reference labelled :data:`NOT_COMPARABLE`."""
    recorded = (run_fields.get("scoring") or {}).get("anchor")
    path = anchor or (Path(str(recorded)) if recorded else None)
    ci_level = float(scores.settings.get("ci_level", 0.90))
    if path is not None:
        document = read_replacement(path)
        scores.notes.extend(anchor_rows(scores.rows, document, bench, ci_level))
        scores.headline += f"; beside it, re-anchored onto {document.get('retired_judge')}'s published scale"
        return
    judges = off_reference(run_fields)
    if judges:
        scores.notes.extend(label_not_comparable(scores.rows, judges))
        scores.headline += f"; {NOT_COMPARABLE}"
