"""``jurist run --track … --step N``: a run's headline metrics into the experiment trackers, at a step.

The same series as a sweep's (:mod:`jurist.track`), from the rows the run's table shows, so an evaluation
run by hand after a training job sits beside the sweep's points; the bounds are named by the run's own
interval level (``…_ci90_low`` at the default ``--ci 0.9``). The ledger of what each tracker received is
the run directory's ``tracked.json`` (``OUT/tracked.json`` for ``--tasks``), so a failed tracker is
back-filled by running the same command again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist.run.config import RunResult
from jurist.run.tasks import summary_rows
from jurist.track import Point, Trackers, row_points


def run_rows(task: str, result: RunResult) -> list[dict[str, Any]]:
    """A single run's table rows as ``--tasks`` makes them (a question file's task: its file name)."""
    name = Path(task).stem if Path(task).suffix else task
    return summary_rows([name], [result])


def track_rows(
    targets: Sequence[str], step: int, rows: Sequence[dict[str, Any]], ci_level: float, directory: Path
) -> None:
    """Log each row's headline (per task, model and judge) at ``step`` to every tracker of ``targets``."""
    several = len({row.get("model") for row in rows}) > 1
    interval = f"ci{round(ci_level * 100)}"
    points: list[Point] = []
    for row in rows:
        bounds = [row.get("ci_low"), row.get("ci_high")]
        points.extend(row_points({**row, "ci95": bounds}, step, with_model=several, interval=interval))
    trackers = Trackers(targets, directory, directory.name)
    try:
        trackers.log(points)
    finally:
        trackers.close()
