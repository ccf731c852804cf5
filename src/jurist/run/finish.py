"""The end of a run: the family of the run's benchmark writes its outcomes, the scoring door scores them
as ``jurist show`` would (:func:`jurist.families.door.score_run_dir`), the documents are written and the
scores printed (:func:`jurist.families.printing.print_scores`).

Apart from the pipeline so that a ``--tasks`` run or a sweep scores each task the same way, and the
pipeline stays about running.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError
from jurist.families import FinishedRun, Scores, print_scores, score_family, score_run_dir, write_documents
from jurist.report import table_console
from jurist.run.outcomes import Outcome
from jurist.run.plan import RunPlan
from jurist.run.work import JudgeWork

if TYPE_CHECKING:
    from rich.console import Console


def score_finished_run(
    plan: RunPlan,
    work: JudgeWork,
    recorded: Mapping[str, Any],
    console: Console,
    *,
    partial: bool = False,
) -> Outcome:
    """Score the run directory of ``plan`` and print the scores: the tables on stdout (``--format``: the
    rows instead), notes on ``console``. ``recorded``: run.json as the run wrote it when it opened (its
    family and scoring as the plan resolved them, never derived again). ``partial``: the budget stopped
    the run; what is judged so far is printed, with its n, and no score file is written (the run's
    documents stay those of its last complete scoring)."""
    bench, config = plan.bench, plan.config
    rule_checked = bench.rule_suite is not None and config.mode != "inference-only"
    if not rule_checked and not plan.judges:
        return Outcome([], scored=True)  # answers only: nothing to score, nothing missing
    finished = FinishedRun(
        bench,
        plan.run_dir,
        plan.judges,
        plan.candidates,
        plan.baselines,
        plan.kinds,
        work.judged,
        work.indexes.built_answers(),
        plan.samples,
        config.scoring.strong_weight,
    )
    end = score_family(plan.family).outcomes(finished)
    if rule_checked:
        from jurist.rules import forget_checked_ahead

        forget_checked_ahead()  # the checks started as answers came that the end did not ask for
    root = plan.run_dir.root
    said = {str(note) for note in bench.info.get("notes") or ()}  # said when the run started
    if partial:
        try:
            scores = score_run_dir(root, recorded=recorded, end=end)
        except JuristError:  # nothing judged yet: nothing to show
            return Outcome([], scored=False)
        console.print(PARTIAL, style="yellow", markup=False, highlight=False, soft_wrap=True)
        print_scores(_unsaid(scores, said), config.output_format, out=table_console(), err=console)
        return Outcome(scores.rows, scored=False)
    scores = score_run_dir(root, recorded=recorded, end=end)
    written = write_documents(root, scores)
    print_scores(_unsaid(scores, said), config.output_format, out=table_console(), err=console)
    return Outcome(scores.rows, scored=scores.scored, documents=tuple(path.name for path in written))


def _unsaid(scores: Scores, said: set[str]) -> Scores:
    """``scores`` without the notes the run already said when it started (the benchmark's notes): no
    note is printed twice. A family's warnings that are part of its table (``warnings_in_table``: the
    pairwise one's, AlpacaEval's estimated LC) stay: ``jurist run`` and ``jurist show`` print the table
    alike, line for line."""
    in_table = bool(getattr(score_family(scores.family), "warnings_in_table", False))
    warnings = scores.warnings if in_table else [w for w in scores.warnings if w not in said]
    return replace(scores, notes=[note for note in scores.notes if note not in said], warnings=warnings)


PARTIAL = (
    "the budget (--max-cost / --max-tokens) stopped the run: the scores below are partial, of what is "
    "judged so far (see each row's n), and no score file was written; a larger budget resumes the run"
)

_PHASES = {
    "generate": ("answer", "answers"),
    "judge": ("judge request", "judge requests"),
    "probe": ("judge-card probe", "judge-card probes"),
    "check": ("endpoint check", "endpoint checks"),
}


def _counted(rows: Sequence[Mapping[str, Any]], field: str) -> dict[str, int]:
    """Per phase, the sum of ``field`` over the ledger's rows."""
    found: dict[str, int] = {}
    for row in rows:
        value = int(row.get(field) or 0)
        if value:
            found[str(row.get("phase"))] = found.get(str(row.get("phase")), 0) + value
    return found


