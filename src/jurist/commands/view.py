"""``jurist view RUN... [--out FILE.html] [--serve]``: the run browser, as a file or served on 127.0.0.1.

A thin command over :mod:`jurist.view`. Several run directories are joined question by question, so two
checkpoints of a sweep (or two judges' runs) can be compared verdict by verdict. The written file needs no
network and no server; ``--serve`` is for runs too large to inline.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.view import ViewData

LARGE_PAGE = 400 * 1024 * 1024
"""A written page above this size is slow to open; the command then suggests ``--serve``."""


def view(
    runs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN", help="run directories; several are compared question by question"),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="the HTML file to write (default: the first RUN/view.html)")
    ] = None,
    serve: Annotated[
        bool, typer.Option("--serve", help="serve the page on 127.0.0.1 instead, loading rows on demand")
    ] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="--serve: the port (0: any free one)")] = 0,
    categories: Annotated[
        bool,
        typer.Option("--categories/--no-categories", help="score each category for the summary tab"),
    ] = True,
) -> None:
    """Browse a run: every question, answers side by side, judge reasoning, verdicts, filters, search."""
    from rich.console import Console

    from jurist.view import ViewData

    for run in runs:
        if not run.is_dir():
            raise JuristError(f"jurist view: {run} is not a run directory")
    if serve and out is not None:
        raise JuristError("--out and --serve exclude each other: --serve writes no file")
    console = Console(stderr=True, highlight=False)
    data = ViewData(runs)
    if serve:
        _serve(data, port, categories, console)
        return
    from jurist.view import write_page

    target = out if out is not None else runs[0] / "view.html"
    written = write_page(data, target, categories=categories)
    console.print(
        f"wrote {written.path} ({written.size / 1e6:.1f} MB, {written.rows:,} rows) in "
        f"{written.seconds:.1f} s; open it in a browser (no network needed)",
        markup=False,
    )
    if written.size > LARGE_PAGE:
        console.print(
            "note: a page this large opens slowly; jurist view --serve loads rows on demand", markup=False
        )


def _serve(data: ViewData, port: int, categories: bool, console: Console) -> None:
    from jurist.view import ViewServer

    try:
        server = ViewServer(data, port=port, categories=categories)
    except OSError as exc:
        raise JuristError(f"--serve: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from None
    console.print(f"serving {len(data.rows):,} rows at {server.url} (Ctrl-C stops)", markup=False)
    try:
        server.serve()
    finally:
        server.close()


def register(app: typer.Typer) -> None:
    """Add ``jurist view`` to the CLI."""
    app.command("view", cls=JuristCommand)(view)
