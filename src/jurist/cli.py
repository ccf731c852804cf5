"""The ``jurist`` command line: the app, its error handling and exit codes; each command is a module of
``jurist.commands`` (``jurist run`` is ``commands/run.py``), imported when it runs (:data:`COMMANDS`), and
the process ends through :func:`entry` once the command is done."""

from __future__ import annotations

import logging
import sys
from typing import Annotated, Any, NoReturn

import typer
import typer.core

from jurist.errors import JuristError, StorageError
from jurist.redact import mask

COMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "run",
        "Answer a benchmark, then judge each model against the baseline (two games, swapped) or check its"
        " answers by rule (ifeval, ifbench), and print scores and what it cost.",
    ),
    "check": (
        "check",
        "Send a one-token request to each endpoint and check keys; exit 1 if anything is wrong.",
    ),
    "show": ("show", "Score a run again from its outcomes, as the run did unless options say otherwise."),
    "view": (
        "view",
        "Browse a run: every question, answers side by side, judge reasoning, verdicts, filters, search.",
    ),
    "plot": (
        "plot",
        "Draw training curves of sweeps: metric vs step per task, an all-tasks grid, and a judge comparison"
        " where several judges scored the same checkpoints.",
    ),
    "sweep": (
        "sweep",
        "Evaluate every checkpoint of a training run on every task: one run directory per checkpoint and"
        " task (SWEEP_DIR/<checkpoint>/<task>), sweep.json and sweep.csv (checkpoint x task x metric with"
        " 95% CIs and the spread over samples), training-curve plots in SWEEP_DIR/plots. Re-running resumes.",
    ),
    "list": (
        "list",
        "List every benchmark: kind, default samples, reference judge, and whether its data and judge"
        " prompts are here (and where from); for what is missing, the one line that gets it. Sends nothing.",
    ),
    "merge": (
        "merge",
        "Join the shards of one run (or one sweep) into OUT, each item once, and score it as one run:"
        " `jurist show OUT` then prints what a single process would have. Refuses shards of different"
        " plans, naming the field.",
    ),
    "compare": (
        "compare",
        "Paired differences between runs on the questions both answered, per task: interval, p-value,"
        " Holm's correction across tasks, minimum detectable difference and a decision for each later run"
        " against the first.",
    ),
    "judgebench": ("judgebench", "JudgeBench utilities (run it with: jurist run --bench judgebench)."),
    "judges": ("judges", "Compare the judges of a run, or show its judge card."),
    "import": ("transfer", "Import another harness's answers and judgments as a jurist run."),
    "export": ("transfer", "Export a jurist run in another harness's file layout."),
    "serve": ("serve", "Serve a benchmark's judge as a reward for RL trainers."),
}
"""Each command: the module of ``jurist.commands`` that defines it (its ``register(app)`` adds it) and the
first paragraph of its help, which ``jurist --help`` lists. A command's module is imported only when that
command runs: importing all of them (and what they import: rich, the run's configuration) was most of
``jurist --help``'s time. tests/test_cli.py checks this table against the commands themselves."""


class _AsGiven:
    """The coercion of the root's ``--help``: its value is None, or the flag's True, as they come."""

    @staticmethod
    def coerce(value: Any, param: Any, ctx: Any) -> Any:
        return value


_AS_GIVEN = _AsGiven()


class _CommandList(typer.core.TyperGroup):
    """The root group: its commands loaded on first use (:data:`COMMANDS`), and ``jurist --help`` (the list
    of commands) in click's plain layout. Typer's rich panels import rich, its markdown parser and typer's
    rich_utils, about half of that command's time (``bench/bench_help.py``); each command's own help
    (``jurist run --help``), where the options are, keeps them."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        super(typer.core.TyperGroup, self).format_help(ctx, formatter)

    def get_help_option(self, ctx: Any) -> Any:
        option: Any = super().get_help_option(ctx)
        if getattr(option, "_runtime_param", False) is None:
            option._runtime_param = _AS_GIVEN  # typer would build a pydantic adapter to hand back None
        return option

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self._load(COMMANDS[cmd_name][0])
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in COMMANDS:  # a typo: every command loaded, for typer's suggestion
            self.load_all()
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The list from :data:`COMMANDS`, laid out as click does, without importing any command."""
        from typer._click.utils import make_default_short_help

        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, make_default_short_help(text, limit)) for name, (_, text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def load_all(self) -> None:
        for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
            self._load(module)

    def _load(self, module: str) -> None:
        import importlib

        import typer.main

        holder = typer.Typer()
        importlib.import_module(f"jurist.commands.{module}").register(holder)
        for name, command in typer.main.get_group(holder).commands.items():
            self.add_command(command, name)


app = typer.Typer(
    cls=_CommandList,
    add_completion=False,
    no_args_is_help=False,
    help="jurist: LLM-as-a-judge evaluation: generate answers, judge them pairwise, score, rank.",
)


def _error_line(text: str, *, exit_code: int) -> NoReturn:
    """``error: text`` on stderr, red, the text never read as markup (it may hold ``[extras]``); rich is
    imported here, on the way out, so that ``jurist --help`` never loads it."""
    from rich.console import Console
    from rich.text import Text

    Console(stderr=True).print(Text("error: ", style="red") + Text(text), highlight=False, soft_wrap=True)
    sys.exit(exit_code)


_INTERRUPTED = "interrupted: everything finished so far is saved; run again to resume"


def _interrupted_line() -> None:
    from rich.console import Console

    Console(stderr=True).print(f"[yellow]{_INTERRUPTED}[/yellow]")


def _signals_settled() -> None:
    """Once the command's ending is known, a signal no longer changes it: Ctrl-C or SIGTERM while the
    last line is being said (rich is imported on the way out) would otherwise end in a second traceback.
    They stay ignored for :func:`entry`'s exit; :func:`main` puts its caller's handlers back."""
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def _print_version(value: bool) -> None:
    if value:
        from jurist import __version__

        print(f"jurist {__version__}")
        raise typer.Exit(0)


_RESUMES_COLLECTION = frozenset({"run"})
"""Commands that turn garbage collection back on themselves, once their start is over (a run at its
launch: :mod:`jurist.run.collection`); every other command has it back from its first step."""


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="print jurist's version"),
    ] = False,
) -> None:
    """jurist: LLM-as-a-judge evaluation harness."""
    if ctx.invoked_subcommand not in _RESUMES_COLLECTION:
        from jurist.run import resume_collection

        resume_collection()


