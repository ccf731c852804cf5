"""The ``jurist`` command line: the app, its error handling and exit codes; each command is a module of
``jurist.commands`` (``jurist run`` is ``commands/run.py``)."""

from __future__ import annotations

import logging
import sys
from typing import Annotated, Any

import typer
import typer.core

from jurist.errors import JuristError, StorageError
from jurist.redact import mask


class _CommandList(typer.core.TyperGroup):
    """The root group: ``jurist --help`` (the list of commands) in click's plain layout. Typer's rich
    panels import rich, its markdown parser and typer's rich_utils, about half of that command's time
    (``bench/bench_help.py``); each command's own help (``jurist run --help``), where the options are,
    keeps them."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        super(typer.core.TyperGroup, self).format_help(ctx, formatter)


app = typer.Typer(
    cls=_CommandList,
    add_completion=False,
    no_args_is_help=False,
    help="jurist: LLM-as-a-judge evaluation: generate answers, judge them pairwise, score, rank.",
)


def _error_line(text: str, *, exit_code: int) -> None:
    """``error: text`` on stderr, red, the text never read as markup (it may hold ``[extras]``); rich is
    imported here, on the way out, so that ``jurist --help`` never loads it."""
    from rich.console import Console
    from rich.text import Text

    Console(stderr=True).print(Text("error: ", style="red") + Text(text), highlight=False, soft_wrap=True)
    sys.exit(exit_code)


def _interrupted_line() -> None:
    from rich.console import Console

    Console(stderr=True).print(
        "[yellow]interrupted: everything finished so far is saved; run again to resume[/yellow]"
    )


def _print_version(value: bool) -> None:
    if value:
        from jurist import __version__

        print(f"jurist {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="print jurist's version"),
    ] = False,
) -> None:
    """jurist: LLM-as-a-judge evaluation harness."""


# Further subcommands live in their own modules; each exposes ``register(app)``.
_COMMAND_MODULES: tuple[str, ...] = (
    "run", "judgebench", "check", "judges", "show", "transfer", "view", "plot", "sweep", "list", "merge",
    "serve", "compare",
)  # fmt: skip


def _register_commands() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        importlib.import_module(f"jurist.commands.{name}").register(app)


def main() -> None:
    from jurist.run import interrupt_on_signals

    interrupt_on_signals()  # first: importing the commands takes a moment
    logging.basicConfig(level=logging.WARNING, format="jurist: %(message)s")
    try:
        _register_commands()
        code = app(standalone_mode=False)  # click hands back typer.Exit codes instead of raising them
    except JuristError as exc:
        _error_line(mask(str(exc)), exit_code=2)  # model names, install hints with [extras]: no markup
    except StorageError as exc:
        _error_line(mask(str(exc)), exit_code=1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):  # the command line parser turns Ctrl-C into Abort
        _interrupted_line()
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: unknown option, bad value, missing argument
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _error_line(str(exc), exit_code=2)
        sys.exit(2)
    if code == 130:  # typer turns Ctrl-C (and our SIGTERM handler) into exit code 130
        _interrupted_line()
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
