"""What a sweep was asked to do, resolved once: checkpoints, tasks, slots, judges, and each run's config.

The plan is plain data (it travels to Ray workers as it is). It says how each checkpoint becomes a
candidate model (alias = its name, a ``serve`` block for its weights, sampling settings from
``--checkpoint-settings`` or the defaults below), which GPU ids each slot serves on, and the RunConfig of
each of the two phases of a checkpoint's task: generation (``inference-only``, in the slot, against the
checkpoint's server) and judging (``judge-only``, on the judges' own limit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from jurist.benchmarks import Benchmark
from jurist.config import FieldError, ModelSpec, ModelStringOptions, ServeKind, ServeSpec
from jurist.engine import RetryPolicy
from jurist.errors import JuristError
from jurist.run import EngineSettings, RunConfig, ScoringSettings, TaskSettings
from jurist.sweep.checkpoints import Checkpoint

MODELS_FILE = "models.yaml"
BASELINES_DIR = "_baselines"
"""SWEEP_DIR/_baselines/<task>: a ``--baseline`` model's answers, generated once for every checkpoint."""
"""SWEEP_DIR/models.yaml: the checkpoints as models-file entries, so each run directory resumes alone."""

CI_LEVEL = 0.95  # sweep.json's ``ci95``: every task of a sweep is scored at this level

GpuSlot = tuple[int, ...] | None
"""The GPU ids one server of the sweep runs on (its CUDA_VISIBLE_DEVICES); None: a CPU slot."""


@dataclass(frozen=True)
class SweepPlan:
    """Everything ``jurist sweep`` was asked, checked; shared by the local scheduler and Ray workers."""

    out: Path
    name: str
    checkpoints: tuple[Checkpoint, ...]
    tasks: tuple[str, ...]
    task_options: dict[str, dict[str, str]]
    slots: tuple[GpuSlot, ...] = (None,)
    samples: dict[str, int] = field(default_factory=dict)  # --samples per task (absent: the benchmark's)
    limits: dict[str, int] = field(default_factory=dict)  # --limit: questions per task (absent: all)
    # --adaptive: questions of one checkpoint's task (checkpoint -> task -> n), over ``limits``; a task's
    # ``limits`` entry is then the largest of them (the baseline's answers cover every prefix)
    run_limits: dict[str, dict[str, int]] = field(default_factory=dict)
    limit_sample: Literal["first", "stratified", "shuffled"] = "first"  # which questions a limit keeps
    limit_seed: int = 0  # --adaptive's order (a shuffled limit)
    judges: tuple[str, ...] = ()  # every judge the sweep names (for the checks and sweep.json)
    judged_tasks: tuple[str, ...] = ()  # the tasks that have a judge (the others are checked by rule)
    task_judges: dict[str, tuple[str, ...]] = field(default_factory=dict)  # absent: the embedded judge
    baselines: dict[str, str] = field(default_factory=dict)  # --baseline per task: an alias or a .jsonl
    models_file: Path | None = None
    # the judges' --base-url, --api-key and -M (model strings); the key stays on this host (ray_backend)
    model_strings: ModelStringOptions = field(default_factory=ModelStringOptions)
    settings: ModelSpec | None = None  # --checkpoint-settings: the entry every checkpoint copies
    serve_kind: ServeKind | None = None  # None: by the checkpoint's path (.gguf: llama.cpp, else vllm)
    tensor_parallel: int | None = None
    max_concurrency: int = 64  # requests in flight per checkpoint server (its own slots cap it too)
    judge_concurrency: int = 8  # judge requests in flight, all checkpoints together
    local: bool = False
    error_bars: str = "ci95"
    n_bootstrap: int = 100
    seed: int = 0
    cache: bool = True
    cache_path: Path | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    progress: bool = True
    check: bool = True
    shard: dict[str, Any] | None = None  # --shard I/N: index, count, source, owners, facts (sweep/shards.py)

    @property
    def models_path(self) -> Path:
        return self.out / MODELS_FILE

    @property
    def most_samples(self) -> int:
        """The most answers per prompt any task asks of a checkpoint (its sampling settings follow)."""
        return max(self.samples.values(), default=1)

    def baseline_dir(self, task: str) -> Path:
        return self.out / BASELINES_DIR / task

    def generated_baseline(self, task: str) -> str | None:
        """The ``--baseline`` model of ``task`` whose answers the sweep generates once (None: the task's
        baseline is the benchmark's own, or a file of answers)."""
        value = self.baselines.get(task)
        if value is None or value.endswith(".jsonl") or Path(value).is_file():
            return None
        return value

    def baseline_for(self, task: str) -> str | None:
        """What the task's judging is given as ``--baseline``: the file of answers (given, or generated
        once under :meth:`baseline_dir`), or None for the benchmark's own."""
        alias = self.generated_baseline(task)
        if alias is None:
            return self.baselines.get(task)
        return str(self.baseline_dir(task) / "answers" / f"{alias}.jsonl")

    def limit_of(self, task: str, checkpoint: Checkpoint | None = None) -> int | None:
        """The questions one checkpoint's task (or, without one, the task's baseline) is limited to."""
        own = self.run_limits.get(checkpoint.name, {}) if checkpoint is not None else {}
        return own.get(task, self.limits.get(task))

    def run_dir(self, checkpoint: Checkpoint, task: str, root: Path | None = None) -> Path:
        """Where one checkpoint's task runs: ``SWEEP_DIR/<checkpoint>/<task>`` (or under ``root``)."""
        return (root or self.out) / checkpoint.name / task


