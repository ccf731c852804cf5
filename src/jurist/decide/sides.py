"""What ``jurist compare`` and ``--gate`` compare: each argument read as one side, the runs of a model on
one or more tasks.

An argument is a run directory (run.json inside: one task), a folder of task run directories (a sweep's
checkpoint, ``jurist run --tasks``' OUT), or a sweep directory (sweep.json inside), which stands for each
of its checkpoints in the order of their steps. A run of several models needs the one meant named,
``PATH#MODEL``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from jurist.errors import JuristError


@dataclass(frozen=True)
class TaskRun:
    """One task's run directory and the model in it that is compared."""

    task: str
    root: Path
    model: str | None


@dataclass(frozen=True)
class Side:
    """One compared thing: its name (the directory as given) and its run per task."""

    name: str
    tasks: dict[str, TaskRun]


def _run_json(path: Path) -> dict[str, object] | None:
    file = path / "run.json"
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{file}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else None


def _task_name(path: Path, fields: dict[str, object]) -> str:
    return str(fields.get("bench_name") or fields.get("bench") or path.name)


def _sweep_checkpoints(path: Path) -> list[Path]:
    """A sweep's checkpoint folders in step order (sweep.json's list; else the folders that hold runs)."""
    try:
        data = json.loads((path / "sweep.json").read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path / 'sweep.json'}: not valid JSON ({exc})") from None
    listed = data.get("checkpoints") if isinstance(data, dict) else None
    names: list[tuple[float, str]] = []
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name") or entry.get("checkpoint"), str):
            step = entry.get("step")
            name = str(entry.get("name") or entry.get("checkpoint"))
            names.append((float(step) if isinstance(step, (int, float)) else float("inf"), name))
    folders = [path / name for _, name in sorted(names)] if names else sorted(p for p in path.iterdir())
    return [f for f in folders if f.is_dir() and not f.name.startswith("_") and _task_runs(f)]


def _task_runs(folder: Path) -> dict[str, Path]:
    runs: dict[str, Path] = {}
    for child in sorted(folder.iterdir()) if folder.is_dir() else []:
        fields = _run_json(child) if child.is_dir() else None
        if fields is not None:
            runs[_task_name(child, fields)] = child
    return runs


def _side(name: str, path: Path, model: str | None) -> Side:
    fields = _run_json(path)
    if fields is not None:
        return Side(name, {_task_name(path, fields): TaskRun(_task_name(path, fields), path, model)})
    runs = _task_runs(path)
    if not runs:
        raise JuristError(f"{path}: neither a run directory (run.json) nor a folder of task runs")
    return Side(name, {task: TaskRun(task, root, model) for task, root in runs.items()})


def read_sides(arguments: list[str]) -> list[Side]:
    """Every argument as its sides, in order (a sweep directory gives one side per checkpoint)."""
    sides: list[Side] = []
    for argument in arguments:
        text, _, model = argument.partition("#")
        path = Path(text)
        if not path.is_dir():
            raise JuristError(f"{text}: no such run directory")
        if (path / "sweep.json").is_file() and _run_json(path) is None:
            if model:
                raise JuristError(f"{argument}: #MODEL names a model of one run, not of a sweep")
            sides.extend(_side(str(folder), folder, None) for folder in _sweep_checkpoints(path))
        else:
            sides.append(_side(argument, path, model or None))
    return sides
