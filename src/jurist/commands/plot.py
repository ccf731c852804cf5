"""``jurist plot SWEEP_DIR... [--out DIR] [--error-bars ci95|sem|std|none] [--format png,svg]``.

A thin command over :mod:`jurist.plots`: training curves of finished (or partly finished) sweeps, the same
files ``jurist sweep`` writes at its end. Several sweep directories are drawn as one line each, so two
training runs can be compared step by step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError


def plot(
    sweep_dirs: Annotated[
        list[Path],
        typer.Argument(metavar="SWEEP_DIR", help="sweep directories (each holds a sweep.json)"),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="folder for the plot files (default: the first SWEEP_DIR/plots)"),
    ] = None,
    error_bars: Annotated[
        str, typer.Option("--error-bars", help="ci95 (the task's 95% CI) | sem | std (over samples) | none")
    ] = "ci95",
    fmt: Annotated[str, typer.Option("--format", help="png, svg or png,svg")] = "png,svg",
) -> None:
    """Draw training curves of sweeps: metric vs step per task, an all-tasks grid, and a judge comparison
    where several judges scored the same checkpoints.

    Exit codes: 0 written, 1 nothing to plot (no checkpoint has a value), 2 usage or input error."""
    from rich.console import Console

    from jurist.plots import ERROR_BARS, check_formats, write_sweep_plots

    if error_bars not in ERROR_BARS:
        raise JuristError(f"--error-bars: {error_bars!r} is not one of {', '.join(ERROR_BARS)}")
    formats = check_formats(fmt.split(","))
    for directory in sweep_dirs:
        if not directory.is_dir():
            raise JuristError(
                f"jurist plot: {directory} is not a directory (give a SWEEP_DIR of jurist sweep)"
            )
    target = out if out is not None else sweep_dirs[0] / "plots"
    written = write_sweep_plots(sweep_dirs, target, error_bars=error_bars, formats=formats)
    console = Console(stderr=True, highlight=False)
    if not written:
        console.print(
            "jurist plot: nothing to plot: no checkpoint of these sweeps has a value",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
    stems = list(dict.fromkeys(path.stem for path in written))
    suffixes = list(dict.fromkeys(path.suffix.lstrip(".") for path in written))
    console.print(
        f"wrote {len(written)} files to {target}: {', '.join(stems)} ({', '.join(suffixes)})",
        markup=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Add ``jurist plot`` to the CLI."""
    app.command("plot", cls=JuristCommand)(plot)
