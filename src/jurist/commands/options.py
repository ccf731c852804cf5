"""The command-line option groups that ``jurist run``, ``jurist sweep`` and ``jurist show`` share: each
flag declared once, so it is spelled, defaulted and checked the same in every command that takes it.

A group is a frozen dataclass whose fields are typer options (``Annotated``); a command names the group as
one parameter (``requests: RequestFlags``) and :func:`grouped` spreads its fields into the command's options
and hands the command the group back, filled in. Each group turns its raw flags into the settings they mean
(and refuses bad values) in one method, so no flag is checked twice.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core

from jurist.errors import JuristError, unknown_value

if TYPE_CHECKING:
    from jurist.config import ModelStringOptions
    from jurist.engine import RetryPolicy
    from jurist.run import ShardChoice, TaskFlags

Command = TypeVar("Command", bound=Callable[..., Any])


def split_list(values: list[str] | None) -> list[str]:
    """``--judge a --judge b`` and ``--judge a,b`` both give ``[a, b]``."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _is_group(annotation: object) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


def grouped(command: Command) -> Command:
    """``command`` with each option-group parameter spread into its fields (typer reads the signature) and
    gathered back into the group when it is called. Two groups declaring one name is a programming error."""
    signature = inspect.signature(command, eval_str=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, type[Any]] = {}
    for parameter in signature.parameters.values():
        if not _is_group(parameter.annotation):
            parameters.append(parameter)
            continue
        groups[parameter.name] = parameter.annotation
        hints = typing.get_type_hints(parameter.annotation, include_extras=True)
        for field in dataclasses.fields(parameter.annotation):
            default = inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
            parameters.append(
                inspect.Parameter(
                    field.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hints[field.name]
                )
            )
    names = [parameter.name for parameter in parameters]
    if len(names) != len(set(names)):
        raise TypeError(f"{command.__name__}: option groups repeat a name: {sorted(names)}")

    @functools.wraps(command)
    def gathered(**values: Any) -> Any:
        for name, group in groups.items():
            values[name] = group(
                **{field.name: values.pop(field.name) for field in dataclasses.fields(group)}
            )
        return command(**values)

    del gathered.__wrapped__  # typer reads the spread signature below, not the command's own
    gathered.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    gathered.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return typing.cast("Command", gathered)


FORMATS = ("table", "json", "csv", "markdown")
"""What ``--format`` prints the scores as."""


def check_format(fmt: str) -> None:
    """``--format`` names one of :data:`FORMATS`."""
    if fmt not in FORMATS:
        raise unknown_value("--format", fmt, FORMATS)


def use_data_dir(data_dir: Path | None) -> None:
    """``--data-dir``: benchmarks (and NLTK lookups) read local copies from there."""
    if data_dir is None:
        return
    if not data_dir.is_dir():
        raise JuristError(f"--data-dir: {data_dir} is not a folder")
    os.environ["JURIST_DATA_DIR"] = str(data_dir.resolve())


def check_tracking(track: list[str] | None) -> None:
    """Each ``--track`` target is one jurist can log to."""
    if track:
        from jurist.track import check_target

        for target in track:
            check_target(target)


DataDir = Annotated[
    Path | None,
    typer.Option(help="folder with local copies of benchmark data [$JURIST_DATA_DIR]; no download"),
]
Gate = Annotated[
    Path | None,
    typer.Option("--gate", help="a gate policy (YAML) checked on the scores; exit 4 on a fail"),
]
Format = Annotated[str, typer.Option("--format", help="table | json | csv | markdown")]
Suite = Annotated[
    Path | None,
    typer.Option(help="a suite file: tasks with their judges, baselines, samples, limits, options"),
]
Anchor = Annotated[
    Path | None,
    typer.Option(
        help="a replacement.json (jurist judges replace): scores re-anchored to the published scale"
    ),
]
StyleControl = Annotated[
    str | None,
    typer.Option(
        "--style-control",
        help="control scores for style: length, markdown or length,markdown (alone: both)",
    ),
]
LengthControlled = Annotated[
    bool, typer.Option("--length-controlled", help="score with AlpacaEval's length-controlled win rate")
]
Ensemble = Annotated[bool, typer.Option("--ensemble", help="pool the judges' battles into one score")]
Track = Annotated[
    list[str] | None,
    typer.Option(
        "--track",
        help="log the headline metrics (a sweep: each checkpoint's, at its step): tensorboard:DIR, "
        "mlflow:URI, wandb:ENTITY/PROJECT, wandb:ENTITY/PROJECT/RUN_ID (repeatable)",
    ),
]


Ci = Annotated[float, typer.Option(min=0.5, max=0.999, help="CI level")]


