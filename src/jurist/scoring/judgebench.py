"""Re-scoring a JudgeBench run directory: judge accuracy recomputed from its stored judgments.

A JudgeBench run measures judges, not models, so its battles (response_A against response_B) have no
meaningful win rate; ``jurist show`` and ``jurist judgebench score`` both come here instead. Two layouts
exist on disk:

* the one runner's (``judgments/<judge>/response_B.jsonl``, ``uid`` = pair_id, games of response_A and
  response_B): the labels are not in the judgments, so the pairs are loaded again from run.json's
  ``bench_options`` (and ``limit``), and scored exactly as the end of the run scored them;
* the earlier runner's (``judgments/<judge>/<set>.jsonl`` with ``pair_id``, ``label`` and ``source`` on
  every line): scored from the lines themselves.

When the pairs cannot be loaded any more (the pairs file moved, no offline copy of a split), the run's own
``judgebench.json`` is shown with a note saying it was not recomputed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jurist.errors import JuristError

JUDGEBENCH_FILE = "judgebench.json"
CANDIDATE_FILE = "response_B.jsonl"


def _run_json(root: Path) -> dict[str, Any]:
    path = root / "run.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else {}


def is_judgebench_run(root: Path) -> bool:
    """A run directory scored by judge accuracy (run.json says JudgeBench, or it has judgebench.json)."""
    run_json = _run_json(root)
    metrics = (run_json.get("scoring") or {}).get("metrics") or ()
    return (
        run_json.get("bench") == "judgebench"
        or "judge-accuracy" in metrics
        or (root / JUDGEBENCH_FILE).is_file()
    )


def score_judgebench_run(root: Path, judges: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows as in judgebench.json, notes) for a JudgeBench run directory; ``judges`` keeps only those."""
    if not root.is_dir():
        raise JuristError(f"{root}: no such run directory")
    run_json = _run_json(root)
    notes: list[str] = []
    names = _judges(root, run_json)
    unknown = [j for j in judges if j not in names]
    if unknown:
        raise JuristError(f"--judge: no judgments of {', '.join(unknown)} (judges: {', '.join(names)})")
    chosen = [j for j in names if not judges or j in judges]
    new = [j for j in chosen if (root / "judgments" / j / CANDIDATE_FILE).is_file()]
    rows: list[dict[str, Any]]
    if new or not chosen:
        try:
            rows = _score_current_layout(root, run_json, chosen)
        except JuristError as exc:
            why = f"the pairs could not be loaded again ({exc})"
            notes.append(f"shown as the run wrote {JUDGEBENCH_FILE}, not recomputed: {why}")
            return _stored_rows(root, chosen, why), notes
    else:
        rows = [_score_old_layout(root, judge) for judge in chosen]
        notes.append("scored from judgments written by jurist's earlier JudgeBench runner")
    return rows, notes


def _judges(root: Path, run_json: dict[str, Any]) -> list[str]:
    """The run's judges in run.json's order, then any other judge folder."""
    listed = [str(j) for j in run_json.get("judges") or [] if j is not None]
    folder = root / "judgments"
    found = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return listed + [j for j in found if j not in listed]


def _score_current_layout(root: Path, run_json: dict[str, Any], judges: list[str]) -> list[dict[str, Any]]:
    """Exactly what the run scored: every pair of the (limited) benchmark, a missing judgment failing."""
    from jurist.benchmarks.judgebench import pair_of
    from jurist.benchmarks.judgebench_scoring import score_decisions, score_row
    from jurist.benchmarks.registry import load_benchmark
    from jurist.store.jsonl import iter_numbered_jsonl
    from jurist.store.records import sample_of

    options = {str(k): str(v) for k, v in (run_json.get("bench_options") or {}).items()}
    limit = run_json.get("limit")
    bench = load_benchmark("judgebench", options).limited(limit if isinstance(limit, int) else None)
    pairs = [pair_of(q) for q in bench.questions]
    rows = []
    for judge in judges:
        stored: dict[str, tuple[Any, ...]] = {}
        path = root / "judgments" / judge / CANDIDATE_FILE
        for _, record in iter_numbered_jsonl(path, repair=False) if path.is_file() else ():
            if sample_of(record) == 0 and isinstance(record.get("games"), list):
                stored[str(record.get("uid"))] = tuple(game.get("label") for game in record["games"])
        decisions = {p.pair_id: stored.get(p.pair_id, (None, None)) for p in pairs}
        rows.append(score_row(score_decisions(pairs, decisions, judge=judge)))
    return rows


def _score_old_layout(root: Path, judge: str) -> dict[str, Any]:
    """One judge's accuracy from the earlier runner's self-contained lines (the last line per pair wins)."""
    from jurist.benchmarks.judgebench_scoring import (
        LABELS,
        normalize_decision,
        score_games,
        score_row,
        source_group,
        unswap,
    )
    from jurist.store.jsonl import iter_numbered_jsonl

    latest: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "judgments" / judge).glob("*.jsonl")):
        for _, record in iter_numbered_jsonl(path, repair=False):
            if "pair_id" in record:
                latest[str(record["pair_id"])] = record
    items = []
    models: set[str] = set()
    for pair_id, record in latest.items():
        label = record.get("label")
        games = record.get("games")
        if label not in LABELS or not isinstance(games, list) or not games:
            raise JuristError(f"{root / 'judgments' / judge}: pair {pair_id!r} has no label or games")
        decisions = [normalize_decision(game.get("label")) for game in games]
        if len(decisions) == 2:
            decisions[1] = unswap(decisions[1])
        items.append((source_group(str(record.get("source", ""))), label, tuple(decisions)))
        models.add(str(record.get("response_model", "")))
    return score_row(score_games(judge, ",".join(sorted(models)), items))


def _stored_rows(root: Path, judges: list[str], why: str) -> list[dict[str, Any]]:
    """The run's own judgebench.json (what it reported), when recomputing is impossible."""
    path = root / JUDGEBENCH_FILE
    if not path.is_file():
        raise JuristError(f"{root}: cannot score this JudgeBench run: {why}; and it has no {JUDGEBENCH_FILE}")
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [row for row in rows if not judges or row.get("judge") in judges]
