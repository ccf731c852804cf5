"""The ``jurist`` command line: the app, its error handling and exit codes; each command is a module of
``jurist.commands`` (``jurist run`` is ``commands/run.py``)."""

from __future__ import annotations

import logging
import signal
import sys
from typing import Annotated, Any

import typer
import typer.core
from rich.console import Console
from rich.text import Text

from jurist.errors import JuristError, StorageError
from jurist.redact import mask

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    help="jurist: LLM-as-a-judge evaluation: generate answers, judge them pairwise, score, rank.",
)
err_console = Console(stderr=True)


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
    "run", "judgebench", "check", "judges", "show", "transfer", "view", "plot", "sweep", "list",
)  # fmt: skip


def _quiet_flags() -> None:
    """typer prints ``<bool>`` beside every flag in --help; a flag takes no value, so show no type."""
    option = getattr(typer.core, "TyperOption", None)
    shown = getattr(option, "display_type_rich", None)
    if option is None or shown is None or getattr(shown, "_jurist", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich._jurist = True  # type: ignore[attr-defined]
    option.display_type_rich = display_type_rich


def _register_commands() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        importlib.import_module(f"jurist.commands.{name}").register(app)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # said in one line below; a run installs its own handlers (run/interrupts)


def main() -> None:
    signal.signal(signal.SIGINT, _interrupt)  # first: importing the commands takes a moment
    signal.signal(signal.SIGTERM, _interrupt)
    logging.basicConfig(level=logging.WARNING, format="jurist: %(message)s")
    try:
        _register_commands()
        _quiet_flags()
        code = app(standalone_mode=False)  # click hands back typer.Exit codes instead of raising them
    except JuristError as exc:
        err_console.print(
            Text("error: ", style="red") + Text(mask(str(exc))), highlight=False, soft_wrap=True
        )  # the message may hold model names or install hints with [extras]: never markup
        sys.exit(2)
    except StorageError as exc:
        err_console.print(
            Text("error: ", style="red") + Text(mask(str(exc))), highlight=False, soft_wrap=True
        )
        sys.exit(1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):  # the command line parser turns Ctrl-C into Abort
        err_console.print(
            "[yellow]interrupted: everything finished so far is saved; run again to resume[/yellow]"
        )
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: unknown option, bad value, missing argument
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            err_console.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(2)
    if code == 130:  # typer turns Ctrl-C (and our SIGTERM handler) into exit code 130
        err_console.print(
            "[yellow]interrupted: everything finished so far is saved; run again to resume[/yellow]"
        )
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