def gpu_slots(gpus: str | None, tensor_parallel: int | None, servers: int | None) -> tuple[GpuSlot, ...]:
    """The slots of a sweep: ``--gpus`` (ids ``0,1,2,3``, or a count picked among the visible GPUs) cut
    into groups of ``--tensor-parallel``; without ``--gpus``, ``--servers`` CPU slots (default 1)."""
    if gpus is None:
        return (None,) * (servers or 1)
    if servers is not None:
        raise JuristError("--servers counts CPU servers; with --gpus, each group of GPUs is one server")
    ids = _gpu_ids(gpus)
    width = tensor_parallel or 1
    if len(ids) % width:
        raise JuristError(f"--tensor-parallel {width} does not divide the {len(ids)} GPU(s) of --gpus")
    return tuple(tuple(ids[i : i + width]) for i in range(0, len(ids), width))


def _gpu_ids(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        raise JuristError(f"--gpus {text!r}: give GPU ids (0,1,2,3) or a count (4)") from None
    if not numbers or min(numbers) < 0:
        raise JuristError(f"--gpus {text!r}: give GPU ids (0,1,2,3) or a count (4)")
    from jurist.engine import check_visible, pick_gpus, visible_gpus

    visible = visible_gpus()
    if len(numbers) == 1 and "," not in text:  # a count
        if not numbers[0]:
            raise JuristError("--gpus 0 is a count of no GPU: for GPU 0 alone write --gpus 0, (an id list)")
        return pick_gpus(numbers[0], visible)
    if len(set(numbers)) != len(numbers):
        raise JuristError(f"--gpus {text!r} names a GPU twice")
    check_visible(numbers, visible)
    return numbers


def _default_settings(samples: int | None, kind: str) -> dict[str, Any]:
    """Sampling of a checkpoint with no --checkpoint-settings: up to 1024 tokens on a vLLM server, 256
    on a llama.cpp one (a CPU: the embedded model's own limit); greedy for one sample, and for several
    temperature 0.7 with a seed (sample k sends seed + k), so the samples differ and are reproducible."""
    settings: dict[str, Any] = {"max_tokens": 256 if kind == "llama.cpp" else 1024}
    if (samples or 1) > 1:
        return settings | {"temperature": 0.7, "seed": 0}
    return settings | {"temperature": 0.0}


def checkpoint_spec(plan: SweepPlan, checkpoint: Checkpoint, gpus: GpuSlot = None) -> ModelSpec:
    """The candidate model of one checkpoint: alias and served name = its name, a serve block for its
    weights on ``gpus``, sampling from ``--checkpoint-settings`` (or the defaults)."""
    kind = plan.serve_kind or checkpoint.default_kind
    settings: dict[str, Any] = _default_settings(plan.most_samples, kind)
    serve: dict[str, Any] = {}
    base = plan.settings
    if base is not None:
        settings = base.model_dump(
            exclude={"alias", "model", "endpoints", "api_key", "serve"}, exclude_unset=True, by_alias=False
        )
        if base.serve is not None:
            serve = base.serve.model_dump(exclude={"kind", "model", "gpus"}, exclude_unset=True)
            kind = plan.serve_kind or base.serve.kind
    serve |= {"kind": kind, "model": str(checkpoint.path)}
    if gpus is not None:
        serve["gpus"] = list(gpus)
    if plan.tensor_parallel is not None:
        serve["tensor_parallel"] = plan.tensor_parallel
    try:
        return ModelSpec.model_validate(
            {**settings, "alias": checkpoint.name, "model": checkpoint.name, "serve": ServeSpec(**serve)}
        )
    except ValueError as exc:  # a FieldError, or ServeSpec's own check of the whole block
        where = exc.where if isinstance(exc, FieldError) else ""
        message = exc.msg if isinstance(exc, FieldError) else str(exc)
        raise JuristError(f"checkpoint {checkpoint.name}: {where or 'serve'}: {message}") from None


def write_models_file(plan: SweepPlan, path: Path | None = None) -> Path:
    """The checkpoints as a models file (no GPU ids: a slot gives those), for the generation runs and for
    resuming one checkpoint's runs alone with ``jurist run --models-file SWEEP_DIR/models.yaml``."""
    path = path or plan.models_path
    entries = {
        c.name: checkpoint_spec(plan, c).model_dump(
            mode="json", exclude={"alias", "api_key", "endpoints"}, exclude_none=True
        )
        for c in plan.checkpoints
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# written by jurist sweep: one entry per checkpoint (a sweep's slot adds its GPU ids)\n"
    path.write_text(text + yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
    return path


def _base_config(plan: SweepPlan, task: str, out: Path, checkpoint: Checkpoint | None = None) -> RunConfig:
    config = RunConfig(
        bench=task,
        bench_options=dict(plan.task_options.get(task, {})),
        out=out,
        limit=plan.limit_of(task, checkpoint),
        limit_sample=plan.limit_sample,
        limit_seed=plan.limit_seed,
        samples=plan.samples.get(task),
        scoring=ScoringSettings(n_bootstrap=plan.n_bootstrap, seed=plan.seed, ci_level=CI_LEVEL),
        engine=EngineSettings(
            retry=plan.retry,
            progress=plan.progress,
            cache=plan.cache,
            cache_path=plan.cache_path,
            check=False,  # the sweep probes the judges once; a checkpoint's server has no endpoint to probe
            local=plan.local,  # --local: in-process
        ),
    )
    return config


def generation_config(
    plan: SweepPlan, checkpoint: Checkpoint, task: str, root: Path | None = None
) -> RunConfig:
    """One task's answers for one checkpoint (its server, in its slot): nothing judged."""
    config = _base_config(plan, task, plan.run_dir(checkpoint, task, root), checkpoint)
    return dataclasses.replace(
        config,
        models_file=(root or plan.out) / MODELS_FILE,
        models=[checkpoint.name],
        mode="inference-only",
        engine=dataclasses.replace(config.engine, max_concurrency=plan.max_concurrency),
    )


def judging_config(plan: SweepPlan, checkpoint: Checkpoint, task: str) -> RunConfig:
    """One task's judging and scoring for one checkpoint: the answers on disk, the judges' limit."""
    config = _base_config(plan, task, plan.run_dir(checkpoint, task), checkpoint)
    return dataclasses.replace(
        config,
        models_file=plan.models_file,
        models=[checkpoint.name],
        judges=list(plan.task_judges.get(task, ())) if task in plan.judged_tasks else [],
        baseline=plan.baseline_for(task),
        model_strings=plan.model_strings,
        mode="judge-only",
        engine=dataclasses.replace(config.engine, max_concurrency=plan.judge_concurrency),
    )


def baseline_config(plan: SweepPlan, task: str) -> RunConfig:
    """The answers of a task's ``--baseline`` model, once for the whole sweep (on the judges' limit)."""
    alias = plan.generated_baseline(task)
    assert alias is not None
    config = _base_config(plan, task, plan.baseline_dir(task))
    return dataclasses.replace(
        config,
        models_file=plan.models_file,
        models=[alias],
        samples=1,
        mode="inference-only",
        engine=dataclasses.replace(config.engine, max_concurrency=plan.judge_concurrency),
        model_strings=plan.model_strings,
    )


def load_tasks(
    tasks: Sequence[str],
    options: dict[str, dict[str, str]],
    settings: Mapping[str, TaskSettings] | None = None,
) -> dict[str, Benchmark]:
    """Each task loaded now, so a bad name or ``-B`` option fails before anything starts (exit 2), and one
    with fixed response pairs (nothing to generate) is refused. ``settings``: each task's, whose options
    replace ``options`` and whose suite line an error names."""
    from jurist.run import load_task

    loaded = {}
    for task in tasks:
        chosen = (settings or {}).get(task) or TaskSettings(options=options.get(task, {}))
        bench = load_task(task, chosen)
        bench.limited(chosen.limit).require_installed()  # IFBench's NLTK data, for the questions kept
        if bench.candidates:
            raise JuristError(f"--tasks {task}: it judges fixed response pairs, so no checkpoint answers it")
        loaded[task] = bench
    return loaded


def judged_tasks(tasks: Sequence[str], options: dict[str, dict[str, str]]) -> tuple[str, ...]:
    """The tasks that have a judge (each loaded: see :func:`load_tasks`)."""
    loaded = load_tasks(tasks, options)
    return tuple(task for task, bench in loaded.items() if bench.judge_kind is not None)
