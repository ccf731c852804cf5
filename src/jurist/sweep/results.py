"""sweep.json and sweep.csv: each checkpoint's headline metric per task and judge, with its intervals.

A row is one checkpoint x task x judge x metric: the task's own headline (as ``jurist run --tasks``
reports it) with its 95% interval, and the metric of each sample index with their std and sem
(eval_framework's across-run view of mean@N). Per sample, each kind of scoring says what it can:
rule-checked and rubric tasks score each sample index in their own rows (``across_runs``); a pairwise
task's plain win rate is scored again on each sample's battles; a score that needs the whole set at once
(style control, length control, a fitted rating, judge accuracy) has no per-sample value (null).
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.benchmarks import rubric_suite
from jurist.errors import JuristError
from jurist.families import family_of_metrics
from jurist.ratings import across_runs
from jurist.run import RunPlan, RunResult, card_summary, headline, judges_against_baselines
from jurist.store import write_json_atomic
from jurist.sweep.checkpoints import Checkpoint
from jurist.sweep.phases import one_line
from jurist.sweep.plan import SweepPlan

SWEEP_JSON = "sweep.json"
SWEEP_CSV = "sweep.csv"
VERSION = 1
CSV_COLUMNS = (
    "checkpoint", "step", "task", "judge", "metric", "value", "ci95_low", "ci95_high", "std", "sem",
    "per_sample", "n_samples", "fraction", "run_dir",
)  # fmt: skip


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _plain_win_rate(run: RunPlan) -> bool:
    """Whether the task's headline is the weighted win rate, which one sample's battles can give alone."""
    bench, config = run.bench, run.config
    official = bench.official_scoring
    return (
        judges_against_baselines(bench)
        and "winrate" in bench.metrics
        and not official.style_control
        and not official.length_controlled
        and not bench.score_categories
        and config.scoring.method == "winrate"
        and not config.scoring.style_control
        and not config.scoring.length_controlled
        and not config.scoring.categories
    )


def _win_rate_per_sample(run: RunPlan, judge: Any, model: str) -> list[float] | None:
    from jurist.families import read_battles_file, win_rate_leaderboard
    from jurist.store import sample_of

    path = run.run_dir.battles
    if not path.is_file():
        return None
    by_sample: dict[int, list[dict[str, Any]]] = {}
    for battle in read_battles_file(path):
        if battle.get("judge", "") == (judge or "") and model in (battle["model_a"], battle["model_b"]):
            by_sample.setdefault(sample_of(battle), []).append(battle)
    values: list[float] = []
    for sample in range(run.samples):
        rows = win_rate_leaderboard(by_sample.get(sample, []), set(run.baselines), n_bootstrap=0)
        score = next((r["score"] for r in rows if r["model"] == model and not r.get("baseline")), None)
        if score is None:
            return None  # a sample with no battle: no value for it, so none for the set
        values.append(float(score))
    return values


def per_sample_values(run: RunPlan, row: Mapping[str, Any], metric: str) -> list[float] | None:
    """The headline metric of each sample index, or None where this kind of scoring cannot give it."""
    across = row.get("across_runs")
    if run.bench.rule_suite is not None and isinstance(across, dict):
        runs = across.get(metric)
        return [float(v) for v in runs["per_run"]] if isinstance(runs, dict) else None
    suite = rubric_suite(row.get("suite"))
    if suite is not None and isinstance(across, dict) and "per_run" in across:
        # on the scale the headline is shown on (WritingBench's: its 1-10 score x 10)
        return [suite.shown_factor * float(v) for v in across["per_run"]]
    if metric == "score" and _plain_win_rate(run) and not row.get("category"):
        return _win_rate_per_sample(run, row.get("judge"), str(row.get("model")))
    return None


def result_rows(
    plan: SweepPlan, checkpoint: Checkpoint, task: str, run: RunPlan, result: RunResult
) -> list[dict[str, Any]]:
    """The sweep.json rows of one checkpoint's task: its headline per judge (the baselines left out)."""
    rows: list[dict[str, Any]] = []
    family = family_of_metrics(run.bench.metrics)
    for row in result.leaderboard:
        found = headline(row, family)
        if found is None or row.get("model") != checkpoint.name:
            continue
        name, value, low, high = found
        metric = f"{name} ({row['category']})" if row.get("category") else name
        per_sample = per_sample_values(run, row, name) if row.get("category") is None else None
        spread = across_runs(per_sample) if per_sample else None
        low_n, high_n = _number(low), _number(high)
        rows.append(
            {
                "checkpoint": checkpoint.name,
                "step": checkpoint.step,
                "task": task,
                "judge": row.get("judge") or None,
                "metric": metric,
                "value": _number(value),
                "ci95": [low_n, high_n] if low_n is not None and high_n is not None else None,
                "std": spread["std"] if spread else None,
                "sem": spread["sem"] if spread else None,
                "per_sample": per_sample,
                "n_samples": run.samples,
                "fraction": "bootstrap_std" in row,  # HealthBench's score is 0-1, every other a percent
                "run_dir": str(plan.run_dir(checkpoint, task).relative_to(plan.out)),
            }
        )
    return rows


