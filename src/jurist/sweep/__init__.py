"""``jurist sweep``: many checkpoints of a training run x many tasks x N samples, in one command.

``checkpoints`` finds them, ``build`` checks the command into a ``plan``, ``schedule`` runs it (local GPU
or CPU slots from a shared queue, or ``ray_backend`` on a Ray cluster): ``generation`` answers each
checkpoint's tasks on its own server, ``judging`` judges and scores them on the judges' limit, ``results``
writes sweep.json and sweep.csv, ``report`` the table and the plots; ``watch`` finds the checkpoints a
training run completes while a ``--watch`` sweep runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.sweep.build import SweepJudges, SweepPlacement, SweepTasks, build_plan
    from jurist.sweep.launch import run_sweep
    from jurist.sweep.plan import SweepPlan
    from jurist.sweep.shards import merge_sweeps, shard_sweep, write_sweep_shard
    from jurist.sweep.watch import CheckpointWatcher, WatchRules

_HOMES = {
    "build_plan": "build",
    "SweepJudges": "build",
    "SweepPlacement": "build",
    "SweepTasks": "build",
    "run_sweep": "launch",
    "merge_sweeps": "shards",
    "shard_sweep": "shards",
    "write_sweep_shard": "shards",
    "SweepPlan": "plan",
    "CheckpointWatcher": "watch",
    "WatchRules": "watch",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "CheckpointWatcher",
    "SweepJudges",
    "SweepPlacement",
    "SweepPlan",
    "SweepTasks",
    "WatchRules",
    "build_plan",
    "merge_sweeps",
    "run_sweep",
    "shard_sweep",
    "write_sweep_shard",
]