def main() -> None:
    """The command line, for a caller in its own process: it ends in ``SystemExit``, and the caller's
    SIGINT and SIGTERM handlers are put back (the command settles them while it says its last line)."""
    import signal

    found = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        _main()
    finally:
        for signum, handler in found.items():
            if handler is not None:  # None: set outside Python, nothing to put back
                signal.signal(signum, handler)


def _main() -> None:
    """The command, then ``sys.exit`` with its code; the signals stay settled (:func:`entry`: the process
    is on its way out, its exit handlers still to run)."""
    from jurist.run import interrupt_on_signals

    interrupt_on_signals()  # first: importing the commands takes a moment
    try:
        code = _command_code()
    except KeyboardInterrupt:  # a signal in the instant before an ending settled the signals: said plainly
        _signals_settled()
        sys.stderr.write(f"{_INTERRUPTED}\n")
        sys.exit(130)
    sys.exit(code)


def _command_code() -> int:
    """The command's exit code; its errors said in one line (:func:`_error_line` exits itself)."""
    logging.basicConfig(level=logging.WARNING, format="jurist: %(message)s")
    try:
        code = app(standalone_mode=False)  # click hands back typer.Exit codes instead of raising them
    except JuristError as exc:
        _signals_settled()
        _error_line(mask(str(exc)), exit_code=2)  # model names, install hints with [extras]: no markup
    except StorageError as exc:
        _signals_settled()
        _error_line(mask(str(exc)), exit_code=1)
    except typer.Exit as exc:
        _signals_settled()
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):  # the command line parser turns Ctrl-C into Abort
        _signals_settled()
        _interrupted_line()
        return 130
    except typer.TyperException as exc:  # usage errors: unknown option, bad value, missing argument
        _signals_settled()
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _error_line(str(exc), exit_code=2)
        return 2
    _signals_settled()
    if code == 130:  # typer turns Ctrl-C (and our SIGTERM handler) into exit code 130
        _interrupted_line()
    return code if isinstance(code, int) else 0


def entry() -> None:
    """The ``jurist`` command (and ``python -m jurist``): :func:`main`, then out at once. Once a command
    has finished, the exit handlers run (the request cache's last writes, logging's flush) and the
    streams are flushed; what the interpreter would do after that is free every object one by one,
    0.4-0.6 s at the end of a run (the o200k tables alone take 0.17 s to free) for memory the system
    takes back anyway, so the process ends there instead. Where a thread that is not a daemon is still
    running, the interpreter's own exit waits for it as usual. :func:`main` itself returns normally, for
    callers in the same process, and only this entry holds garbage collection through the start
    (:mod:`jurist.run.collection`)."""
    from jurist.run import hold_collection

    hold_collection()
    try:
        _main()
        code: str | int | None = 0
    except SystemExit as exc:
        code = exc.code
    _exit_now(code)


def _exit_now(code: str | int | None) -> NoReturn:
    import atexit
    import os
    import threading

    running = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if running or run_exit_handlers is None:
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): said on stderr, status 1, as the interpreter does
        sys.stderr.write(f"{code}\n")
        status = 1
    run_exit_handlers()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that left (jurist show | head), or a closed stream
        status = status or 120  # what the interpreter's exit says when stdout cannot be flushed
    os._exit(status)


if __name__ == "__main__":
    entry()