@dataclasses.dataclass(frozen=True)
class TaskOptionFlags:
    """The benchmarks of a run of several (``--tasks``, ``--suite``) and what each is given: bare for every
    task, ``TASK=VALUE`` for one (:mod:`jurist.run.task_options`)."""

    tasks: Annotated[
        str | None,
        typer.Option(
            help="several benchmarks, comma-separated (e.g. ifeval,starter): each into OUT/<task>, one "
            "combined table (-B TASK:KEY=VALUE for a task's options)"
        ),
    ] = None
    suite: Suite = None
    bench_option: Annotated[
        list[str] | None,
        typer.Option(
            "-B",
            "--bench-option",
            help="benchmark option KEY=VALUE, e.g. -B split=claude; TASK:KEY=VALUE for one task",
        ),
    ] = None
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            help="baseline: alias, model string or answers .jsonl (default: the benchmark's; a sweep makes "
            "a model's answers once); TASK=B for one task"
        ),
    ] = None
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="judge alias or model string (repeatable, or a,b); TASK=J for one task "
            "(a sweep's default: the embedded judge)",
        ),
    ] = None
    samples: Annotated[
        list[str] | None,
        typer.Option(help="answers per prompt, mean@N (default: the benchmark's); TASK=N for one task"),
    ] = None
    limit: Annotated[
        list[str] | None, typer.Option(help="use only N questions (default: all); TASK=N for one task")
    ] = None

    @property
    def several(self) -> bool:
        return self.tasks is not None or self.suite is not None

    def flags(self, bench_options: dict[str, str] | None = None) -> TaskFlags:
        from jurist.run import TaskFlags

        return TaskFlags(
            self.judge or [], self.baseline or [], self.samples or [], self.limit or [], bench_options or {}
        )


@dataclasses.dataclass(frozen=True)
class ModelStringFlags:
    """What a model string (``openai/NAME``, ``vllm/NAME``, a path, docs/models.md) that names none of its
    own takes."""

    models_file: Annotated[
        Path | None, typer.Option("--models-file", help="api_config.yaml-style file (a sweep's: the judges')")
    ] = None
    base_url: Annotated[
        str | None, typer.Option(help="URL of the model strings' OpenAI-compatible server")
    ] = None
    api_key: Annotated[
        str | None, typer.Option(help="key of the model strings (never written anywhere)", show_default=False)
    ] = None
    model_setting: Annotated[
        list[str] | None,
        typer.Option(
            "-M", "--model-setting", help="model-string setting KEY=VALUE: temperature=0, max_tokens=512…"
        ),
    ] = None

    def options(self) -> ModelStringOptions:
        from jurist.config import ModelStringOptions, parse_settings

        return ModelStringOptions(self.base_url, self.api_key, parse_settings(self.model_setting or []))


@dataclasses.dataclass(frozen=True)
class RequestFlags:
    """How requests are retried, cached, probed first and shown."""

    max_attempts: Annotated[
        int, typer.Option(min=1, help="attempts per request before it counts as failed")
    ] = 6
    retry_base_delay: Annotated[float, typer.Option(min=0.0, help="first backoff delay, seconds")] = 1.0
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="neither read nor write the machine-wide request cache")
    ] = False
    cache_dir: Annotated[
        Path | None, typer.Option(help="request cache folder [$JURIST_CACHE_DIR or ~/.cache/jurist]")
    ] = None
    no_check: Annotated[
        bool,
        typer.Option("--no-check", help="skip probing the models' endpoints (a sweep's: the judges') first"),
    ] = False
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bars")] = False

    def retry(self) -> RetryPolicy:
        from jurist.engine import RetryPolicy

        return RetryPolicy(max_attempts=self.max_attempts, base_delay=self.retry_base_delay)


@dataclasses.dataclass(frozen=True)
class ShardFlags:
    """Which part of the work this process does, or Ray to do every part."""

    shard: Annotated[
        str | None,
        typer.Option(help="run part I of N (0-based: 0/4 … 3/4) into its own directory; jurist merge joins"),
    ] = None
    shards: Annotated[
        int | None,
        typer.Option(help="run one of N parts, its index from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX"),
    ] = None
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="on the Ray cluster at ADDRESS (auto: the one on this machine; alone or local: a new local "
            "instance): a run's --shards N parts as Ray tasks, a sweep's checkpoint generations",
        ),
    ] = None

    def part(self) -> ShardChoice | None:
        """The part ``--shard`` or ``--shards`` names; None: all of it."""
        from jurist.run import shard_choice

        return shard_choice(self.shard, self.shards)

    def choice(self) -> ShardChoice | None:
        """A run's part: None under ``--ray``, which runs every part."""
        return self.part() if self.ray is None else None


@dataclasses.dataclass(frozen=True)
class AdaptiveFlags:
    """``--adaptive`` (docs/decisions.md): judge in seeded random rounds until the answer is known."""

    adaptive: Annotated[
        bool,
        typer.Option("--adaptive", help="judge questions in seeded random rounds until the answer is known"),
    ] = False
    target_ci: Annotated[
        float | None, typer.Option(help="--adaptive: stop when the interval is narrower than W (task units)")
    ] = None
    decide_vs: Annotated[
        str | None,
        typer.Option(
            help="--adaptive: stop once the paired comparison with this run is decided (a sweep's: each "
            "checkpoint against this folder of task runs, or 'best': against the best checkpoint so far, "
            "the sweep's default without --target-ci)"
        ),
    ] = None
    delta: Annotated[
        float, typer.Option(min=0.0, help="--decide-vs: the smallest difference that counts")
    ] = 0.0
    adaptive_round: Annotated[int, typer.Option("--round", min=1, help="--adaptive: questions per round")] = (
        20
    )

    def versus(self) -> Path | None:
        """The run ``--decide-vs`` names (None: none)."""
        return Path(self.decide_vs) if self.decide_vs is not None else None

    def check(self) -> None:
        if (self.target_ci is not None or self.decide_vs is not None) and not self.adaptive:
            raise JuristError("--target-ci and --decide-vs apply to --adaptive only")
