"""``jurist run --tasks a,b,c``: several benchmarks for the same models in one process.

Each task is a whole run in its own directory (``OUT/<task>``, so each resumes and shows on its own), but
they share what bounds the machine: one global request limit and per-model limits, one connection pool,
one request cache, one set of managed servers (the embedded model starts once), one progress display.
Their stages run side by side in one event loop, so the answers of one task and the judging of another
overlap. At the end, one table: a row per task and model with each task's headline metric.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from jurist.errors import JuristError
from jurist.report import interval_text
from jurist.report.formats import table_console
from jurist.run.config import RunConfig, RunResult
from jurist.run.pipeline import Pipeline
from jurist.run.plan import resolve
from jurist.run.session import Session, run_session
from jurist.store.jsonl import write_json_atomic

SUMMARY_FILE = "tasks_summary.json"


def parse_tasks(text: str) -> list[str]:
    """``a,b,c`` as a list, each once, in order; an empty list is a usage error."""
    tasks = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not tasks:
        raise JuristError("--tasks: name at least one benchmark (e.g. --tasks ifeval,healthbench)")
    return tasks


def task_options(options: dict[str, str], tasks: Sequence[str]) -> dict[str, dict[str, str]]:
    """``-B TASK:KEY=VALUE`` sorted to its task; a bare ``-B KEY=VALUE`` is ambiguous with several tasks."""
    chosen: dict[str, dict[str, str]] = {task: {} for task in tasks}
    for key, value in options.items():
        task, sep, name = key.partition(":")
        if not sep:
            raise JuristError(f"-B {key}: with --tasks, say which task it is for: -B TASK:{key}=VALUE")
        if task not in chosen:
            raise JuristError(f"-B {key}: {task!r} is not one of --tasks ({', '.join(tasks)})")
        chosen[task][name] = value
    return chosen


def run_tasks(config: RunConfig, tasks: Sequence[str], console: Console | None = None) -> RunResult:
    """Every task of ``tasks`` for ``config``'s models and judges; the worst exit code of them all."""
    console = console or Console(stderr=True)
    root = config.out or Path("runs")
    if config.answers_file is not None:
        raise JuristError("--answers names one benchmark's answers: run that benchmark alone (--bench)")
    options = task_options(config.bench_options, tasks)
    runs = {
        task: Pipeline(
            resolve(dataclasses.replace(config, bench=task, bench_options=options[task], out=root / task)),
            console,
        )
        for task in tasks
    }
    labels = {task: f"{run.bench.name}: " for task, run in runs.items()}
    results = list(run_session(Session(runs, labels=labels), console, config.progress).values())
    rows = summary_rows(tasks, results)
    write_json_atomic(root / SUMMARY_FILE, {"tasks": list(tasks), "rows": rows})
    table_console().print(summary_table(rows))
    return RunResult(
        max(r.exit_code for r in results),
        rows,
        sum(r.failures for r in results),
        sum(r.requests for r in results),
        root,
    )


def headline(row: dict[str, Any]) -> tuple[str, Any, Any, Any] | None:
    """(metric name, value, CI low, CI high) of one task's result row, whatever kind of work it scored;
    None for a row that is not a model's score (a baseline's fixed 50)."""
    if row.get("baseline"):
        return None
    name = row.get("headline")
    if isinstance(name, str):  # rule-checked: the suite's headline metric
        return name, row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    for name in ("score", "overall_x10", "rating"):
        if name in row:  # kept when None (every answer unscored): the table says the task has no score
            low, high = row.get("ci_low"), row.get("ci_high")
            if name == "overall_x10" and low is not None and high is not None:
                low, high = 10 * low, 10 * high
            return name, row[name], low, high
    return None


def summary_rows(tasks: Sequence[str], results: Sequence[RunResult]) -> list[dict[str, Any]]:
    """One row per (task, model, judge): the task's headline metric, its interval, and where it lives."""
    rows: list[dict[str, Any]] = []
    for task, result in zip(tasks, results, strict=True):
        for row in result.leaderboard:
            found = headline(row)
            if found is None:
                continue
            metric, value, low, high = found
            rows.append(
                {
                    "task": task,
                    "fraction": "bootstrap_std" in row,  # HealthBench reports a 0-1 score, not percent
                    "model": row.get("model"),
                    "judge": row.get("judge"),
                    "metric": metric,
                    "value": value,
                    "ci_low": low,
                    "ci_high": high,
                    "run_dir": str(result.run_dir),
                    "exit_code": result.exit_code,
                }
            )
    return rows


def summary_table(rows: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="jurist: tasks")
    for name in ("task", "model", "judge", "metric", "value", "CI"):
        table.add_column(name, justify="right" if name in ("value", "CI") else "left")

    for row in rows:
        digits = 3 if row["fraction"] else 1  # percentages with one decimal; HealthBench's 0-1 with three

        def fmt(value: Any, digits: int = digits) -> str:
            return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "-"

        ci = interval_text(row["value"], row["ci_low"], row["ci_high"], digits=digits)
        table.add_row(
            row["task"], str(row["model"]), str(row["judge"] or "-"), row["metric"], fmt(row["value"]), ci
        )
    return table
