"""Per-task options of ``jurist run --tasks`` and ``jurist sweep``: each task its own judges, baseline,
samples, limit and ``-B`` options, from the command line (``--judge healthbench=G``) or a suite file.

A bare value (``--judge G``) is for every task that takes it; ``TASK=VALUE`` is for that task alone and
replaces the bare value there. The command line replaces the suite file, field by field and task by task.
Nothing is silently dropped: a value named for one task that the task does not take is a one-line error,
and so is a bare value that no task takes (``--baseline`` where every task is rule-checked or graded by
rubric). Only a bare value is left out of the tasks it does not apply to (a shared judge is not given to
IFEval, which no judge judges).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurist.benchmarks import Benchmark
from jurist.config import MAX_SAMPLES, Suite, SuiteTask
from jurist.errors import JuristError
from jurist.run.plan import judges_against_baselines

FIELDS = ("judges", "baseline", "samples", "limit")
FLAGS = {"judges": "--judge", "baseline": "--baseline", "samples": "--samples", "limit": "--limit"}


@dataclass(frozen=True)
class TaskSettings:
    """What one task is given beside the options every task shares; unset (empty, None): the default."""

    judges: tuple[str, ...] = ()
    baseline: str | None = None
    samples: int | None = None
    limit: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict)
    """Field -> what gave it (``--judge healthbench=G``, ``suite.yaml: line 7: tasks.healthbench.judges``)."""
    shared: frozenset[str] = frozenset()
    """The fields given for every task at once: left out where the task does not take them."""


@dataclass(frozen=True)
class TaskFlags:
    """The command line's per-task options as typed: each value bare or ``TASK=VALUE``, comma-separated."""

    judges: Sequence[str] = ()
    baselines: Sequence[str] = ()
    samples: Sequence[str] = ()
    limits: Sequence[str] = ()
    bench_options: Mapping[str, str] = field(default_factory=dict)
    """``-B TASK:KEY=VALUE``, already parsed (``TASK:KEY`` -> VALUE)."""


def parse_tasks(text: str) -> list[str]:
    """``a,b,c`` as a list, each once, in order; an empty list is a usage error."""
    tasks = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not tasks:
        raise JuristError("--tasks: name at least one benchmark (e.g. --tasks ifeval,healthbench)")
    return tasks


def task_options(options: Mapping[str, str], tasks: Sequence[str]) -> dict[str, dict[str, str]]:
    """``-B TASK:KEY=VALUE`` sorted to its task; a bare ``-B KEY=VALUE`` is ambiguous with several tasks."""
    chosen: dict[str, dict[str, str]] = {task: {} for task in tasks}
    for key, value in options.items():
        task, sep, name = key.partition(":")
        if not sep:
            raise JuristError(f"-B {key}: with --tasks, say which task it is for: -B TASK:{key}=VALUE")
        if task not in chosen:
            raise JuristError(f"-B {key}: {task!r} is not one of --tasks ({', '.join(tasks)})")
        chosen[task][name] = value
    return chosen


