"""What a tracker receives: one number at one step under one name, made from sweep.json's rows.

A row (checkpoint x task x judge x metric) gives its headline value under ``jurist/<task>/<metric>`` (and
``/<judge>`` when a judge scored it, ``/<model>`` for a plain run of several models), with companion series
for the 95% interval's bounds and the spread over samples: ``…_ci95_low``, ``…_ci95_high``, ``…_std``.
Names keep to the characters every tracker accepts (MLflow's are the narrowest: letters, digits, ``_ - .``,
space and ``/``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PREFIX = "jurist"
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. /]")


@dataclass(frozen=True, order=True)
class Point:
    """One value of one series at one training step."""

    step: int
    key: str
    value: float

    @property
    def ident(self) -> str:
        """What the back-fill ledger remembers as logged (a series at a step is logged once)."""
        return f"{self.key}@{self.step}"


def series_name(*parts: str) -> str:
    """``jurist/part/part``, each part with unsafe characters replaced by ``_``."""
    return "/".join([PREFIX, *(_UNSAFE.sub("_", part).strip("/") or "_" for part in parts)])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def row_points(
    row: Mapping[str, Any], step: int, *, with_model: bool = False, interval: str = "ci95"
) -> list[Point]:
    """The points of one result row at ``step`` (none when it has no value); ``interval`` names the
    bounds' series by the level they were computed at (a sweep's are 95%, a run's its ``--ci``)."""
    value = _number(row.get("value"))
    if value is None:
        return []
    parts = [str(row.get("task") or "run"), str(row.get("metric") or "score")]
    if row.get("judge"):
        parts.append(str(row["judge"]))
    if with_model and row.get("model"):
        parts.append(str(row["model"]))
    key = series_name(*parts)
    points = [Point(step, key, value)]
    ci95 = row.get("ci95")
    if isinstance(ci95, (list, tuple)) and len(ci95) == 2:
        for suffix, bound in zip((f"_{interval}_low", f"_{interval}_high"), ci95, strict=True):
            number = _number(bound)
            if number is not None:
                points.append(Point(step, key + suffix, number))
    std = _number(row.get("std"))
    if std is not None:
        points.append(Point(step, key + "_std", std))
    return points


def sweep_points(rows: Iterable[Mapping[str, Any]]) -> list[Point]:
    """Every point of sweep.json's ``results`` (each row carries its checkpoint's step), in step order."""
    points = [p for row in rows if isinstance(row.get("step"), int) for p in row_points(row, row["step"])]
    return sorted(points)
