"""``jurist sweep --adaptive``: every checkpoint's tasks in rounds of one seeded question order, until every
checkpoint x task is answered (``--target-ci W``) or decided against the reference (``--decide-vs``).

Each round is the ordinary sweep on a longer shuffled prefix of each task (``limits`` with the
``shuffled`` selection), so its run directories resume and nothing is asked twice; after a round each
run directory is looked at as :func:`jurist.decide.adaptive.look` looks at one run. The whole sweep stops
at the first round where every checkpoint x task says stop (a checkpoint does not stop alone: sweep.json
keeps every checkpoint of the plan). ``SWEEP_DIR/adaptive.json`` records each run's result and the judge
calls used against the full tasks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jurist.decide.adaptive import SCHEMA, AdaptiveSettings, judge_calls, look
from jurist.errors import JuristError
from jurist.sweep import SweepPlan


def _drawn(run_dir: Path, seed: int) -> tuple[list[str], int] | None:
    """The run's questions in their draw order and the task's size (None before its first round)."""
    path = run_dir / "run.json"
    if not path.is_file():
        return None
    fields = json.loads(path.read_text(encoding="utf-8"))
    selection = (fields.get("bench_info") or {}).get("selection")
    if not isinstance(selection, dict):  # every question is in: the order is the draw's all the same
        return None
    uids = [str(u) for u in selection.get("uids") or []]
    uids.sort(key=lambda uid: hashlib.sha256(f"{seed}:{uid}".encode()).digest())
    return uids, int(selection["of"])


def run_adaptive_sweep(plan: SweepPlan, settings: AdaptiveSettings, sweep: Callable[[SweepPlan], Any]) -> Any:
    """Rounds of ``sweep(plan)`` (run_sweep with the command's arguments) until every run says stop."""
    from jurist.store.jsonl import write_json_atomic

    settings.check_rule()
    if plan.limits:
        raise JuristError("--adaptive chooses how many questions to judge: give no --limit")
    size, result = 0, None
    looks: dict[str, dict[str, Any]] = {}
    while True:
        size += settings.round_size
        limits = dict.fromkeys(plan.tasks, size)
        result = sweep(
            dataclasses.replace(plan, limits=limits, limit_sample="shuffled", limit_seed=settings.seed)
        )
        if result.exit_code != 0:
            break
        looks, every_question = {}, True
        for checkpoint in plan.checkpoints:
            for task in plan.tasks:
                run_dir = plan.run_dir(checkpoint, task)
                drawn = _drawn(run_dir, settings.seed)
                if drawn is None:
                    continue
                every_question = every_question and len(drawn[0]) >= drawn[1]
                rule = settings
                if settings.decide_vs is not None and (settings.decide_vs / task / "run.json").is_file():
                    rule = dataclasses.replace(settings, decide_vs=settings.decide_vs / task)
                seen = look(run_dir, drawn[0], rule, drawn[1])
                looks[f"{checkpoint.name}/{task}"] = seen | {"n": len(drawn[0])}
        if every_question or (looks and all(seen["stop"] for seen in looks.values())):
            break
    calls = sum(judge_calls(plan.run_dir(c, t)) for c in plan.checkpoints for t in plan.tasks)
    document = {"schema": SCHEMA, "rule": settings.record(), "questions_per_task": size, "runs": looks,
                "judge_calls": {"used": calls}}  # fmt: skip
    write_json_atomic(plan.out / "adaptive.json", json.loads(json.dumps(document)))
    return result
