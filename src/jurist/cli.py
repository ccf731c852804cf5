"""The ``jurist`` command line: thin parsing that builds a RunConfig and hands it to the pipeline."""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated

import click
import typer
from rich.console import Console

from jurist.errors import JuristError
from jurist.redact import mask

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    help="jurist: LLM-as-a-judge evaluation: generate answers, judge them pairwise, score, rank.",
)
err_console = Console(stderr=True)


@app.callback()
def _root() -> None:
    """jurist: LLM-as-a-judge evaluation harness."""


def _split(values: list[str] | None) -> list[str]:
    """``--judge a --judge b`` and ``--judge a,b`` both give ``[a, b]``."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # Turn SIGTERM into the same clean shutdown as Ctrl-C: servers stopped, files closed.
    raise KeyboardInterrupt


@app.command()
def run(
    bench: Annotated[
        str, typer.Option(help="'starter', 'judgebench' or a path to an Arena-Hard question.jsonl")
    ] = "starter",
    split: Annotated[
        str | None, typer.Option(help="JudgeBench pairs: gpt (default), claude or a pairs .jsonl")
    ] = None,
    models_file: Annotated[
        Path | None, typer.Option("--models-file", help="api_config.yaml-style file")
    ] = None,
    model: Annotated[list[str] | None, typer.Option("--model", help="candidate alias (repeatable)")] = None,
    baseline: Annotated[
        str | None, typer.Option(help="baseline alias (default: the benchmark's own)")
    ] = None,
    judge: Annotated[
        list[str] | None, typer.Option("--judge", help="judge alias (repeatable, or a,b)")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="run directory (default runs/<bench>)")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="use only the first N questions")] = None,
    max_concurrency: Annotated[int, typer.Option(min=1, help="requests in flight, all models together")] = 64,
    inference_only: Annotated[
        bool, typer.Option("--inference-only", help="stop after generating answers")
    ] = False,
    judge_only: Annotated[
        bool, typer.Option("--judge-only", help="judge and score existing answers")
    ] = False,
    rejudge_invalid: Annotated[
        bool, typer.Option("--rejudge-invalid", help="judge invalid verdicts again")
    ] = False,
    judge_protocol: Annotated[
        str | None,
        typer.Option(help="arena-hard | arena-hard-creative | structured | simple | logprob"),
    ] = None,
    judge_prompt: Annotated[
        Path | None,
        typer.Option(
            help="file with the judge's system prompt and user template ({question} {answer_a} {answer_b})"
        ),
    ] = None,
    min_interval: Annotated[
        float, typer.Option(min=0.0, help="seconds between request starts, across all jurist processes")
    ] = 0.0,
    throttle_file: Annotated[
        Path | None,
        typer.Option(help="state file shared by throttled processes [~/.cache/jurist/throttle.lock]"),
    ] = None,
    bootstrap: Annotated[int, typer.Option(min=0, help="bootstrap rounds")] = 100,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    ci: Annotated[float, typer.Option(min=0.5, max=0.999, help="CI level")] = 0.90,
    max_attempts: Annotated[
        int, typer.Option(min=1, help="attempts per request before it counts as failed")
    ] = 6,
    retry_base_delay: Annotated[float, typer.Option(min=0.0, help="first backoff delay, seconds")] = 1.0,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bars")] = False,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="skip probing the models-file endpoints before the run")
    ] = False,
) -> None:
    """Answer a benchmark, judge each model against the baseline (two games, swapped), print scores."""
    from jurist.engine.retry import RetryPolicy
    from jurist.pipeline import RunConfig, run_pipeline

    if inference_only and judge_only:
        raise JuristError("--inference-only and --judge-only exclude each other")
    if split is not None and bench != "judgebench":
        raise JuristError("--split applies only to --bench judgebench")
    config = RunConfig(
        bench=bench,
        models_file=models_file,
        models=_split(model),
        baseline=baseline,
        judges=_split(judge),
        out=out,
        limit=limit,
        max_concurrency=max_concurrency,
        mode="inference-only" if inference_only else "judge-only" if judge_only else "all",
        rejudge_invalid=rejudge_invalid,
        judge_protocol=judge_protocol,
        judge_prompt=judge_prompt,
        min_interval=min_interval,
        throttle_file=throttle_file,
        n_bootstrap=bootstrap,
        seed=seed,
        ci_level=ci,
        retry=RetryPolicy(max_attempts=max_attempts, base_delay=retry_base_delay),
        progress=not no_progress,
        split=split,
        check=not no_check,
    )
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        result = run_pipeline(config)
    finally:
        signal.signal(signal.SIGTERM, previous)
    raise typer.Exit(result.exit_code)


# Further subcommands live in their own modules; each exposes ``register(app)``.
_COMMAND_MODULES: tuple[str, ...] = ("judgebench", "check", "judges", "show", "transfer")


def _register_commands() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        importlib.import_module(f"jurist.commands.{name}").register(app)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="jurist: %(message)s")
    _register_commands()
    try:
        code = app(standalone_mode=False)  # click hands back typer.Exit codes instead of raising them
    except JuristError as exc:
        err_console.print(f"[red]error:[/red] {mask(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):  # click turns Ctrl-C into Abort
        err_console.print(
            "[yellow]interrupted: everything finished so far is saved; run again to resume[/yellow]"
        )
        sys.exit(130)
    except click.ClickException as exc:  # usage errors
        exc.show()
        sys.exit(2)
    if code == 130:  # typer turns Ctrl-C (and our SIGTERM handler) into exit code 130
        err_console.print(
            "[yellow]interrupted: everything finished so far is saved; run again to resume[/yellow]"
        )
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