def split_per_task(
    flag: str, values: Sequence[str], tasks: Sequence[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """(bare values, per-task values) of a repeatable, comma-splittable ``flag``: ``--judge a,b`` is two
    bare values, ``--judge healthbench=G`` one for healthbench; a task not in ``tasks``, or a list that mixes
    the two forms (``healthbench=G,H``: is H healthbench's?), is an error."""
    bare: list[str] = []
    own: dict[str, list[str]] = {}
    for value in values:
        parts = [p.strip() for p in value.split(",") if p.strip()]
        if not parts:  # "--judge ,,," must not quietly mean "no judge given" (the embedded one)
            raise JuristError(f"{flag} {value!r}: names nothing; give a value (a,b for several)")
        named = [p for p in parts if "=" in p]
        if named and len(named) < len(parts):  # "healthbench=G,H": is H for healthbench or for every task?
            bare_one = next(p for p in parts if "=" not in p)
            raise JuristError(
                f"{flag} {value}: {bare_one!r} names no task; give each task's values as TASK=VALUE "
                f"and a value for every task in its own {flag}"
            )
        for part in parts:
            task, sep, item = (s.strip() for s in part.partition("="))
            if not sep:
                bare.append(part)
                continue
            if task not in tasks and len(tasks) == 1 and "/" in item and "/" not in task:
                bare.append(part)  # one benchmark: LABEL=STRING names a model string's row label
                continue
            if task not in tasks:
                listed = ", ".join(tasks)
                raise JuristError(f"{flag} {part}: {task!r} is not one of the tasks ({listed})")
            if not item:
                raise JuristError(f"{flag} {part}: give a value after {task}=")
            own.setdefault(task, []).append(item)
    return bare, own


def _one(flag: str, values: list[str], whose: str) -> str:
    if len(set(values)) > 1:
        raise JuristError(
            f"{flag}: {whose} is given {len(set(values))} different values ({', '.join(values)})"
        )
    return values[0]


def _count(label: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise JuristError(f"{label}{text}: give a whole number of at least 1 (N, or TASK=N for one task)")
    return value


def _flag_value(name: str, values: list[str], task: str | None) -> Any:
    """The value of one field for one task (``task``), or for every task (None)."""
    flag = FLAGS[name]
    if name == "judges":
        return tuple(dict.fromkeys(values))
    text = _one(flag, values, task or "every task")
    if name == "baseline":
        return text
    count = _count(f"{flag} {task}=" if task else f"{flag} ", text)
    if name == "samples" and count > MAX_SAMPLES:
        raise JuristError(f"{flag} {text}: at most {MAX_SAMPLES:,} answers per prompt")
    return count


def task_settings(
    tasks: Sequence[str], flags: TaskFlags | None = None, suite: Suite | None = None
) -> dict[str, TaskSettings]:
    """Each task's settings: its own command-line value, else the command line's bare one, else its
    suite entry's, else the suite's default; ``-B`` options over the suite entry's ``options``."""
    flags = flags or TaskFlags()
    given = {
        "judges": flags.judges,
        "baseline": flags.baselines,
        "samples": flags.samples,
        "limit": flags.limits,
    }
    parsed = {name: split_per_task(FLAGS[name], values, tasks) for name, values in given.items()}
    options = task_options(flags.bench_options, tasks)
    settings: dict[str, TaskSettings] = {}
    for task in tasks:
        entry = suite.tasks.get(task, SuiteTask()) if suite is not None else SuiteTask()
        defaults = suite.defaults if suite is not None else SuiteTask()
        values: dict[str, Any] = {}
        origins: dict[str, str] = {}
        shared: set[str] = set()
        for name in FIELDS:
            flag = FLAGS[name]
            bare, own = parsed[name]
            if task in own:
                values[name] = _flag_value(name, own[task], task)
                origins[name] = f"{flag} {task}={','.join(own[task])}"
            elif bare:
                values[name] = _flag_value(name, bare, None)
                origins[name], shared = f"{flag} {','.join(bare)}", shared | {name}
            elif name in entry.where:
                values[name], origins[name] = getattr(entry, name), entry.where[name]
            elif name in defaults.where:
                values[name], origins[name] = getattr(defaults, name), defaults.where[name]
                shared.add(name)
        if "task" in entry.where:
            origins["task"] = entry.where["task"]
        merged = {**(entry.options if suite is not None else {}), **options[task]}
        settings[task] = TaskSettings(**values, options=merged, origins=origins, shared=frozenset(shared))
    return settings


def load_task(task: str, chosen: TaskSettings) -> Benchmark:
    """``task`` loaded with its options; an error names the suite file's line that lists it, if one does."""
    from jurist.benchmarks import load_benchmark

    try:
        return load_benchmark(task, dict(chosen.options))
    except JuristError as exc:
        if "task" in chosen.origins:
            raise JuristError(f"{chosen.origins['task']}: {exc}") from None
        raise


def refusal(name: str, bench: Benchmark) -> str | None:
    """Why ``bench`` does not take the option ``name`` (None: it does)."""
    if name == "judges" and bench.judge_kind is None:
        return f"{bench.name} is checked by rule, with no judge"
    if name == "baseline":
        if bench.candidates:
            return f"{bench.name} judges its own response pairs, with no baseline"
        if bench.judge_kind is None:
            return f"{bench.name} is checked by rule, with no baseline"
        if not judges_against_baselines(bench):
            return f"{bench.name} grades each answer on its own ({bench.judge_kind}), with no baseline"
    return None


def fit_to_benchmarks(
    settings: Mapping[str, TaskSettings], benches: Mapping[str, Benchmark]
) -> dict[str, TaskSettings]:
    """``settings`` with the shared values left out of the tasks that do not take them; a value named for
    a task that does not take it, or a shared value that no task takes, is a one-line error."""
    fitted: dict[str, TaskSettings] = {}
    unused: dict[str, tuple[str, list[str]]] = {}
    for task, chosen in settings.items():
        values: dict[str, Any] = {}
        for name in FIELDS:
            value = getattr(chosen, name)
            if value is None or value == ():
                continue
            reason = refusal(name, benches[task])
            if reason is None:
                values[name] = value
                unused.setdefault(name, (chosen.origins[name], []))[1].append("")  # taken somewhere
            elif name in chosen.shared:
                unused.setdefault(name, (chosen.origins[name], []))[1].append(reason)
            else:
                raise JuristError(f"{chosen.origins[name]}: does not apply: {reason}")
        fitted[task] = TaskSettings(**values, options=chosen.options, origins=chosen.origins)
    for origin, reasons in unused.values():
        if all(reasons):  # no task took it
            raise JuristError(f"{origin}: applies to none of the tasks: {'; '.join(reasons)}")
    return fitted


__all__ = [
    "TaskFlags",
    "TaskSettings",
    "fit_to_benchmarks",
    "load_task",
    "parse_tasks",
    "split_per_task",
    "task_options",
    "task_settings",
]
