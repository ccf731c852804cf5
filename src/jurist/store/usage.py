"""Usage totals across the runs of one directory: a re-run that sends nothing must not reset them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def add_usage(total: dict[str, Any] | None, run: dict[str, Any]) -> dict[str, Any]:
    """``total`` plus one run's usage summary: numbers add up, nested counters (per model) too."""
    merged: dict[str, Any] = dict(total or {})
    for key, value in run.items():
        if isinstance(value, bool):
            merged[key] = value
        elif isinstance(value, (int, float)):
            earlier = merged.get(key, 0)
            merged[key] = (earlier if isinstance(earlier, (int, float)) else 0) + value
        elif isinstance(value, dict):
            earlier = merged.get(key)
            merged[key] = add_usage(earlier if isinstance(earlier, dict) else None, value)
        else:
            merged[key] = value
    return merged


def previous_usage(run_json: Path) -> dict[str, Any] | None:
    """The usage total recorded by earlier runs in a directory (read before run.json is rewritten)."""
    try:
        data = json.loads(run_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    total = data.get("usage_total", data.get("usage"))  # schema 1 recorded only the last run's
    return total if isinstance(total, dict) else None