def card_entries(
    plan: SweepPlan, checkpoint: Checkpoint, task: str, run: RunPlan, say: Callable[[str, str], None]
) -> list[dict[str, Any]]:
    """sweep.json's ``judge_card`` entries of one checkpoint's task: per judge, each probe's estimate,
    interval and flag from the run's judge_card.json (none when the run made no card), so a judge's drift
    over a training run reads from one file. A card that cannot be read is said (``say``) and left out:
    the scores stand without it."""
    try:
        summary = card_summary(run.run_dir.root)
    except (JuristError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        say(f"{checkpoint.name}: {task}: judge card not read: {one_line(exc)}", "yellow")
        return []
    if summary is None:
        return []
    where = str(plan.run_dir(checkpoint, task).relative_to(plan.out))
    return [
        {"checkpoint": checkpoint.name, "step": checkpoint.step, "task": task, "judge": judge, **found,
         "run_dir": where}
        for judge, found in summary.items()
    ]  # fmt: skip


def summed_usage(plan: SweepPlan) -> dict[str, Any]:
    """The ledger of every run directory of the sweep added up (issue 16: a sweep sums its runs)."""
    from jurist.run import usage_of_runs

    dirs = [
        plan.run_dir(c, task)
        for c in plan.checkpoints
        for task in plan.tasks
        if (plan.run_dir(c, task) / "run.json").is_file()
    ]
    if not dirs:
        return {}
    try:
        total = usage_of_runs(dirs)
    except Exception:  # noqa: BLE001 - a run.json without a ledger leaves the sum out, not the sweep
        return {}
    total.pop("budget", None)
    return total


def _created(path: Path) -> str:
    """When the sweep was first written (kept on resume), else now, in UTC."""
    import json

    try:
        earlier = json.loads(path.read_text(encoding="utf-8")).get("created")
    except (OSError, ValueError, AttributeError):
        earlier = None
    return earlier if isinstance(earlier, str) else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def sweep_document(
    plan: SweepPlan,
    states: Mapping[str, tuple[str, str | None]],
    results: Sequence[Mapping[str, Any]],
    judges: Sequence[str],
    timings: Mapping[str, Mapping[str, Any]] | None = None,
    cards: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """sweep.json's content: ``states`` maps a checkpoint to (status, one-line error); ``timings`` (a
    watched sweep's) to when it was found complete and how long until its first request; ``cards``: the
    judge-card entries (:func:`card_entries`) of every checkpoint x task x judge."""
    timings = timings or {}
    return {
        "version": VERSION,
        "name": plan.name,
        "created": _created(plan.out / SWEEP_JSON),
        "checkpoints": [
            {
                "name": c.name,
                "step": c.step,
                "path": str(c.path),
                "status": states.get(c.name, ("incomplete", None))[0],
                "error": states.get(c.name, ("incomplete", None))[1],
                **timings.get(c.name, {}),
            }
            for c in plan.checkpoints
        ],
        "tasks": list(plan.tasks),
        "samples": _samples(plan, results),
        "samples_by_task": dict(plan.samples),
        "baselines": dict(plan.baselines),
        "judges": list(judges),
        "results": [dict(row) for row in results],
        "judge_card": [dict(entry) for entry in cards],
        "usage": summed_usage(plan),
    }


def _samples(plan: SweepPlan, results: Sequence[Mapping[str, Any]]) -> int:
    """The answers per prompt: ``--samples`` where every task has it, else the largest any task ran (a
    task without it runs its benchmark's default)."""
    if plan.samples and set(plan.samples) == set(plan.tasks):
        return max(plan.samples.values())
    return max([*(int(row["n_samples"]) for row in results), *plan.samples.values()], default=1)


def csv_text(results: Sequence[Mapping[str, Any]]) -> str:
    """sweep.csv: the rows flat (ci95 as ci95_low and ci95_high, per_sample ';'-joined)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in results:
        flat = {key: row.get(key) for key in CSV_COLUMNS if key in row}
        ci95 = row.get("ci95") or (None, None)
        flat["ci95_low"], flat["ci95_high"] = ci95[0], ci95[1]
        per_sample = row.get("per_sample")
        flat["per_sample"] = ";".join(repr(v) for v in per_sample) if per_sample else None
        writer.writerow({key: "" if value is None else value for key, value in flat.items()})
    return out.getvalue()


def write_sweep_files(plan: SweepPlan, document: Mapping[str, Any]) -> None:
    """sweep.json and sweep.csv, each replaced whole (a reader never sees half a file)."""
    write_json_atomic(plan.out / SWEEP_JSON, document)
    tmp = plan.out / f"{SWEEP_CSV}.tmp"
    tmp.write_text(csv_text(document["results"]), encoding="utf-8")
    tmp.replace(plan.out / SWEEP_CSV)
