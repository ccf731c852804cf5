"""The ``jurist`` command line: thin parsing that builds a RunConfig and hands it to the pipeline."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path
from types import FrameType
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


@app.callback()
def _root() -> None:
    """jurist: LLM-as-a-judge evaluation harness."""


def _split(values: list[str] | None) -> list[str]:
    """``--judge a --judge b`` and ``--judge a,b`` both give ``[a, b]``."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _bench_options(values: list[str] | None) -> dict[str, str]:
    """``-B split=claude -B n=100`` -> {"split": "claude", "n": "100"}."""
    options: dict[str, str] = {}
    for value in values or []:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise JuristError(f"-B {value!r}: expected KEY=VALUE (for example -B split=claude)")
        options[key.strip()] = text.strip()
    return options


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # Turn SIGTERM into the same clean shutdown as Ctrl-C: servers stopped, files closed.
    raise KeyboardInterrupt


@app.command()
def run(
    bench: Annotated[
        str,
        typer.Option(
            help="a benchmark name (starter, judgebench, ifeval, ifbench, healthbench, writingbench) "
            "or an Arena-Hard question.jsonl"
        ),
    ] = "starter",
    tasks: Annotated[
        str | None,
        typer.Option(
            help="several benchmarks, comma-separated, for the same models in one process: each into "
            "OUT/<task>, one combined table (-B TASK:KEY=VALUE for a task's options)"
        ),
    ] = None,
    bench_option: Annotated[
        list[str] | None,
        typer.Option("-B", "--bench-option", help="benchmark option KEY=VALUE, e.g. -B split=claude"),
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
    sample: Annotated[
        str, typer.Option(help="which questions --limit keeps: first | stratified (by category, seeded)")
    ] = "first",
    sample_seed: Annotated[int, typer.Option(help="seed of --sample stratified")] = 0,
    samples: Annotated[
        int | None, typer.Option(min=1, help="answers per prompt (default: the benchmark's)")
    ] = None,
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
        typer.Option(
            help="arena-hard | arena-hard-creative (upstream's exact prompts) | jurist-pairwise | "
            "jurist-creative | structured | simple | logprob"
        ),
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
    method: Annotated[str, typer.Option(help="scoring: winrate | bt (Bradley-Terry, Elo scale)")] = "winrate",
    style_control: Annotated[
        str | None, typer.Option(help="control scores for style: length, markdown or length,markdown")
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option("--category", help="score this category alone, against its own baseline (repeatable)"),
    ] = None,
    length_controlled: Annotated[
        bool, typer.Option("--length-controlled", help="score with AlpacaEval's length-controlled win rate")
    ] = False,
    ensemble: Annotated[bool, typer.Option("--ensemble", help="pool the judges into one score")] = False,
    bootstrap: Annotated[int, typer.Option(min=0, help="bootstrap rounds")] = 100,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    ci: Annotated[float, typer.Option(min=0.5, max=0.999, help="CI level")] = 0.90,
    max_attempts: Annotated[
        int, typer.Option(min=1, help="attempts per request before it counts as failed")
    ] = 6,
    retry_base_delay: Annotated[float, typer.Option(min=0.0, help="first backoff delay, seconds")] = 1.0,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bars")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="neither read nor write the machine-wide request cache")
    ] = False,
    cache_dir: Annotated[
        Path | None, typer.Option(help="request cache folder [$JURIST_CACHE_DIR or ~/.cache/jurist]")
    ] = None,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="skip probing the models-file endpoints before the run")
    ] = False,
    prices: Annotated[
        Path | None,
        typer.Option(
            help="YAML/JSON: alias or served model name -> {input, output, cached_input} USD per 1M"
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(min=0.0, help="budget in USD for the run directory: stops before it could be exceeded"),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=0, help="budget in tokens (prompt + completion, all models) for the run directory"),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the requests and estimated tokens and cost; send nothing")
    ] = False,
    answers: Annotated[
        Path | None,
        typer.Option(help="JSONL of {key|prompt, response}: score these answers for --model, generate none"),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="folder with local copies of benchmark data [$JURIST_DATA_DIR]; no download"),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="final scores as table | json | csv | markdown")
    ] = "table",
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="run served models in-process (llama.cpp Llama on CPU, vLLM on GPU) instead of "
            "starting servers",
        ),
    ] = False,
    # -- the judge card (docs/judge-card.md) --
    judge_card: Annotated[
        int | None,
        typer.Option(
            min=10, help="items per judge-card probe [50]; all probes stay within 10% of the judge requests"
        ),
    ] = None,
    no_judge_card: Annotated[
        bool, typer.Option("--no-judge-card", help="skip the judge card's probes")
    ] = False,
    judge_gate: Annotated[
        bool,
        typer.Option("--judge-gate", help="exit 4 when a judge-card probe is flagged (after saving all)"),
    ] = False,
) -> None:
    """Answer a benchmark, then judge each model against the baseline (two games, swapped) or check its
    answers by rule (ifeval, ifbench), and print scores and what it cost.

    Exit codes: 0 done, 1 requests failed, 2 usage error, 3 stopped by --max-cost/--max-tokens (a
    larger budget resumes), 4 a judge-card probe flagged under --judge-gate, 130 interrupted."""
    from jurist.engine.retry import RetryPolicy
    from jurist.run.config import RunConfig
    from jurist.run.pipeline import run_pipeline

    if inference_only and judge_only:
        raise JuristError("--inference-only and --judge-only exclude each other")
    if fmt not in ("table", "json", "csv", "markdown"):
        raise JuristError(f"--format: {fmt!r} is not table, json, csv or markdown")
    if answers is not None and not answers.is_file():
        raise JuristError(f"--answers: {answers} is not a file")
    if data_dir is not None:
        if not data_dir.is_dir():
            raise JuristError(f"--data-dir: {data_dir} is not a folder")
        os.environ["JURIST_DATA_DIR"] = str(data_dir.resolve())  # read by benchmarks and NLTK lookups
    if sample not in ("first", "stratified"):
        raise JuristError(f"--sample: {sample!r} is not first or stratified")
    if method not in ("winrate", "bt"):
        raise JuristError(f"--method: {method!r} is not winrate or bt")
    if no_judge_card and (judge_card is not None or judge_gate):
        raise JuristError(
            f"--no-judge-card excludes {'--judge-card' if judge_card is not None else '--judge-gate'}"
        )
    features = tuple(_split([style_control])) if style_control else ()
    unknown = [f for f in features if f not in ("length", "markdown")]
    if unknown:
        raise JuristError(f"--style-control: unknown feature {unknown[0]!r}; choose length, markdown")
    config = RunConfig(
        bench=bench,
        bench_options=_bench_options(bench_option),
        models_file=models_file,
        models=_split(model),
        baseline=baseline,
        judges=_split(judge),
        out=out,
        limit=limit,
        limit_sample=sample,  # type: ignore[arg-type]  # checked above
        limit_seed=sample_seed,
        samples=samples,
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
        method=method,
        style_control=features,
        categories=tuple(_split(category)),
        length_controlled=length_controlled,
        ensemble=ensemble,
        cache=not no_cache,
        cache_path=cache_dir,
        check=not no_check,
        answers_file=answers,
        output_format=fmt,
        prices_file=prices,
        max_cost=max_cost,
        max_tokens=max_tokens,
        local=local,
        judge_card=0 if no_judge_card else judge_card,
        judge_gate=judge_gate,
    )
    if dry_run:
        if tasks is not None:
            raise JuristError(
                "--dry-run plans one benchmark: run it per task, with --bench and --out OUT/TASK"
            )
        from jurist.run.dry import dry_run as estimate

        raise typer.Exit(estimate(config))
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if tasks is not None:
            from jurist.run.tasks import parse_tasks, run_tasks

            result = run_tasks(config, parse_tasks(tasks))
        else:
            result = run_pipeline(config)
    finally:
        signal.signal(signal.SIGTERM, previous)
    raise typer.Exit(result.exit_code)


# Further subcommands live in their own modules; each exposes ``register(app)``.
_COMMAND_MODULES: tuple[str, ...] = (
    "judgebench", "check", "judges", "show", "transfer", "view", "plot", "sweep",
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


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="jurist: %(message)s")
    _register_commands()
    _quiet_flags()
    try:
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
