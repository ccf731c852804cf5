"""``jurist sweep``: evaluate many checkpoints of a training run in one command (see jurist.sweep)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core

from jurist.errors import JuristError

SERVE_KINDS = ("llama.cpp", "vllm")
ERROR_BARS = ("ci95", "sem", "std", "none")


class SweepCommand(typer.core.TyperCommand):
    """``--ray`` takes an optional address: a bare ``--ray`` (followed by nothing or by another option)
    means a local Ray instance, as if ``--ray ""`` had been given (typer has no optional values)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer's own click Context
        fixed: list[str] = []
        for i, arg in enumerate(args):
            fixed.append(arg)
            if arg == "--ray" and (i + 1 == len(args) or args[i + 1].startswith("-")):
                fixed.append("")
        return super().parse_args(ctx, fixed)


def sweep(
    checkpoints: Annotated[
        str,
        typer.Option(
            help="a directory (its step_* / checkpoint-* children), a glob, or a comma-separated list"
        ),
    ],
    tasks: Annotated[
        str | None, typer.Option(help="benchmarks, comma-separated (e.g. ifeval,starter)")
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(help="a suite file: tasks with their judges, baselines, samples, limits, options"),
    ] = None,
    bench_option: Annotated[
        list[str] | None, typer.Option("-B", "--bench-option", help="TASK:KEY=VALUE for one task")
    ] = None,
    samples: Annotated[
        list[str] | None, typer.Option(help="answers per prompt (mean@N): N, or TASK=N for one task")
    ] = None,
    limit: Annotated[
        list[str] | None,
        typer.Option(help="questions per task: N for every task, or TASK=N[,TASK=N] (default: all)"),
    ] = None,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            help="baseline of the pairwise tasks (default: the benchmark's): an alias, whose answers are "
            "made once, or a .jsonl of answers; TASK=B for one task"
        ),
    ] = None,
    gpus: Annotated[
        str | None, typer.Option(help="GPU ids (0,1,2,3) or a count (4); default: CPU servers")
    ] = None,
    tensor_parallel: Annotated[
        int | None, typer.Option(min=1, help="GPUs per checkpoint server (vLLM tensor parallel)")
    ] = None,
    servers: Annotated[
        int | None, typer.Option(min=1, help="CPU servers at once, without --gpus (default 1)")
    ] = None,
    serve_kind: Annotated[
        str | None, typer.Option(help="llama.cpp | vllm (default: llama.cpp for .gguf files, else vllm)")
    ] = None,
    checkpoint_settings: Annotated[
        str | None,
        typer.Option(
            help="a --models-file alias whose sampling and serve settings every checkpoint takes "
            "(default: max_tokens 1024 on vLLM, 256 on llama.cpp; temperature 0, or 0.7 with a seed "
            "for several samples)"
        ),
    ] = None,
    models_file: Annotated[Path | None, typer.Option(help="the judges' models file")] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="judge alias or model string (repeatable, a,b; TASK=J for one task; default: embedded)",
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="URL of the judges' model strings")] = None,
    api_key: Annotated[
        str | None, typer.Option(help="key of the judges' model strings", show_default=False)
    ] = None,
    model_setting: Annotated[
        list[str] | None, typer.Option("-M", "--model-setting", help="judges' model-string setting KEY=VALUE")
    ] = None,
    judge_concurrency: Annotated[
        int, typer.Option(min=1, help="judge requests in flight, all checkpoints together")
    ] = 8,
    max_concurrency: Annotated[
        int, typer.Option(min=1, help="requests in flight per checkpoint server (its slots cap it too)")
    ] = 64,
    out: Annotated[Path, typer.Option(help="the sweep directory")] = Path("runs/sweep"),
    name: Annotated[
        str | None, typer.Option(help="the sweep's name in plots (default: the --out folder's)")
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="run each checkpoint in-process instead of on a server")
    ] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="place each checkpoint's generation on a Ray cluster: its ADDRESS (auto: the one on this "
            "machine), or nothing for a new local instance (needs the ray extra of jurist)",
        ),
    ] = None,
    error_bars: Annotated[str, typer.Option(help="plots: ci95 | sem | std | none")] = "ci95",
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="draw the training curves")] = True,
    bootstrap: Annotated[int, typer.Option(min=0, help="bootstrap rounds of each 95% CI")] = 100,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    max_attempts: Annotated[int, typer.Option(min=1, help="attempts per request")] = 6,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="no machine-wide request cache")] = False,
    cache_dir: Annotated[Path | None, typer.Option(help="request cache folder")] = None,
    no_check: Annotated[bool, typer.Option("--no-check", help="do not probe the judges first")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bars")] = False,
    data_dir: Annotated[Path | None, typer.Option(help="local copies of benchmark data")] = None,
    shard: Annotated[
        str | None, typer.Option(help="run checkpoints part I of N (0/4 … 3/4); jurist merge joins the parts")
    ] = None,
    shards: Annotated[
        int | None,
        typer.Option(help="one of N parts, the index from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX"),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", help="keep watching --checkpoints (a folder): evaluate each new checkpoint"),
    ] = False,
    settle: Annotated[
        float, typer.Option(min=0.0, help="--watch: a checkpoint is complete once unchanged this long (s)")
    ] = 120.0,
    ready_file: Annotated[
        str | None, typer.Option(help="--watch: a checkpoint is complete once this file exists inside it")
    ] = None,
    until_step: Annotated[
        int | None, typer.Option(min=0, help="--watch: stop after the checkpoint at this step")
    ] = None,
    stop_file: Annotated[Path | None, typer.Option(help="--watch: stop once this file exists")] = None,
    track: Annotated[
        list[str] | None,
        typer.Option(
            "--track",
            help="log each checkpoint's metrics at its step: tensorboard:DIR, mlflow:URI, "
            "wandb:ENTITY/PROJECT, wandb:ENTITY/PROJECT/RUN_ID (repeatable)",
        ),
    ] = None,
    warm_swap: Annotated[
        bool,
        typer.Option(
            "--warm-swap",
            help="each GPU slot keeps its vLLM server and loads the next checkpoint into it (sleep mode) "
            "instead of restarting it; a cold start where it cannot (untested on a real GPU: see docs)",
        ),
    ] = False,
    adaptive: Annotated[
        bool, typer.Option("--adaptive", help="judge every task in seeded random rounds until answered")
    ] = False,
    target_ci: Annotated[
        float | None, typer.Option(help="--adaptive: stop when every interval is narrower than W")
    ] = None,
    decide_vs: Annotated[
        str | None,
        typer.Option(
            help="--adaptive: stop each checkpoint once decided against this run (a folder of task runs), "
            "or 'best': against the best checkpoint so far (the default without --target-ci)"
        ),
    ] = None,
    delta: Annotated[float, typer.Option(min=0.0, help="--decide-vs: the difference that counts")] = 0.0,
    adaptive_round: Annotated[int, typer.Option("--round", min=1, help="--adaptive: questions a round")] = 20,
    adaptive_seed: Annotated[int, typer.Option("--adaptive-seed", help="--adaptive: the order's seed")] = 0,
    gate: Annotated[
        Path | None,
        typer.Option("--gate", help="a gate policy (YAML) checked on each checkpoint; exit 4 on a fail"),
    ] = None,
) -> None:
    """Evaluate every checkpoint of a training run on every task: one run directory per checkpoint and
    task (SWEEP_DIR/<checkpoint>/<task>), sweep.json and sweep.csv (checkpoint x task x metric with 95% CIs
    and the spread over samples), training-curve plots in SWEEP_DIR/plots. Re-running resumes.

    Exit codes: 0 every checkpoint complete, 1 some failed or are incomplete, 2 usage error, 4 a --gate
    rule failed or --watch skipped a checkpoint not complete at the stop file, 130 stopped."""
    from jurist.config import ModelStringOptions, parse_settings
    from jurist.sweep.build import build_plan

    if data_dir is not None:
        if not data_dir.is_dir():
            raise JuristError(f"--data-dir: {data_dir} is not a folder")
        os.environ["JURIST_DATA_DIR"] = str(data_dir.resolve())
    if serve_kind is not None and serve_kind not in SERVE_KINDS:
        raise JuristError(f"--serve-kind: {serve_kind!r} is not llama.cpp or vllm")
    if error_bars not in ERROR_BARS:
        raise JuristError(f"--error-bars: {error_bars!r} is not one of {', '.join(ERROR_BARS)}")
    watching = {"--settle": settle != 120.0, "--ready-file": ready_file, "--until-step": until_step,
                "--stop-file": stop_file}  # fmt: skip
    stray = [flag for flag, given in watching.items() if given is not None and given is not False]
    if stray and not watch:
        raise JuristError(f"{stray[0]} applies to --watch only")
    if warm_swap and (local or ray is not None or serve_kind == "llama.cpp"):
        why = "not with --local" if local else "not with --ray" if ray is not None else "llama.cpp restarts"
        raise JuristError(f"--warm-swap moves a vLLM server on local slots to the next checkpoint ({why})")
    if (target_ci is not None or decide_vs is not None) and not adaptive:
        raise JuristError("--target-ci and --decide-vs apply to --adaptive only")
    if adaptive and (watch or track):
        raise JuristError(
            f"--adaptive runs the sweep in rounds: not with {'--watch' if watch else '--track'}"
        )
    from jurist.sweep.watch import CheckpointWatcher, WatchRules
    from jurist.track import Trackers, check_target

    for target in track or []:
        check_target(target)
    rules = (
        WatchRules(Path(checkpoints).expanduser(), settle, ready_file, until_step, stop_file)
        if watch
        else None
    )
    plan = build_plan(
        checkpoints=checkpoints,
        tasks=tasks,
        bench_options=bench_option or [],
        samples=samples or [],
        limit=limit or [],
        baselines=baseline or [],
        suite=suite,
        gpus=gpus,
        tensor_parallel=tensor_parallel,
        servers=servers,
        serve_kind=serve_kind,
        checkpoint_settings=checkpoint_settings,
        models_file=models_file,
        judges=judge or [],
        model_strings=ModelStringOptions(base_url, api_key, parse_settings(model_setting or [])),
        judge_concurrency=judge_concurrency,
        max_concurrency=max_concurrency,
        out=out,
        name=name,
        local=local,
        ray=ray,
        error_bars=error_bars,
        bootstrap=bootstrap,
        seed=seed,
        max_attempts=max_attempts,
        cache=not no_cache,
        cache_dir=cache_dir,
        check=not no_check,
        progress=not no_progress,
        watch=watch,
    )
    from jurist.run import shard_choice
    from jurist.sweep.schedule import run_sweep

    part = shard_choice(shard, shards)
    if part is not None:
        if watch:
            raise JuristError(
                "--shard deals found checkpoints over processes: a --watch sweep is one process"
            )
        from rich.console import Console

        from jurist.sweep.shards import shard_sweep, write_sweep_shard

        plan = shard_sweep(plan, part)
        Console(stderr=True).print(write_sweep_shard(plan), markup=False, highlight=False, soft_wrap=True)

    watcher = CheckpointWatcher(rules) if rules is not None else None
    trackers = Trackers(track, plan.out, plan.name) if track else None
    from jurist.commands.run_launch import on_sigterm

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        if adaptive:
            from jurist.decide import run_adaptive_sweep, sweep_settings

            rule = sweep_settings(target_ci, decide_vs, delta, adaptive_round, adaptive_seed)
            result = run_adaptive_sweep(
                plan, rule, lambda p: run_sweep(p, ray_address=ray, plots=plots, warm_swap=warm_swap)
            )
        else:
            result = run_sweep(
                plan, ray_address=ray, plots=plots, watcher=watcher, trackers=trackers, warm_swap=warm_swap
            )
    finally:
        signal.signal(signal.SIGTERM, previous)
    if gate is not None:
        from jurist.decide import gate_directories

        raise typer.Exit(gate_directories(gate, [plan.out], result.exit_code))
    raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    app.command("sweep", cls=SweepCommand)(sweep)
