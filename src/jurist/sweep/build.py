"""From ``jurist sweep``'s options to a checked :class:`~jurist.sweep.plan.SweepPlan`.

Everything that can be wrong with the command is found here, before a server starts or a file is written
(exit 2, one line): no checkpoints, an unknown task or ``-B`` option, a judge missing from the models
file, GPUs that do not divide into slots, options that exclude each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
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
from jurist.errors import JuristError
from jurist.run import EngineSettings, ScoringSettings
from jurist.sweep.checkpoints import find_checkpoints
from jurist.sweep.plan import GpuSlot, SweepPlan, gpu_slots, load_tasks


def bench_option_keys(values: Sequence[str], tasks: Sequence[str]) -> dict[str, str]:
    """``-B TASK:KEY=VALUE`` as ``TASK:KEY`` -> VALUE (a bare ``KEY=VALUE`` is the one task's)."""
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
    return options


def _texts(value: str | int | Sequence[str] | None) -> list[str]:
    """``--samples``/``--limit`` as the command line gives them: a number, ``TASK=N`` texts, or none."""
    if value is None:
        return []
    if isinstance(value, (str, int)):
        return [str(value)]
    return [str(v) for v in value]


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
    models_file: Path | None,
    judges: Sequence[str],
    probe: bool,
    strings: ModelStringOptions,
    baselines: Sequence[str] = (),
) -> None:
    """Each judge and ``--baseline`` model is defined (a models-file alias or a model string), and (unless
    --no-check) answers, before any checkpoint starts (the embedded model needs no entry)."""
    from jurist.engine import EMBEDDED_ALIAS

    named = [alias for alias in dict.fromkeys([*judges, *baselines]) if alias != EMBEDDED_ALIAS]
    if not named:
        return
    specs = load_models_file(models_file, aliases=named) if models_file is not None else {}
    specs.update(models_from_strings(named, strings, defined=specs))
    source = f"models file {models_file}" if models_file is not None else "no --models-file"
    for alias in named:
        if alias not in specs:
            raise undefined_model(alias, source, specs)
    if probe:
        from jurist.engine import require_ready

        require_ready(specs, [alias for alias in named if specs[alias].serve is None])


SERVE_KINDS = ("llama.cpp", "vllm")
ERROR_BARS = ("ci95", "sem", "std", "none")


@dataclass(frozen=True)
class SweepTasks:
    """What every checkpoint is evaluated on: the tasks (``--tasks``, ``--suite``) and, per task, its
    ``-B`` options, samples, limit and baseline, as the command line gives them (bare or ``TASK=VALUE``)."""

    tasks: str | None = None
    suite: Path | None = None
    bench_options: Sequence[str] = ()
    samples: str | int | Sequence[str] | None = None
    limit: str | int | Sequence[str] | None = None
    baselines: Sequence[str] = ()


@dataclass(frozen=True)
class SweepJudges:
    """Who judges (``--judge``, a models file or model strings) and how many judge requests at once."""

    judges: Sequence[str] = ()
    models_file: Path | None = None
    model_strings: ModelStringOptions = field(default_factory=ModelStringOptions)
    concurrency: int = 8


@dataclass(frozen=True)
class SweepPlacement:
    """Where and how each checkpoint is served: GPU slots or CPU servers, in-process, or on Ray."""

    gpus: str | None = None
    tensor_parallel: int | None = None
    servers: int | None = None
    serve_kind: str | None = None
    checkpoint_settings: str | None = None  # a models-file alias every checkpoint takes its settings from
    local: bool = False
    ray: str | None = None

    def __post_init__(self) -> None:
        if self.serve_kind is not None and self.serve_kind not in SERVE_KINDS:
            raise JuristError(f"--serve-kind: {self.serve_kind!r} is not llama.cpp or vllm")


