"""The judge-accuracy family: a JudgeBench run scored by its judges' accuracy, recomputed from the stored
judgments (``jurist run``'s end, ``jurist show`` and ``jurist judgebench score`` all come here).

A JudgeBench run measures judges, not models, so its battles (response_A against response_B) have no
meaningful win rate. Two layouts exist on disk:

* the one runner's (``judgments/<judge>/response_B.jsonl``, ``uid`` = pair_id, games of response_A and
  response_B): the labels are not in the judgments, so the pairs are the run's own at its end, and loaded
  again from run.json's ``bench_options`` (and the questions it selected, or ``limit``) afterwards;
* the earlier runner's (``judgments/<judge>/<set>.jsonl`` with ``pair_id``, ``label`` and ``source`` on
  every line): scored from the lines themselves.

When the pairs cannot be loaded any more (the pairs file moved, no offline copy of a split), the run's own
``judgebench.json`` is shown with a note saying it was not recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from jurist.errors import JuristError
from jurist.families.door import (
    FinishedRun,
    Headline,
    RecordedRun,
    RunEnd,
    ScoreRequest,
    Scores,
    SummaryBoard,
    ignored_note,
)
from jurist.families.registry import FamilyName

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.benchmarks import Pair
    from jurist.families.paired import PairedCells

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


class JudgeAccuracyFamily:
    """JudgeBench: each judge's accuracy over the pairs; judgebench.json and leaderboard.json."""

    name: ClassVar[FamilyName] = "judge-accuracy"

    def outcomes(self, run: FinishedRun) -> RunEnd:
        """battles.jsonl from the judgments (kept for the record: a JudgeBench run has no win rate)."""
        from jurist.benchmarks import pair_of
        from jurist.families.pairwise.outcomes import write_outcomes

        judged = list(run.judged())
        write_outcomes(run, judged, [])
        return RunEnd(len(judged), pairs=[pair_of(q) for q in run.bench.questions])

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        rows, notes = score_judgebench_run(
            run.root, request.judges, pairs=end.pairs if end else None, run_json=dict(run.fields)
        )
        notes += ignored_note(request, "a JudgeBench run is scored by judge accuracy; win-rate options")
        split = run.bench_info.get("split") or run.fields.get("split") or run.name
        n = max((int(row.get("n") or 0) for row in rows), default=0)
        return Scores(
            self.name,
            rows,
            "judge accuracy",
            f"JudgeBench ({split}, {n} pairs)",
            {},
            notes,
            scored=end.outcomes > 0 if end else bool(rows),
        )

    def documents(self, scores: Scores) -> dict[str, Any]:
        return {JUDGEBENCH_FILE: scores.rows, "leaderboard.json": scores.rows}

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        from jurist.benchmarks import ROW_FIELDS
        from jurist.report import judgebench_table, print_rows, print_warnings

        if fmt == "table":
            out.print(judgebench_table(scores.rows, title=title))
        else:
            print_rows(scores.rows, fmt, None if fmt == "json" else ROW_FIELDS)
        print_warnings(err, [], scores.warnings)

    def summary(self, rows: Sequence[Mapping[str, Any]], method: Any) -> SummaryBoard:
        return SummaryBoard("Judge accuracy", layout="table")

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        return None  # a judge's accuracy, not a model's score: --tasks and sweeps have none to show

    def paired_cells(self, run: RecordedRun) -> PairedCells | None:
        return None


def score_judgebench_run(
    root: Path,
    judges: Sequence[str] = (),
    *,
    pairs: Sequence[Pair] | None = None,
    run_json: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows as in judgebench.json, notes) for a JudgeBench run directory; ``judges`` keeps only those;
    ``pairs``: the run's own (else loaded again as run.json says)."""
    if not root.is_dir():
        raise JuristError(f"{root}: no such run directory")
    run_json = _run_json(root) if run_json is None else run_json
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
            rows = _score_current_layout(root, run_json, chosen, pairs)
        except JuristError as exc:
            why = f"the pairs could not be loaded again ({exc})"
            notes.append(f"shown as the run wrote {JUDGEBENCH_FILE}, not recomputed: {why}")
            return _stored_rows(root, chosen, why), notes
    else:
        raise JuristError(
            f"{root / 'judgments'}: no judge has {CANDIDATE_FILE} (judgments written by an older jurist's "
            "JudgeBench runner, a layout this one does not read): run the benchmark again elsewhere"
        )
    return rows, notes


def _judges(root: Path, run_json: dict[str, Any]) -> list[str]:
    """The run's judges in run.json's order, then any other judge folder."""
    listed = [str(j) for j in run_json.get("judges") or [] if j is not None]
    folder = root / "judgments"
    found = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return listed + [j for j in found if j not in listed]


def _score_current_layout(
    root: Path, run_json: dict[str, Any], judges: list[str], pairs: Sequence[Pair] | None
) -> list[dict[str, Any]]:
    """Exactly what the run scored: every pair of the (limited) benchmark, a missing judgment failing."""
    from jurist.benchmarks import score_decisions, score_row
    from jurist.store import iter_numbered_jsonl, sample_of

    pairs = _run_pairs(run_json) if pairs is None else pairs
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


def _run_pairs(run_json: dict[str, Any]) -> list[Pair]:
    """The pairs a run judged, loaded again: run.json's ``bench_options``, then the questions it selected
    (``bench_info.selection``, whatever ``--limit`` chose them), else its ``limit`` first ones."""
    from jurist.benchmarks import load_benchmark, pair_of

    options = {str(k): str(v) for k, v in (run_json.get("bench_options") or {}).items()}
    bench = load_benchmark("judgebench", options)
    selection = (run_json.get("bench_info") or {}).get("selection") or {}
    chosen = selection.get("uids") if isinstance(selection, dict) else None
    if isinstance(chosen, list):
        by_uid = {q.uid: q for q in bench.questions}
        missing = [uid for uid in chosen if uid not in by_uid]
        if missing:
            raise JuristError(
                f"{len(missing)} pair(s) the run judged are not in the pairs now, e.g. {missing[0]}"
            )
        return [pair_of(by_uid[uid]) for uid in chosen]
    limit = run_json.get("limit")
    return [pair_of(q) for q in bench.limited(limit if isinstance(limit, int) else None).questions]


def _stored_rows(root: Path, judges: list[str], why: str) -> list[dict[str, Any]]:
    """The run's own judgebench.json (what it reported), when recomputing is impossible."""
    path = root / JUDGEBENCH_FILE
    if not path.is_file():
        raise JuristError(f"{root}: cannot score this JudgeBench run: {why}; and it has no {JUDGEBENCH_FILE}")
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [row for row in rows if not judges or row.get("judge") in judges]
