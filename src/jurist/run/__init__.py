"""The runner: a run resolved into a :class:`RunPlan` before its first request, one life cycle
(:mod:`~jurist.run.session`) for ``jurist run``, ``--tasks`` and the sweep's phases, the answer and judge
stages, the judge feed, shipped answers, the budget and the end of a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.run.batching import BatchChoice, batch_choice
    from jurist.run.budget import RunLedger, resolve_budget, show_usage, usage_of_runs
    from jurist.run.card import card_summary
    from jurist.run.collection import hold_collection, resume_collection
    from jurist.run.config import (
        BudgetSettings,
        EngineSettings,
        JudgeCardSettings,
        RunConfig,
        RunResult,
        ScoringSettings,
    )
    from jurist.run.dry import dry_run
    from jurist.run.generate import new_progress
    from jurist.run.interrupts import (
        FORCED_STOP,
        GracefulInterrupt,
        interrupt_on_signals,
        run_interruptibly,
        sigterm_as_interrupt,
        stop_loop_on_signals,
    )
    from jurist.run.merge import MergeReport, checked_shards, merge_shards
    from jurist.run.merge_checks import ShardDir
    from jurist.run.pipeline import Pipeline, run_pipeline, run_plan
    from jurist.run.plan import RunPlan, default_run_dir, judges_against_baselines, resolve
    from jurist.run.ray_shards import run_on_ray
    from jurist.run.session import Session, all_or_none
    from jurist.run.shards import SHARD_FILE, ShardChoice, fingerprint, shard_choice
    from jurist.run.task_options import (
        TaskFlags,
        TaskSettings,
        fit_to_benchmarks,
        load_task,
        parse_tasks,
        split_per_task,
        task_options,
        task_settings,
    )
    from jurist.run.tasks import headline, run_tasks
    from jurist.run.tracking import run_rows, track_rows

_HOMES = {
    "card_summary": "card",
    "run_rows": "tracking",
    "track_rows": "tracking",
    "BatchChoice": "batching",
    "batch_choice": "batching",
    "RunLedger": "budget",
    "resolve_budget": "budget",
    "show_usage": "budget",
    "usage_of_runs": "budget",
    "hold_collection": "collection",
    "resume_collection": "collection",
    "RunConfig": "config",
    "EngineSettings": "config",
    "ScoringSettings": "config",
    "BudgetSettings": "config",
    "JudgeCardSettings": "config",
    "RunResult": "config",
    "dry_run": "dry",
    "new_progress": "generate",
    "FORCED_STOP": "interrupts",
    "GracefulInterrupt": "interrupts",
    "run_interruptibly": "interrupts",
    "interrupt_on_signals": "interrupts",
    "sigterm_as_interrupt": "interrupts",
    "stop_loop_on_signals": "interrupts",
    "Pipeline": "pipeline",
    "run_pipeline": "pipeline",
    "run_plan": "pipeline",
    "judges_against_baselines": "plan",
    "RunPlan": "plan",
    "resolve": "plan",
    "MergeReport": "merge",
    "merge_shards": "merge",
    "checked_shards": "merge",
    "ShardDir": "merge_checks",
    "default_run_dir": "plan",
    "run_on_ray": "ray_shards",
    "SHARD_FILE": "shards",
    "ShardChoice": "shards",
    "fingerprint": "shards",
    "shard_choice": "shards",
    "Session": "session",
    "all_or_none": "session",
    "TaskFlags": "task_options",
    "TaskSettings": "task_options",
    "fit_to_benchmarks": "task_options",
    "load_task": "task_options",
    "parse_tasks": "task_options",
    "split_per_task": "task_options",
    "task_options": "task_options",
    "task_settings": "task_options",
    "headline": "tasks",
    "run_tasks": "tasks",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "run_rows",
    "track_rows",
    "MergeReport",
    "SHARD_FILE",
    "ShardChoice",
    "fingerprint",
    "merge_shards",
    "checked_shards",
    "ShardDir",
    "default_run_dir",
    "run_on_ray",
    "shard_choice",
    "card_summary",
    "BatchChoice",
    "FORCED_STOP",
    "GracefulInterrupt",
    "Pipeline",
    "RunConfig",
    "hold_collection",
    "interrupt_on_signals",
    "resume_collection",
    "sigterm_as_interrupt",
    "stop_loop_on_signals",
    "EngineSettings",
    "ScoringSettings",
    "BudgetSettings",
    "JudgeCardSettings",
    "RunPlan",
    "RunLedger",
    "RunResult",
    "Session",
    "TaskFlags",
    "TaskSettings",
    "all_or_none",
    "batch_choice",
    "dry_run",
    "fit_to_benchmarks",
    "headline",
    "judges_against_baselines",
    "load_task",
    "new_progress",
    "parse_tasks",
    "resolve",
    "resolve_budget",
    "run_interruptibly",
    "run_pipeline",
    "run_plan",
    "run_tasks",
    "show_usage",
    "split_per_task",
    "task_options",
    "task_settings",
    "usage_of_runs",
]
