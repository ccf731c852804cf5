"""The shards ``jurist merge`` is given, read and checked before anything is written: each is a shard
directory (``shard.json`` of the known schema), and all ran the same plan (the first differing field is
named)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.run.shards import SHARD_FILE, SHARD_SCHEMA

SWEEP_SHARD_SCHEMA = "jurist.sweep_shard/1"  # jurist sweep --shard (jurist.sweep.shards writes it)
KIND_OF_SCHEMA = {SHARD_SCHEMA: "run", SWEEP_SHARD_SCHEMA: "sweep"}


@dataclass(frozen=True)
class ShardDir:
    """One shard's directory as the merge reads it: its shard.json and run.json."""

    root: Path
    index: int
    count: int
    fingerprint: str
    plan: Mapping[str, Any]
    owners: Mapping[str, int]
    run_json: Mapping[str, Any]
    kind: str = "run"
    """``run`` (``jurist run --shard``) or ``sweep`` (``jurist sweep --shard``)."""

    def summary(self) -> dict[str, Any]:
        """What the merged run.json says of this shard (``merged_from``)."""
        return {
            "dir": str(self.root),
            "index": self.index,
            "count": self.count,
            "run_id": self.run_json.get("run_id"),
            "status": self.run_json.get("status"),
            "fingerprint": self.fingerprint,
        }


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JuristError(f"{path}: not readable as JSON ({exc})") from None


def read_shard(path: Path) -> ShardDir:
    """The shard at ``path``, or a one-line refusal naming what is wrong with it."""
    if not path.is_dir():
        raise JuristError(f"{path}: not a directory (give the shards' run directories)")
    shard_file = path / SHARD_FILE
    if not shard_file.is_file():
        raise JuristError(f"{path}: not a shard (no {SHARD_FILE}; a shard is a run made with --shard I/N)")
    document = _read_json(shard_file)
    if not isinstance(document, dict) or document.get("schema") not in KIND_OF_SCHEMA:
        raise JuristError(f"{shard_file}: field 'schema' is not one of {', '.join(KIND_OF_SCHEMA)}")
    kinds = (("index", int), ("count", int), ("fingerprint", str), ("plan", dict), ("owners", dict))
    for name, kind in kinds:
        if not isinstance(document.get(name), kind):
            raise JuristError(f"{shard_file}: field {name!r} is missing or not {kind.__name__}")
    run_json = _read_json(path / "run.json") if (path / "run.json").is_file() else {}
    return ShardDir(
        path,
        document["index"],
        document["count"],
        document["fingerprint"],
        document["plan"],
        {str(uid): int(owner) for uid, owner in document["owners"].items()},
        run_json if isinstance(run_json, dict) else {},
        KIND_OF_SCHEMA[document["schema"]],
    )


def read_shards(paths: Sequence[Path]) -> list[ShardDir]:
    """The shards given, in shard order (a shard given twice under two directories is kept twice: the
    merge keeps each item once)."""
    if not paths:
        raise JuristError("jurist merge: give the shards' run directories")
    seen: set[Path] = set()
    shards = []
    for path in paths:
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        shards.append(read_shard(path))
    return sorted(shards, key=lambda shard: (shard.index, str(shard.root)))


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The dotted name of the first field where ``a`` and ``b`` differ (None when equal)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in [*a, *(k for k in b if k not in a)]:  # the plan's own order: the main facts first
            found = first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
        return None
    return None if a == b else (where or "(the plan)")


def _value_at(facts: Mapping[str, Any], dotted: str) -> str:
    value: Any = facts
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def check_same_plan(shards: Sequence[ShardDir]) -> None:
    """Every shard ran the first one's plan with the same shard count; else one line naming the field."""
    first = shards[0]
    for shard in shards[1:]:
        if shard.kind != first.kind:
            raise JuristError(f"{shard.root} is a {shard.kind} shard, {first.root} a {first.kind} shard")
        if shard.count != first.count:
            raise JuristError(
                f"{shard.root} is shard {shard.index} of {shard.count}, {first.root} of {first.count}: "
                "shards of one run share their count"
            )
        if shard.fingerprint == first.fingerprint:
            continue
        field = first_difference(first.plan, shard.plan) or "owners"
        raise JuristError(
            f"{shard.root} and {first.root} ran different plans: {field} is "
            f"{_value_at(shard.plan, field)} there and {_value_at(first.plan, field)} here"
        )


__all__ = ["ShardDir", "check_same_plan", "first_difference", "read_shard", "read_shards"]
