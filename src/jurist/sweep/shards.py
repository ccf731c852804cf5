"""``jurist sweep --shard I/N``: a sweep's checkpoints dealt over N processes (Slurm array tasks,
Kubernetes pods), each a complete sweep directory of its own, joined by ``jurist merge``.

The unit is a checkpoint with all its tasks: a checkpoint's server starts once, on the node that owns it.
Every checkpoint costs the same (the same tasks, questions and samples), so dealing them in step order,
one to each shard in turn, balances cost as well as count, and depends on nothing but the checkpoints
found and N.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.run import SHARD_FILE, ShardChoice, fingerprint
from jurist.store import RunDirLock, write_json_atomic
from jurist.sweep.plan import MODELS_FILE, SweepPlan
from jurist.sweep.results import SWEEP_JSON, csv_text

SWEEP_SHARD_SCHEMA = "jurist.sweep_shard/1"  # = jurist.run.merge_checks.SWEEP_SHARD_SCHEMA, which reads it


def shard_sweep(plan: SweepPlan, choice: ShardChoice) -> SweepPlan:
    """``plan`` cut to ``choice``'s checkpoints, writing into ``OUT/shards/<I>-of-<N>``."""
    owners = {c.name: k % choice.count for k, c in enumerate(sorted(plan.checkpoints, key=lambda c: c.step))}
    kept = tuple(c for c in plan.checkpoints if owners[c.name] == choice.index)
    if not kept:
        raise JuristError(
            f"--shard {choice.label()}: the sweep has {len(plan.checkpoints)} checkpoint(s), none for this "
            f"shard; use at most {len(plan.checkpoints)} shards"
        )
    out = plan.out / "shards" / f"{choice.index}-of-{choice.count}"
    shard = {
        "index": choice.index, "count": choice.count, "source": choice.source, "owners": owners,
        "facts": sweep_facts(plan),  # of the whole sweep, every checkpoint included
    }  # fmt: skip
    return dataclasses.replace(plan, checkpoints=kept, out=out, shard=shard)


def sweep_facts(plan: SweepPlan) -> dict[str, Any]:
    """What every shard of one sweep shares (not where it runs: GPUs, slots, concurrency, the cache)."""
    settings = plan.settings.public_dict() if plan.settings is not None else None
    if settings is not None:
        settings.pop("endpoints", None)
    return {
        "name": plan.name,
        "checkpoints": sorted([c.name, c.step, str(c.path)] for c in plan.checkpoints),
        "tasks": list(plan.tasks),
        "task_options": plan.task_options,
        "samples": plan.samples,
        "limits": plan.limits,
        "judges": list(plan.judges),
        "task_judges": {task: list(judges) for task, judges in plan.task_judges.items()},
        "baselines": plan.baselines,
        "settings": settings,
        "serve_kind": plan.serve_kind,
        "bootstrap": plan.n_bootstrap,
        "seed": plan.seed,
    }


def write_sweep_shard(plan: SweepPlan) -> str:
    """``OUT/shards/<I>-of-<N>/shard.json``; returns the sweep's first line."""
    assert plan.shard is not None
    facts = plan.shard["facts"]
    plan.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        plan.out / SHARD_FILE,
        {"schema": SWEEP_SHARD_SCHEMA, "index": plan.shard["index"], "count": plan.shard["count"],
         "source": plan.shard["source"], "fingerprint": fingerprint(facts), "plan": facts,
         "owners": plan.shard["owners"]},
    )  # fmt: skip
    where = "" if plan.shard["source"] == "--shard" else f" ({plan.shard['source']})"
    return (
        f"shard {plan.shard['index']}/{plan.shard['count']}{where}: {len(plan.checkpoints)} of "
        f"{len(plan.shard['owners'])} checkpoints -> {plan.out} (join the shards with jurist merge)"
    )


def _sweep_document(root: Path) -> dict[str, Any]:
    path = root / SWEEP_JSON
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _summed(values: Sequence[Any]) -> Any:
    """Ledgers added up field by field (numbers summed, mappings merged, anything else the first's)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return sum(present)
    if present and all(isinstance(v, Mapping) for v in present):
        keys = list(dict.fromkeys(k for v in present for k in v))
        return {k: _summed([v.get(k) for v in present]) for k in keys}
    return present[0] if present else None


def merge_sweeps(roots: Sequence[Path], owners: Mapping[str, int], out: Path) -> dict[int, list[str]]:
    """The shards' checkpoint directories copied into ``out`` (each from its owner), one sweep.json and
    sweep.csv; returns, per owning shard, the checkpoints not complete in any shard given."""
    documents = {root: _sweep_document(root) for root in roots}
    lock = RunDirLock(out)
    lock.acquire()
    try:
        states: dict[str, tuple[Path, dict[str, Any]]] = {}
        for root, document in documents.items():
            for entry in document.get("checkpoints") or ():
                name = entry.get("name")
                if name in owners and (name not in states or entry.get("status") == "complete"):
                    states[name] = (root, entry)
        for name, (root, _) in states.items():
            if (root / name).is_dir():
                if (out / name).is_dir():
                    shutil.rmtree(out / name)
                shutil.copytree(root / name, out / name, ignore=shutil.ignore_patterns(".lock"))
        for root in roots:
            for extra in ("_baselines", MODELS_FILE):
                source, target = root / extra, out / extra
                if source.is_dir() and not target.exists():
                    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".lock"))
        first = next(iter(documents.values()), {})
        kept = {name: root for name, (root, _) in states.items()}
        entries = sorted(
            (entry for _, entry in states.values()), key=lambda e: (e.get("step") or 0, e["name"])
        )
        document = {
            **first,
            "created": min((d.get("created") or "" for d in documents.values()), default=""),
            "checkpoints": entries,
            "results": _rows(documents, kept, "results"),
            "judge_card": _rows(documents, kept, "judge_card"),
            "usage": _summed([d.get("usage") for d in documents.values()]),
            "merged_from": [str(root) for root in roots],
        }
        write_json_atomic(out / SWEEP_JSON, document)
        (out / "sweep.csv").write_text(csv_text(document["results"]), encoding="utf-8")
    finally:
        lock.release()
    missing: dict[int, list[str]] = {}
    for name, owner in owners.items():
        if name not in states or states[name][1].get("status") != "complete":
            missing.setdefault(owner, []).append(name)
    return missing


def _rows(documents: Mapping[Path, Mapping[str, Any]], kept: Mapping[str, Path], key: str) -> list[Any]:
    """A list of sweep.json taken from the shard each checkpoint's directory came from."""
    return [
        row
        for root, document in documents.items()
        for row in document.get(key) or ()
        if kept.get(row.get("checkpoint")) == root
    ]


__all__ = ["SWEEP_SHARD_SCHEMA", "merge_sweeps", "shard_sweep", "sweep_facts", "write_sweep_shard"]
