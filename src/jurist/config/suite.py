"""Reading a suite file (``--suite suite.yaml``): an evaluation protocol kept as a file, so a lab runs the
same tasks with the same judges, baselines, samples and limits every time.

The file is strict YAML: a key given twice, an unknown field, a wrong type or a bad number is refused
with one line naming the file, the line and the field, the way the models file is read. What a task is
given is checked against the benchmark later (``jurist.run.task_options``); an error there still names
the line it came from (:attr:`SuiteTask.where`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jurist.config.models_file import read_config_bytes, yaml_too_deep
from jurist.errors import InputError

TASK_FIELDS = ("judges", "baseline", "samples", "limit", "options")
"""What a task entry (and the file's top level, for every task) may give."""
TOP_FIELDS = ("name", "description", "tasks", *TASK_FIELDS)
MAX_SAMPLES = 1000
"""The most answers per prompt a run takes (``--samples``, a suite's ``samples``): beyond it a typo, not a
plan (a billion would fill memory before the first request)."""
MAX_SUITE_TASKS = 1000


@dataclass(frozen=True)
class SuiteTask:
    """One task's entry (or the file's defaults for every task): only the fields the file gives are set."""

    judges: tuple[str, ...] = ()
    baseline: str | None = None
    samples: int | None = None
    limit: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    where: Mapping[str, str] = field(default_factory=dict)
    """Field -> ``FILE: line N: FIELD``, where it was given (for errors found later); ``task``: the line
    naming the task."""


@dataclass(frozen=True)
class Suite:
    """A suite file: its tasks in order, each with its own entry, and the defaults of every task."""

    path: Path
    tasks: Mapping[str, SuiteTask]
    defaults: SuiteTask
    name: str | None = None


class _Reader:
    """Walks the composed YAML nodes, so that every value is known with its line."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.loader = yaml.SafeLoader(text)

    def fail(self, node: yaml.Node | None, where: str, message: str) -> InputError:
        line = f"line {node.start_mark.line + 1}: " if node is not None else ""
        return InputError(self.path, f"{line}{where}" if where else line.rstrip(": "), message)

    def mapping(self, node: yaml.Node, where: str, known: tuple[str, ...] | None) -> list[tuple[str, Any]]:
        """(key, value node) pairs of a mapping node; keys are strings, each once, known ones only."""
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, where, "expected a mapping (KEY: VALUE lines)")
        seen: dict[str, int] = {}
        pairs = []
        for key_node, value in node.value:
            key = self.loader.construct_object(key_node, deep=True)
            if not isinstance(key, str) or not key.strip():
                raise self.fail(key_node, where, f"key {key!r} is not a name")
            line = key_node.start_mark.line + 1
            if key in seen:
                raise self.fail(key_node, where, f"{key!r} is given twice (first at line {seen[key]})")
            seen[key] = line
            if known is not None and key not in known:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
                raise self.fail(key_node, where, f"unknown field {key!r}{hint}")
            pairs.append((key, value))
        return pairs

    def scalar(self, node: yaml.Node, where: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, where, "expected a single value")
        return self.loader.construct_object(node, deep=True)

    def text(self, node: yaml.Node, where: str) -> str:
        value = self.scalar(node, where)
        if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
            raise self.fail(node, where, f"expected a name, not {value!r}")
        text = str(value).strip()
        if not text:
            raise self.fail(node, where, "expected a name, not an empty value")
        return text

    def option(self, node: yaml.Node, where: str) -> str:
        """A ``-B`` option's value as the command line would give it (``true``, ``20``, ``claude``)."""
        value = self.scalar(node, where)
        if isinstance(value, bool):
            return "true" if value else "false"
        return self.text(node, where)

    def count(self, node: yaml.Node, where: str, most: int | None = None) -> int:
        value = self.scalar(node, where)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(node, where, f"expected a whole number of at least 1, not {value!r}")
        if most is not None and value > most:
            raise self.fail(node, where, f"{value:,} is more than {most:,} (answers per prompt)")
        return value

    def names(self, node: yaml.Node, where: str) -> tuple[str, ...]:
        """A name, ``a,b``, or a list of names."""
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        names = [part.strip() for item in items for part in self.text(item, where).split(",")]
        if not all(names):
            raise self.fail(node, where, "an empty name in the list")
        return tuple(dict.fromkeys(names))

    def task(self, node: yaml.Node, where: str, known: tuple[str, ...]) -> SuiteTask:
        """One task's entry (``where``: how errors name it, e.g. ``tasks.healthbench``)."""
        if isinstance(node, yaml.ScalarNode) and self.scalar(node, where) is None:
            return SuiteTask()  # "ifeval:" with nothing under it: the task with its defaults
        values: dict[str, Any] = {}
        lines: dict[str, str] = {}
        for key, value in self.mapping(node, where, known):
            name = f"{where}.{key}" if where else key
            if key not in TASK_FIELDS:
                continue  # the top level's own fields (name, tasks...)
            lines[key] = f"{self.path}: line {value.start_mark.line + 1}: {name}"
            if key == "judges":
                values[key] = self.names(value, name)
            elif key == "baseline":
                values[key] = self.text(value, name)
            elif key in ("samples", "limit"):
                values[key] = self.count(value, name, MAX_SAMPLES if key == "samples" else None)
            else:
                values[key] = {
                    option: self.option(setting, f"{name}.{option}")
                    for option, setting in self.mapping(value, name, None)
                }
        return SuiteTask(**values, where=lines)


def load_suite(path: str | Path) -> Suite:
    """Read and check a suite file; a one-line :class:`InputError` (file, line, field) on anything wrong."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "", "suite file not found")
    try:
        text = read_config_bytes(path, "suite file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, "", f"not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    try:
        return _read_suite(path, text)
    except RecursionError:  # composed, but a value nested deeper than it can be built
        raise yaml_too_deep(path) from None


def _read_suite(path: Path, text: str) -> Suite:
    reader = _Reader(path, text)
    try:
        root = reader.loader.get_single_node()
    except RecursionError:
        raise yaml_too_deep(path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise InputError(path, where, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    finally:
        reader.loader.dispose()
    if root is None:
        raise InputError(path, "", "the file is empty: give at least 'tasks:'")
    top = dict(reader.mapping(root, "", TOP_FIELDS))
    if "tasks" not in top:
        raise reader.fail(root, "", "no 'tasks:' (the benchmarks the suite runs)")
    tasks_node = top["tasks"]
    tasks: dict[str, SuiteTask] = {}
    if isinstance(tasks_node, yaml.SequenceNode):  # a plain list of names
        for item in tasks_node.value:
            name = reader.text(item, "tasks")
            if name in tasks:
                raise reader.fail(item, "tasks", f"{name!r} is given twice")
            tasks[name] = SuiteTask(where={"task": f"{path}: line {item.start_mark.line + 1}: tasks"})
    elif not isinstance(tasks_node, yaml.MappingNode):
        raise reader.fail(tasks_node, "tasks", "expected the benchmarks as a mapping or a list")
    else:
        first: dict[str, int] = {}
        for key_node, body in tasks_node.value:
            name = reader.text(key_node, "tasks")
            if name in first:
                message = f"{name!r} is given twice (first at line {first[name]})"
                raise reader.fail(key_node, "tasks", message)
            first[name] = key_node.start_mark.line + 1
            entry = reader.task(body, f"tasks.{name}", TASK_FIELDS)
            line = f"{path}: line {key_node.start_mark.line + 1}: tasks.{name}"
            tasks[name] = dataclasses.replace(entry, where={**entry.where, "task": line})
    if not tasks:
        raise reader.fail(tasks_node, "tasks", "name at least one benchmark")
    if len(tasks) > MAX_SUITE_TASKS:
        raise reader.fail(tasks_node, "tasks", f"{len(tasks):,} tasks: at most {MAX_SUITE_TASKS:,}")
    defaults = reader.task(root, "", TOP_FIELDS)
    title = reader.text(top["name"], "name") if "name" in top else None
    return Suite(path=path, tasks=tasks, defaults=defaults, name=title)


__all__ = ["MAX_SAMPLES", "MAX_SUITE_TASKS", "TASK_FIELDS", "Suite", "SuiteTask", "load_suite"]
