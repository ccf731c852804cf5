"""The runner: a run resolved into a :class:`RunPlan` before its first request, one life cycle
(:mod:`~jurist.run.session`) for ``jurist run``, ``--tasks`` and the sweep's phases, the answer and judge
stages, the judge feed, shipped answers, the budget and the end of a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.run.batching import BatchChoice, batch_choice
    from jurist.run.budget import show_usage, usage_of_runs
    from jurist.run.config import RunConfig, RunResult
    from jurist.run.dry import dry_run
    from jurist.run.generate import new_progress
    from jurist.run.interrupts import FORCED_STOP, GracefulInterrupt, run_interruptibly
    from jurist.run.pipeline import Pipeline, run_pipeline
    from jurist.run.plan import RunPlan, judges_against_baselines, resolve
    from jurist.run.session import Session, all_or_none
    from jurist.run.tasks import headline, parse_tasks, run_tasks, task_options
    from jurist.run.tracking import run_rows, track_rows

_HOMES = {
    "run_rows": "tracking",
    "track_rows": "tracking",
    "BatchChoice": "batching",
    "batch_choice": "batching",
    "show_usage": "budget",
    "usage_of_runs": "budget",
    "RunConfig": "config",
    "RunResult": "config",
    "dry_run": "dry",
    "new_progress": "generate",
    "FORCED_STOP": "interrupts",
    "GracefulInterrupt": "interrupts",
    "run_interruptibly": "interrupts",
    "Pipeline": "pipeline",
    "run_pipeline": "pipeline",
    "judges_against_baselines": "plan",
    "RunPlan": "plan",
    "resolve": "plan",
    "Session": "session",
    "all_or_none": "session",
    "headline": "tasks",
    "parse_tasks": "tasks",
    "run_tasks": "tasks",
    "task_options": "tasks",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "run_rows",
    "track_rows",
    "BatchChoice",
    "FORCED_STOP",
    "GracefulInterrupt",
    "Pipeline",
    "RunConfig",
    "RunPlan",
    "RunResult",
    "Session",
    "all_or_none",
    "batch_choice",
    "dry_run",
    "headline",
    "judges_against_baselines",
    "new_progress",
    "parse_tasks",
    "resolve",
    "run_interruptibly",
    "run_pipeline",
    "run_tasks",
    "show_usage",
    "task_options",
    "usage_of_runs",
]
