"""``run_sweep``: a sweep from its plan to its table and plots, the one entry the command and programs use
(:class:`jurist.sweep.schedule.Sweep` does the work)."""

from __future__ import annotations

from rich.console import Console

from jurist.engine import ServerFactory
from jurist.sweep.plan import SweepPlan
from jurist.sweep.schedule import Sweep, SweepResult
from jurist.sweep.watch import CheckpointWatcher
from jurist.track import Trackers


def run_sweep(
    plan: SweepPlan,
    console: Console | None = None,
    *,
    server_factory: ServerFactory | None = None,
    ray_address: str | None = None,
    plots: bool = True,
    watcher: CheckpointWatcher | None = None,
    trackers: Trackers | None = None,
    warm_swap: bool = False,
) -> SweepResult:
    """The sweep, then its table and plots; KeyboardInterrupt (after sweep.json is written) when stopped.
    ``watcher``: evaluate checkpoints as training completes them (``--watch``); ``trackers``: log each
    checkpoint's points to them (``--track``); ``warm_swap``: each slot keeps its vLLM server and swaps in
    the next checkpoint's weights (``--warm-swap``)."""
    console = console or Console(stderr=True)
    sweep = Sweep(
        plan,
        console,
        server_factory=server_factory,
        ray_address=ray_address,
        watcher=watcher,
        trackers=trackers,
        plots=plots and watcher is not None,
        warm_swap=warm_swap,
    )
    try:
        result = sweep.run()
    finally:
        if trackers is not None:
            trackers.close()
    plan = sweep.plan  # --watch: with the checkpoints it found
    from jurist.sweep.report import print_summary

    print_summary(plan, result.document)
    if plots:
        sweep.write_plots()
    return result
