"""From ``jurist sweep``'s options to a checked :class:`~jurist.sweep.plan.SweepPlan`.

Everything that can be wrong with the command is found here, before a server starts or a file is written
(exit 2, one line): no checkpoints, an unknown task or ``-B`` option, a judge missing from the models
file, GPUs that do not divide into slots, options that exclude each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

from jurist.config import (
    ModelSpec,
    ModelStringOptions,
    ServeKind,
    load_models_file,
    models_from_strings,
    undefined_model,
)
from jurist.engine.retry import RetryPolicy
from jurist.errors import JuristError
from jurist.sweep.checkpoints import find_checkpoints
from jurist.sweep.plan import SweepPlan, gpu_slots, judged_tasks


def parse_bench_options(values: Sequence[str], tasks: Sequence[str]) -> dict[str, dict[str, str]]:
    """``-B TASK:KEY=VALUE`` per task (a bare ``KEY=VALUE`` is allowed when there is one task)."""
    from jurist.run.tasks import task_options

    options: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise JuristError(
                f"-B {value!r}: expected TASK:KEY=VALUE (for example -B ifeval:version=current)"
            )
        key = key.strip()
        if ":" not in key and len(tasks) == 1:
            key = f"{tasks[0]}:{key}"
        options[key] = text.strip()
    return task_options(options, tasks)


def parse_limits(text: str | int | None, tasks: Sequence[str]) -> dict[str, int]:
    """``--limit 20`` (every task) or ``--limit ifeval=20,healthbench=50`` (the tasks named)."""
    if text is None:
        return {}
    parts = [part.strip() for part in str(text).split(",") if part.strip()]
    limits: dict[str, int] = {}
    for part in parts:
        task, sep, number = part.rpartition("=")
        if sep and task not in tasks:
            raise JuristError(f"--limit {text}: {task!r} is not one of --tasks ({', '.join(tasks)})")
        try:
            value = int(number)
        except ValueError:
            value = 0
        if value < 1:
            raise JuristError(f"--limit {text}: give a number of questions (20) or TASK=N pairs")
        limits.update({task: value} if sep else dict.fromkeys(tasks, value))
    return limits


def _settings(models_file: Path | None, alias: str | None) -> ModelSpec | None:
    if alias is None:
        return None
    if models_file is None:
        raise JuristError("--checkpoint-settings names a models-file entry: give --models-file too")
    specs = load_models_file(models_file, aliases=[])
    if alias not in specs:
        raise JuristError(
            f"--checkpoint-settings: model {alias!r} is not defined (models file {models_file})"
        )
    return specs[alias]


def _check_judges(
    models_file: Path | None, judges: Sequence[str], probe: bool, strings: ModelStringOptions
) -> None:
    """Each judge is defined (a models-file alias or a model string), and (unless --no-check) answers,
    before any checkpoint starts."""
    specs = load_models_file(models_file, aliases=judges) if models_file is not None else {}
    specs.update(models_from_strings(judges, strings, defined=specs))
    source = f"models file {models_file}" if models_file is not None else "no --models-file"
    for alias in judges:
        if alias not in specs:
            raise undefined_model(alias, source)
    if probe:
        from jurist.engine.check import require_ready

        require_ready(specs, [alias for alias in judges if specs[alias].serve is None])


def build_plan(
    *,
    checkpoints: str,
    tasks: str,
    bench_options: Sequence[str] = (),
    samples: int | None = None,
    limit: str | int | None = None,
    gpus: str | None = None,
    tensor_parallel: int | None = None,
    servers: int | None = None,
    serve_kind: str | None = None,
    checkpoint_settings: str | None = None,
    models_file: Path | None = None,
    judges: Sequence[str] = (),
    model_strings: ModelStringOptions | None = None,
    judge_concurrency: int = 8,
    max_concurrency: int = 64,
    out: Path = Path("runs/sweep"),
    name: str | None = None,
    local: bool = False,
    ray: str | None = None,
    error_bars: str = "ci95",
    bootstrap: int = 100,
    seed: int = 0,
    max_attempts: int = 6,
    retry_base_delay: float = 1.0,
    cache: bool = True,
    cache_dir: Path | None = None,
    check: bool = True,
    progress: bool = True,
    watch: bool = False,
) -> SweepPlan:
    """The plan of a sweep, every option checked; raises :class:`JuristError` (exit 2) on a bad one.
    ``watch``: no checkpoint yet (the watcher adds them as training completes them)."""
    from jurist.run.tasks import parse_tasks

    if out.exists() and not out.is_dir():
        raise JuristError(f"--out: {out} is a file, not a sweep directory")
    if models_file is not None and not models_file.is_file():
        raise JuristError(f"--models-file: {models_file} is not a file")
    if watch and ray is not None:
        raise JuristError("--watch feeds local slots as checkpoints appear: it does not take --ray yet")
    found = [] if watch else find_checkpoints(checkpoints)
    names = parse_tasks(tasks)
    options = parse_bench_options(bench_options, names)
    judged = judged_tasks(names, options, parse_limits(limit, names))
    if ray is not None and (gpus is not None or servers is not None):
        raise JuristError("--ray places each checkpoint where Ray has room: leave out --gpus and --servers")
    slots = gpu_slots(gpus, tensor_parallel, servers) if ray is None else (None,)
    if local and ray is None and sum(slot is not None for slot in slots) > 1:
        raise JuristError(
            "--local runs a checkpoint in this process, on one group of GPUs at a time: "
            "give --gpus one group (or add --ray, which runs each checkpoint in its own process)"
        )
    model_strings = model_strings or ModelStringOptions()
    _check_judges(models_file, list(judges), check and bool(judged), model_strings)
    return SweepPlan(
        out=out,
        name=name or out.absolute().name,
        checkpoints=tuple(found),
        tasks=tuple(names),
        task_options=options,
        slots=slots,
        samples=samples,
        limits=parse_limits(limit, names),
        judges=tuple(judges),
        judged_tasks=judged,
        models_file=models_file,
        model_strings=model_strings,
        settings=_settings(models_file, checkpoint_settings),
        serve_kind=cast("ServeKind | None", serve_kind),
        tensor_parallel=tensor_parallel,
        max_concurrency=max_concurrency,
        judge_concurrency=judge_concurrency,
        local=local,
        error_bars=error_bars,
        n_bootstrap=bootstrap,
        seed=seed,
        cache=cache,
        cache_path=cache_dir,
        retry=RetryPolicy(max_attempts=max_attempts, base_delay=retry_base_delay),
        progress=progress,
        check=check,
    )
