"""``jurist sweep``: evaluate many checkpoints of a training run in one command (see jurist.sweep)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.commands.options import (
    AdaptiveFlags,
    DataDir,
    Gate,
    ModelStringFlags,
    RequestFlags,
    ShardFlags,
    TaskOptionFlags,
    Track,
    check_tracking,
    grouped,
    use_data_dir,
)
from jurist.commands.parsing import JuristCommand
from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.sweep import SweepJudges, SweepPlacement, SweepTasks, WatchRules

SETTLE_S = 120.0


@dataclasses.dataclass(frozen=True)
class PlacementFlags:
    """Where each checkpoint is served, and with which settings."""

    gpus: Annotated[
        str | None, typer.Option(help="GPU ids (0,1,2,3) or a count (4); default: CPU servers")
    ] = None
    tensor_parallel: Annotated[
        int | None, typer.Option(min=1, help="GPUs per checkpoint server (vLLM tensor parallel)")
    ] = None
    servers: Annotated[
        int | None, typer.Option(min=1, help="CPU servers at once, without --gpus (default 1)")
    ] = None
    serve_kind: Annotated[
        str | None, typer.Option(help="llama.cpp | vllm (default: llama.cpp for .gguf files, else vllm)")
    ] = None
    checkpoint_settings: Annotated[
        str | None,
        typer.Option(
            help="a --models-file alias whose sampling and serve settings every checkpoint takes "
            "(default: max_tokens 1024 on vLLM, 256 on llama.cpp; temperature 0, or 0.7 with a seed "
            "for several samples)"
        ),
    ] = None
    local: Annotated[
        bool, typer.Option("--local", help="run each checkpoint in-process instead of on a server")
    ] = False
    warm_swap: Annotated[
        bool,
        typer.Option(
            "--warm-swap",
            help="each GPU slot keeps its vLLM server and loads the next checkpoint into it (sleep mode) "
            "instead of restarting it; a cold start where it cannot (untested on a real GPU: see docs)",
        ),
    ] = False

    def placement(self, ray: str | None) -> SweepPlacement:
        from jurist.sweep import SweepPlacement

        placed = SweepPlacement(
            self.gpus, self.tensor_parallel, self.servers, self.serve_kind, self.checkpoint_settings,
            self.local, ray,
        )  # fmt: skip
        if self.warm_swap and (self.local or ray is not None or self.serve_kind == "llama.cpp"):
            why = (
                "not with --local"
                if self.local
                else "not with --ray"
                if ray is not None
                else "llama.cpp restarts"
            )
            raise JuristError(
                f"--warm-swap moves a vLLM server on local slots to the next checkpoint ({why})"
            )
        return placed


@dataclasses.dataclass(frozen=True)
class WatchFlags:
    """``--watch``: evaluate each checkpoint as training completes it."""

    watch: Annotated[
        bool,
        typer.Option("--watch", help="keep watching --checkpoints (a folder): evaluate each new checkpoint"),
    ] = False
    settle: Annotated[
        float, typer.Option(min=0.0, help="--watch: a checkpoint is complete once unchanged this long (s)")
    ] = SETTLE_S
    ready_file: Annotated[
        str | None, typer.Option(help="--watch: a checkpoint is complete once this file exists inside it")
    ] = None
    until_step: Annotated[
        int | None, typer.Option(min=0, help="--watch: stop after the checkpoint at this step")
    ] = None
    stop_file: Annotated[Path | None, typer.Option(help="--watch: stop once this file exists")] = None

    def rules(self, checkpoints: str) -> WatchRules | None:
        """The watcher's rules (None without ``--watch``; a ``--watch`` option without it is an error)."""
        given = {"--settle": self.settle != SETTLE_S, "--ready-file": self.ready_file,
                 "--until-step": self.until_step, "--stop-file": self.stop_file}  # fmt: skip
        stray = [flag for flag, value in given.items() if value is not None and value is not False]
        if stray and not self.watch:
            raise JuristError(f"{stray[0]} applies to --watch only")
        if not self.watch:
            return None
        from jurist.sweep import WatchRules

        folder = Path(checkpoints).expanduser()
        return WatchRules(folder, self.settle, self.ready_file, self.until_step, self.stop_file)


def _sweep_tasks(per_task: TaskOptionFlags) -> SweepTasks:
    from jurist.sweep import SweepTasks

    return SweepTasks(
        per_task.tasks, per_task.suite, per_task.bench_option or [], per_task.samples or [],
        per_task.limit or [], per_task.baseline or [],
    )  # fmt: skip