def _phases(counts: Mapping[str, int]) -> str:
    words = {phase: _PHASES.get(phase, (f"{phase} request", f"{phase} requests")) for phase in counts}
    return ", ".join(f"{n:,} {words[phase][n != 1]}" for phase, n in counts.items())


def what_it_did(ledger: Mapping[str, Any], *, resumed: bool, stopped: bool, missing: int = 0) -> str:
    """One line on what this run did: requests sent and answered from the cache (by phase), or that it
    had nothing left to send; whether it resumed an unfinished run, whether the budget stopped it, and how
    many requests are still missing (``missing``: said above in full)."""
    rows = ledger.get("rows") or []
    sent, cached = _counted(rows, "requests"), _counted(rows, "cache_hits")
    failed = sum(_counted(rows, "failed").values())
    again = "resumed the last, unfinished run; " if resumed else ""
    if not sent and not cached and not missing:
        what = "nothing left to send: every answer and judgment it needs was already in the run directory"
        line = f"this run: {again}{what}"
    else:
        total = sum(sent.values())
        parts = [f"sent {total:,} request{'s' * (total != 1)} ({_phases(sent)})" if sent else "sent nothing"]
        if cached:
            parts.append(f"{sum(cached.values()):,} answered from the request cache ({_phases(cached)})")
        if failed:
            parts.append(f"{failed:,} failed")
        if missing:
            parts.append(f"{missing:,} still missing (above)")
        line = f"this run: {again}{'; '.join(parts)}"
    if stopped:
        line += "; the budget stopped it before the rest (skipped, not failed: a larger budget sends them)"
    return line


def where_results_are(root: Path, documents: Sequence[str]) -> str:
    """One line on where the results are: the run directory, the score files written, the page command."""
    files = ", ".join([*documents, "run.json"])
    return f"results: {root}/ ({files}); the page: jurist view {root}"


def closing_lines(
    root: Path,
    ledger: Mapping[str, Any],
    documents: Sequence[str],
    *,
    resumed: bool,
    stopped: bool,
    missing: int = 0,
) -> list[str]:
    """The last lines of every run: what it did, and where its results are."""
    did = what_it_did(ledger, resumed=resumed, stopped=stopped, missing=missing)
    return [did, where_results_are(root, documents)]


def missing_lines(current: Sequence[Mapping[str, Any]], failures_file: Path) -> list[str]:
    """What is still missing at the end of a run, in two kinds: requests that failed after retries (the
    same command retries them), and requests ``--cache-only`` found no answer for in the request cache
    (never sent, so never failed: the same command without ``--cache-only`` sends them)."""
    uncached = [entry for entry in current if entry.get("kind") == "cache"]
    failed = len(current) - len(uncached)
    lines = []
    if failed:
        lines.append(
            f"{failed} request(s) failed after retries and are still missing (run.json 'still_failing'; "
            f"every attempt is kept in {failures_file}). Run the same command again to retry them."
        )
    if uncached:
        lines.append(
            f"{len(uncached)} request(s) are not in the request cache, and --cache-only sends nothing: "
            f"{_missing_by_stage(uncached)}. Nothing was sent (so none is counted as failed); the same "
            "command without --cache-only sends them."
        )
    return lines


def _missing_by_stage(entries: Sequence[Mapping[str, Any]]) -> str:
    """``3 answers (strong 2, base 1), 2 judgments (judge-good of strong 2)``."""
    answers: dict[str, int] = {}
    judgments: dict[str, int] = {}
    for entry in entries:
        if entry.get("stage") == "judge":
            key = f"{entry.get('judge')} of {entry.get('model')}"
            judgments[key] = judgments.get(key, 0) + 1
        else:
            key = str(entry.get("model"))
            answers[key] = answers.get(key, 0) + 1
    parts = []
    for what, counts in (("answer", answers), ("judgment", judgments)):
        if counts:
            n = sum(counts.values())
            each = ", ".join(f"{name} {count}" for name, count in counts.items())
            parts.append(f"{n} {what}{'s' * (n != 1)} ({each})")
    return ", ".join(parts)
