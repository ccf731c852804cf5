"""``jurist run --tasks a,b,c``: several benchmarks for the same models in one process.

Each task is a whole run in its own directory (``OUT/<task>``, so each resumes and shows on its own), but
they share what bounds the machine: one global request limit and per-model limits, one connection pool,
one request cache, one set of managed servers (the embedded model starts once), one progress display.
Their stages run side by side in one event loop, so the answers of one task and the judging of another
overlap. Each task has its own judges, baseline, samples and limit where given
(:mod:`jurist.run.task_options`). At the end, one table: a row per task and model with each task's
headline metric, and a row saying why for a task that has no score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from jurist.errors import JuristError
from jurist.families import RecordedRun, score_family
from jurist.report import interval_text, table_console
from jurist.run.config import RunConfig, RunResult
from jurist.run.pipeline import Pipeline
from jurist.run.plan import battle_scoring_flags, judges_against_baselines, resolve
from jurist.run.session import Session, run_session
from jurist.run.task_options import (
    TaskFlags,
    TaskSettings,
    fit_to_benchmarks,
    load_task,
    parse_tasks,
    task_options,
    task_settings,
)
from jurist.store import write_json_atomic

SUMMARY_FILE = "tasks_summary.json"


def task_config(
    config: RunConfig, task: str, chosen: TaskSettings, root: Path, battles: bool = True
) -> RunConfig:
    """The run of one task: the shared options of ``config`` with the task's own settings; for a task
    whose outcomes are not battles (``battles`` False), without the scoring options only battles take."""
    if not battles:
        pairwise_off = dataclasses.replace(
            config.scoring,
            method="winrate",
            style_control=(),
            length_controlled=False,
            categories=(),
            ensemble=False,
        )
        config = dataclasses.replace(config, scoring=pairwise_off)
    return dataclasses.replace(
        config,
        bench=task,
        bench_options=dict(chosen.options),
        out=root / task,
        judges=list(chosen.judges),
        baseline=chosen.baseline,
        samples=chosen.samples,
        limit=chosen.limit,
    )


def shared_settings(config: RunConfig, tasks: Sequence[str]) -> dict[str, TaskSettings]:
    """The settings of ``config``'s own fields, for every task at once (a caller that gives no per-task
    settings): its judges, baseline, samples and limit as bare values, ``-B TASK:KEY=VALUE`` per task."""
    flags = TaskFlags(
        judges=config.judges,
        baselines=[config.baseline] if config.baseline else [],
        samples=[str(config.samples)] if config.samples else [],
        limits=[str(config.limit)] if config.limit else [],
        bench_options=config.bench_options,
    )
    return task_settings(tasks, flags)


def run_tasks(
    config: RunConfig,
    tasks: Sequence[str],
    console: Console | None = None,
    settings: Mapping[str, TaskSettings] | None = None,
) -> RunResult:
    """Every task of ``tasks`` for ``config``'s models, each with its own ``settings`` (default: the
    config's judges, baseline, samples and limit for every task that takes them); the worst exit code."""
    console = console or Console(stderr=True)
    root = config.out or Path("runs")
    if config.answers_file is not None:
        raise JuristError("--answers names one benchmark's answers: run that benchmark alone (--bench)")
    chosen = settings if settings is not None else shared_settings(config, tasks)
    benches = {task: load_task(task, chosen[task]) for task in tasks}
    fitted = fit_to_benchmarks(chosen, benches)
    battles = {task: judges_against_baselines(bench) for task, bench in benches.items()}
    scoring = battle_scoring_flags(config)
    if scoring and not any(battles.values()):
        raise JuristError(
            f"{', '.join(scoring)}: applies to none of the tasks (none is judged against a baseline)"
        )
    runs = {
        task: Pipeline(
            resolve(task_config(config, task, fitted[task], root, battles[task]), loaded=benches[task]),
            console,
        )
        for task in tasks
    }
    labels = {task: f"{run.plan.bench.name}: " for task, run in runs.items()}
    shared = console  # the lambda keeps it a Console (mypy does not narrow ``console`` inside it)
    results = list(run_session(Session(runs, labels=labels), lambda: shared, config.engine.progress).values())
    modes = [run.plan.mode for run in runs.values()]
    rows = summary_rows(tasks, results, modes)
    write_json_atomic(root / SUMMARY_FILE, {"tasks": list(tasks), "rows": rows})
    table_console().print(summary_table(rows))
    return RunResult(
        max(r.exit_code for r in results),
        rows,
        sum(r.failures for r in results),
        sum(r.requests for r in results),
        root,
    )