def _sweep_judges(per_task: TaskOptionFlags, strings: ModelStringFlags, concurrency: int) -> SweepJudges:
    from jurist.sweep import SweepJudges

    return SweepJudges(per_task.judge or [], strings.models_file, strings.options(), concurrency)


@grouped
def sweep(
    *,
    checkpoints: Annotated[
        str,
        typer.Option(
            help="a directory (its step_* / checkpoint-* children), a glob, or a comma-separated list"
        ),
    ],
    per_task: TaskOptionFlags,
    placement: PlacementFlags,
    strings: ModelStringFlags,
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
    parts: ShardFlags,
    error_bars: Annotated[str, typer.Option(help="plots: ci95 | sem | std | none")] = "ci95",
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="draw the training curves")] = True,
    bootstrap: Annotated[int, typer.Option(min=0, help="bootstrap rounds of each 95% CI")] = 100,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    requests: RequestFlags,
    data_dir: DataDir = None,
    watching: WatchFlags,
    track: Track = None,
    adaptive: AdaptiveFlags,
    adaptive_seed: Annotated[int, typer.Option("--adaptive-seed", help="--adaptive: the order's seed")] = 0,
    gate: Gate = None,
) -> None:
    """Evaluate every checkpoint of a training run on every task: one run directory per checkpoint and
    task (SWEEP_DIR/<checkpoint>/<task>), sweep.json and sweep.csv (checkpoint x task x metric with 95% CIs
    and the spread over samples), training-curve plots in SWEEP_DIR/plots. Re-running resumes.

    Exit codes: 0 every checkpoint complete, 1 some failed or are incomplete, 2 usage error, 4 a --gate
    rule failed or --watch skipped a checkpoint not complete at the stop file, 130 stopped."""
    from jurist.run import EngineSettings, ScoringSettings, sigterm_as_interrupt
    from jurist.sweep import build_plan

    use_data_dir(data_dir)
    rules = watching.rules(checkpoints)
    placed = placement.placement(parts.ray)
    adaptive.check()
    if adaptive.adaptive and (watching.watch or track):
        raise JuristError(
            f"--adaptive runs the sweep in rounds: not with {'--watch' if watching.watch else '--track'}"
        )
    check_tracking(track)
    engine = EngineSettings(
        max_concurrency=max_concurrency, retry=requests.retry(), cache=not requests.no_cache,
        cache_path=requests.cache_dir, check=not requests.no_check, progress=not requests.no_progress,
    )  # fmt: skip
    plan = build_plan(
        checkpoints, _sweep_tasks(per_task), _sweep_judges(per_task, strings, judge_concurrency), placed,
        engine, ScoringSettings(n_bootstrap=bootstrap, seed=seed), out=out, name=name, error_bars=error_bars,
        watch=watching.watch,
    )  # fmt: skip
    part = parts.part()
    if part is not None:
        if watching.watch:
            raise JuristError(
                "--shard deals found checkpoints over processes: a --watch sweep is one process"
            )
        from rich.console import Console

        from jurist.sweep import shard_sweep, write_sweep_shard

        plan = shard_sweep(plan, part)
        Console(stderr=True).print(write_sweep_shard(plan), markup=False, highlight=False, soft_wrap=True)
    from jurist.sweep import CheckpointWatcher, run_sweep
    from jurist.track import Trackers

    watcher = CheckpointWatcher(rules) if rules is not None else None
    trackers = Trackers(track, plan.out, plan.name) if track else None
    warm = placement.warm_swap
    with sigterm_as_interrupt():
        if adaptive.adaptive:
            from jurist.decide import run_adaptive_sweep, sweep_settings

            rule = sweep_settings(
                adaptive.target_ci, adaptive.decide_vs, adaptive.delta, adaptive.adaptive_round, adaptive_seed
            )
            result = run_adaptive_sweep(
                plan, rule, lambda p: run_sweep(p, ray_address=parts.ray, plots=plots, warm_swap=warm)
            )
        else:
            result = run_sweep(
                plan, ray_address=parts.ray, plots=plots, watcher=watcher, trackers=trackers, warm_swap=warm
            )
    if gate is not None:
        from jurist.decide import gate_directories

        raise typer.Exit(gate_directories(gate, [plan.out], result.exit_code))
    raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    app.command("sweep", cls=JuristCommand)(sweep)