def build_plan(
    checkpoints: str,
    tasks: SweepTasks,
    judges: SweepJudges = SweepJudges(),
    placement: SweepPlacement = SweepPlacement(),
    engine: EngineSettings | None = None,
    scoring: ScoringSettings | None = None,
    *,
    out: Path = Path("runs/sweep"),
    name: str | None = None,
    error_bars: str = "ci95",
    watch: bool = False,
) -> SweepPlan:
    """The plan of a sweep, every option checked; raises :class:`JuristError` (exit 2) on a bad one.
    ``engine``: each checkpoint server's requests (``max_concurrency``: in flight per server); ``scoring``:
    its bootstrap; ``watch``: no checkpoint yet (the watcher adds them as training completes them)."""
    from jurist.config import load_suite
    from jurist.run import TaskFlags, fit_to_benchmarks, parse_tasks, task_settings

    engine, scoring = engine or EngineSettings(), scoring or ScoringSettings()
    if error_bars not in ERROR_BARS:
        raise JuristError(f"--error-bars: {error_bars!r} is not one of {', '.join(ERROR_BARS)}")
    if out.exists() and not out.is_dir():
        raise JuristError(f"--out: {out} is a file, not a sweep directory")
    models_file = judges.models_file
    if models_file is not None and not models_file.is_file():
        raise JuristError(f"--models-file: {models_file} is not a file")
    found = [] if watch else find_checkpoints(checkpoints)
    suite_file = load_suite(tasks.suite) if tasks.suite is not None else None
    if tasks.tasks is None and suite_file is None:
        raise JuristError("name the tasks: --tasks a,b or --suite FILE")
    names = (
        parse_tasks(tasks.tasks) if tasks.tasks is not None else list(suite_file.tasks) if suite_file else []
    )
    flags = TaskFlags(
        judges.judges,
        tasks.baselines,
        _texts(tasks.samples),
        _texts(tasks.limit),
        bench_option_keys(tasks.bench_options, names),
    )
    chosen = task_settings(names, flags, suite_file)
    loaded = load_tasks(names, {}, chosen)
    fitted = fit_to_benchmarks(chosen, loaded)
    judged = tuple(task for task, bench in loaded.items() if bench.judge_kind is not None)
    every_judge = tuple(dict.fromkeys(j for task in judged for j in fitted[task].judges))
    baseline_of = {task: s.baseline for task, s in fitted.items() if s.baseline is not None}
    slots = _slots(placement)
    model_baselines = [b for b in baseline_of.values() if not (b.endswith(".jsonl") or Path(b).is_file())]
    for task, value in baseline_of.items():
        if value.endswith(".jsonl") and not Path(value).is_file():
            raise JuristError(f"{fitted[task].origins['baseline']}: no such answers file {value}")
    probe = engine.check and bool(judged)
    _check_judges(models_file, every_judge, probe, judges.model_strings, model_baselines)
    return SweepPlan(
        out=out,
        name=name or out.absolute().name,
        checkpoints=tuple(found),
        tasks=tuple(names),
        task_options={task: dict(chosen[task].options) for task in names},
        slots=slots,
        samples={task: s.samples for task, s in fitted.items() if s.samples is not None},
        limits={task: s.limit for task, s in fitted.items() if s.limit is not None},
        judges=every_judge,
        judged_tasks=judged,
        task_judges={task: fitted[task].judges for task in judged if fitted[task].judges},
        baselines=baseline_of,
        models_file=models_file,
        model_strings=judges.model_strings,
        settings=_settings(models_file, placement.checkpoint_settings),
        serve_kind=cast("ServeKind | None", placement.serve_kind),
        tensor_parallel=placement.tensor_parallel,
        max_concurrency=engine.max_concurrency,
        judge_concurrency=judges.concurrency,
        local=placement.local,
        error_bars=error_bars,
        n_bootstrap=scoring.n_bootstrap,
        seed=scoring.seed,
        cache=engine.cache,
        cache_path=engine.cache_path,
        retry=engine.retry,
        progress=engine.progress,
        check=engine.check,
    )


def _slots(placement: SweepPlacement) -> tuple[GpuSlot, ...]:
    """The GPU groups (or CPU servers) checkpoints are served on at once; Ray places them itself."""
    if placement.ray is not None and (placement.gpus is not None or placement.servers is not None):
        raise JuristError("--ray places each checkpoint where Ray has room: leave out --gpus and --servers")
    if placement.ray is not None:
        return (None,)
    slots = gpu_slots(placement.gpus, placement.tensor_parallel, placement.servers)
    if placement.local and sum(slot is not None for slot in slots) > 1:
        raise JuristError(
            "--local runs a checkpoint in this process, on one group of GPUs at a time: "
            "give --gpus one group (or add --ray, which runs each checkpoint in its own process)"
        )
    return slots