def headline(row: Mapping[str, Any], family: str) -> tuple[str, Any, Any, Any] | None:
    """(metric name, value, CI low, CI high) of one task's result row, as its family shows it; None for a
    row that is not a model's score (a baseline's fixed 50)."""
    found = score_family(family).headline(row)
    return None if found is None else (found.metric, found.value, found.ci_low, found.ci_high)


def result_family(result: RunResult) -> str | None:
    """The family of a task's run as its run.json records it (None: the run wrote none, nothing to show)."""
    run = RecordedRun.read(result.run_dir)
    family = run.fields.get("score_family")
    return family if run.has_run_json and isinstance(family, str) else None


STATUS_OF_EXIT = {0: "done", 1: "incomplete", 3: "stopped", 130: "interrupted"}


def no_score_reason(result: RunResult, mode: str) -> str:
    """Why a task's run has no score to report."""
    if mode == "inference-only":
        return "answers only (--inference-only): nothing judged or scored"
    if result.exit_code == 3:
        return "stopped by --max-cost / --max-tokens before anything was scored (a larger budget resumes)"
    if result.failures:
        return f"{result.failures} request(s) failed and no answer could be scored; run again to retry them"
    return f"no answer could be scored (see {result.run_dir})"


def summary_rows(
    tasks: Sequence[str], results: Sequence[RunResult], modes: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One row per (task, model, judge): the task's headline metric, its interval, and where it lives; a
    task with no score has one row saying why, so every task is listed."""
    rows: list[dict[str, Any]] = []
    modes = modes or ["all"] * len(tasks)
    for task, result, mode in zip(tasks, results, modes, strict=True):
        status = STATUS_OF_EXIT.get(result.exit_code, f"exit {result.exit_code}")
        base = {"task": task, "status": status, "run_dir": str(result.run_dir), "exit_code": result.exit_code}
        found_any = False
        family = result_family(result) if result.leaderboard else None
        shown = score_family(family) if family is not None else None
        for row in result.leaderboard:
            found = shown.headline(row) if shown is not None else None
            if found is None:
                continue
            metric, value, low, high = found.metric, found.value, found.ci_low, found.ci_high
            found_any = True
            rows.append(
                {
                    **base,
                    "reason": None if value is not None else no_score_reason(result, mode),
                    "fraction": found.fraction,  # HealthBench reports a 0-1 score, not percent
                    "model": row.get("model"),
                    "judge": row.get("judge"),
                    "metric": metric,
                    "value": value,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
        if not found_any:
            rows.append(
                {
                    **base,
                    "reason": no_score_reason(result, mode),
                    "fraction": False,
                    "model": None,
                    "judge": None,
                    "metric": None,
                    "value": None,
                    "ci_low": None,
                    "ci_high": None,
                }
            )
    return rows


def summary_table(rows: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="jurist: tasks")
    for name in ("task", "model", "judge", "metric", "value", "CI", "status"):
        table.add_column(name, justify="right" if name in ("value", "CI") else "left")

    for row in rows:
        digits = 3 if row["fraction"] else 1  # percentages with one decimal; HealthBench's 0-1 with three

        def fmt(value: Any, digits: int = digits) -> str:
            return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "-"

        ci = interval_text(row["value"], row["ci_low"], row["ci_high"], digits=digits)
        status = row.get("status") or "-"
        if row.get("reason"):
            status = f"{status}: {row['reason']}"
        table.add_row(
            row["task"],
            str(row["model"] or "-"),
            str(row["judge"] or "-"),
            row["metric"] or "-",
            fmt(row["value"]),
            ci,
            status,
        )
    return table


__all__ = [
    "SUMMARY_FILE",
    "headline",
    "parse_tasks",  # kept here too: --tasks parsing moved to jurist.run.task_options
    "run_tasks",
    "summary_rows",
    "summary_table",
    "task_options",
]
