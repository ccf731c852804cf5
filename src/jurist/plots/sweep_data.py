"""Reading a sweep's ``sweep.json`` into typed rows, checked field by field.

The file is written by ``jurist sweep`` but may have been edited, truncated or copied from another version,
so every field the plots use is checked here and a bad one stops the command with a one-line error naming
the file and the field (``results[3].value``). A row's uncertainty fields (``ci95``, ``std``, ``sem``,
``per_sample``) and ``judge`` may be absent, read as null: the point is then drawn without an error bar.
Fields the plots do not use are left alone, so the sweep may add more without breaking old plot code.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.errors import InputError, JuristError

SWEEP_FILE = "sweep.json"
SWEEP_VERSION = 1
CHECKPOINT_STATUSES = ("complete", "incomplete", "failed")


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint of the sweep and how its runs ended."""

    name: str
    step: int
    status: str
    error: str | None


@dataclass(frozen=True)
class ResultRow:
    """One checkpoint x task x judge x metric value; ``value`` is None when every item went unscored."""

    checkpoint: str
    step: int
    task: str
    judge: str | None
    metric: str
    value: float | None
    ci95: tuple[float, float] | None
    std: float | None
    sem: float | None
    per_sample: tuple[float | None, ...] | None
    fraction: bool


@dataclass(frozen=True)
class SweepData:
    """A whole ``sweep.json``, as far as the plots need it."""

    directory: Path
    name: str
    checkpoints: tuple[CheckpointInfo, ...]
    tasks: tuple[str, ...]
    judges: tuple[str, ...]
    results: tuple[ResultRow, ...]


class _Fields:
    """Typed access to one JSON object's fields; a wrong type raises InputError naming ``where.field``."""

    def __init__(self, path: Path, where: str, obj: object) -> None:
        if not isinstance(obj, dict):
            raise InputError(path, where or "top level", f"expected a JSON object, got {_kind(obj)}")
        self.path = path
        self.where = where
        self.obj: dict[str, Any] = obj

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _fail(self, key: str, expected: str) -> InputError:
        if key not in self.obj:
            return InputError(self.path, self._name(key), "missing")
        return InputError(self.path, self._name(key), f"expected {expected}, got {_shown(self.obj[key])}")

    def text(self, key: str) -> str:
        value = self.obj.get(key)
        if not isinstance(value, str) or not value:
            raise self._fail(key, "a non-empty string")
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._fail(key, "a string or null")
        return value

    def integer(self, key: str) -> int:
        value = self.obj.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(key, "an integer")
        return value

    def flag(self, key: str) -> bool:
        value = self.obj.get(key)
        if not isinstance(value, bool):
            raise self._fail(key, "true or false")
        return value

    def number(self, key: str, *, required: bool = True) -> float | None:
        """A finite number, or None for null (and for NaN/Infinity, which Python's json lets through)."""
        if required and key not in self.obj:
            raise self._fail(key, "a number or null")
        return _finite(self.obj[key], lambda: self._fail(key, "a number or null"))

    def texts(self, key: str, *, required: bool = True) -> tuple[str, ...]:
        value = self.obj.get(key)
        if value is None and not required and key not in self.obj:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise self._fail(key, "a list of names")
        return tuple(value)

    def items(self, key: str) -> list[Any]:
        value = self.obj.get(key)
        if not isinstance(value, list):
            raise self._fail(key, "a list")
        return value

    def interval(self, key: str) -> tuple[float, float] | None:
        """``[low, high]`` or null; an interval with a null or non-finite end counts as no interval."""
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != 2:
            raise self._fail(key, "[low, high] or null")
        low = _finite(value[0], lambda: self._fail(key, "[low, high] numbers"))
        high = _finite(value[1], lambda: self._fail(key, "[low, high] numbers"))
        if low is None or high is None:
            return None
        if low > high:
            raise InputError(self.path, self._name(key), f"low {low} is above high {high}")
        return (low, high)

    def samples(self, key: str) -> tuple[float | None, ...] | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self._fail(key, "a list of numbers or null")
        return tuple(_finite(item, lambda: self._fail(key, "a list of numbers or null")) for item in value)


def _finite(value: object, error: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error()
    number = float(value)
    return number if math.isfinite(number) else None


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else f"{_kind(value)} ({text[:30]}...)"


def read_sweep(directory: Path) -> SweepData:
    """Read and check ``directory/sweep.json``; JuristError when the directory or the file is not there."""
    if not directory.is_dir():
        raise JuristError(f"{directory}: not a directory (give a sweep directory written by jurist sweep)")
    path = directory / SWEEP_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "", "not found: is this a directory written by jurist sweep?") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, "", f"cannot be read ({exc})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})"
        ) from None
    top = _Fields(path, "", document)
    version = top.integer("version")
    if version != SWEEP_VERSION:
        raise InputError(path, "version", f"{version} is not a version this jurist reads ({SWEEP_VERSION})")
    checkpoints = tuple(
        _checkpoint(_Fields(path, f"checkpoints[{k}]", item))
        for k, item in enumerate(top.items("checkpoints"))
    )
    results = tuple(_row(_Fields(path, f"results[{k}]", item)) for k, item in enumerate(top.items("results")))
    return SweepData(
        directory=directory,
        name=top.text("name"),
        checkpoints=checkpoints,
        tasks=top.texts("tasks"),
        judges=top.texts("judges", required=False),
        results=results,
    )


def _checkpoint(fields: _Fields) -> CheckpointInfo:
    status = fields.text("status")
    if status not in CHECKPOINT_STATUSES:
        raise InputError(
            fields.path, f"{fields.where}.status", f"{status!r} is not one of {CHECKPOINT_STATUSES}"
        )
    return CheckpointInfo(
        name=fields.text("name"),
        step=fields.integer("step"),
        status=status,
        error=fields.optional_text("error"),
    )


def _row(fields: _Fields) -> ResultRow:
    return ResultRow(
        checkpoint=fields.text("checkpoint"),
        step=fields.integer("step"),
        task=fields.text("task"),
        judge=fields.optional_text("judge") or None,
        metric=fields.text("metric"),
        value=fields.number("value"),
        ci95=fields.interval("ci95"),
        std=fields.number("std", required=False),
        sem=fields.number("sem", required=False),
        per_sample=fields.samples("per_sample"),
        fraction=fields.flag("fraction"),
    )
