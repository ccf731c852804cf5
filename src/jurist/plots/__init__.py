"""Training-curve plots of one or more sweeps: metric vs step per task, an all-tasks grid, judge comparisons.

``jurist sweep`` calls :func:`write_sweep_plots` at its end and ``jurist plot`` calls it on finished
sweeps. Reading and planning need no matplotlib; only drawing imports it, with an install hint when absent.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from jurist.plots.curve_plans import ERROR_BARS, PlotPlan, plan_plots
from jurist.plots.curves import FORMATS, PLOT_HINT, check_formats, draw_figures
from jurist.plots.sweep_data import SweepData, read_sweep

__all__ = ["ERROR_BARS", "FORMATS", "PLOT_HINT", "check_formats", "plan_sweep_plots", "write_sweep_plots"]

log = logging.getLogger("jurist.plots")


def plan_sweep_plots(sweep_dirs: Sequence[Path], *, error_bars: str = "ci95") -> PlotPlan:
    """Read and check every ``sweep.json`` and decide the figures; nothing is drawn or written."""
    if not sweep_dirs:
        raise ValueError("plan_sweep_plots needs at least one sweep directory")
    sweeps: list[SweepData] = [read_sweep(Path(directory)) for directory in sweep_dirs]
    return plan_plots(sweeps, error_bars)


def write_sweep_plots(
    sweep_dirs: Sequence[Path],
    out_dir: Path,
    *,
    error_bars: str = "ci95",
    formats: Sequence[str] = ("png", "svg"),
) -> list[Path]:
    """Draw the sweeps' curves into ``out_dir`` (``<task>``, ``all_tasks``, ``judges_<task>``, each in
    every format) and return the files written. What could not be drawn as asked (results with no value,
    failed checkpoints, points without the chosen error bar) is logged once, one line per kind."""
    chosen = check_formats(formats)
    plan = plan_sweep_plots(sweep_dirs, error_bars=error_bars)
    for note in plan.notes:
        log.warning("plot: %s", note)
    return draw_figures(plan.figures, out_dir, chosen)
