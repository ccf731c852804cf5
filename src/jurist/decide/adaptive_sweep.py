"""``jurist sweep --adaptive``: every checkpoint x task in rounds of one seeded question order, each stopping
on its own as soon as it is answered: its interval narrower than ``--target-ci W``, its paired difference
with a reference decided (``--decide-vs DIR``), or (``--decide-vs best``, the default without a rule) its
paired difference with the best checkpoint so far decided (:mod:`jurist.decide.race`).

Each round is the ordinary sweep with each checkpoint x task limited to its own shuffled prefix
(``SweepPlan.run_limits``): a run still going gets ``--round`` more questions, a stopped one keeps its
limit, so its generation and judging resume with nothing to send (no server starts for a checkpoint all of
whose tasks stopped) and sweep.json keeps every checkpoint of the plan with its rows. After a round each
run directory still going is looked at as :func:`jurist.decide.adaptive.look` looks at one run.
``SWEEP_DIR/adaptive.json`` records each run's result, when and why it stopped, and the judge calls used
and saved per run, per checkpoint and in all, against the full tasks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.decide.adaptive import SCHEMA, AdaptiveSettings, judge_calls, look
from jurist.errors import JuristError
from jurist.sweep import SweepPlan

BEST = "best"
"""``--decide-vs best``: each checkpoint against the best checkpoint so far, task by task."""


@dataclass
class SweepRun:
    """One checkpoint x task of an adaptive sweep: its limit, the task's size once known, the draw order
    of the questions it has, why it stopped (None: still going) and its last look."""

    checkpoint: str
    task: str
    run_dir: Path
    limit: int = 0
    population: int | None = None
    order: list[str] = field(default_factory=list)
    stopped: str | None = None
    stopped_round: int | None = None
    seen: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.checkpoint}/{self.task}"

    def stop(self, why: str, round_number: int) -> None:
        if self.stopped is None:
            self.stopped, self.stopped_round = why, round_number


def sweep_settings(
    target_ci: float | None,
    decide_vs: str | None,
    delta: float,
    round_size: int,
    seed: int,
    level: float = 0.95,
) -> AdaptiveSettings:
    """The sweep's stopping rule from its options: ``--decide-vs best``, or neither ``--target-ci`` nor
    ``--decide-vs`` (a sweep's question is which checkpoint to keep), races the checkpoints."""
    if decide_vs == BEST or (decide_vs is None and target_ci is None):  # with --target-ci: refused
        return AdaptiveSettings(target_ci, None, delta, level, round_size, seed, versus_best=True)
    return AdaptiveSettings(
        target_ci, Path(decide_vs) if decide_vs is not None else None, delta, level, round_size, seed
    )


def _order(run_dir: Path, seed: int) -> tuple[list[str], int] | None:
    """The run's questions in their draw order and the task's size (None before its first round)."""
    path = run_dir / "run.json"
    if not path.is_file():
        return None
    fields = json.loads(path.read_text(encoding="utf-8"))
    selection = (fields.get("bench_info") or {}).get("selection")
    if isinstance(selection, dict):
        uids, population = [str(u) for u in selection.get("uids") or []], int(selection["of"])
    else:  # every question is in: the outcomes hold them all
        from jurist.families import read_outcomes

        outcomes = read_outcomes(run_dir)
        uids = sorted({uid for cells in outcomes.cells.values() for uid in cells.sums})
        population = int(fields.get("n_questions") or len(uids))
    uids.sort(key=lambda uid: hashlib.sha256(f"{seed}:{uid}".encode()).digest())
    return uids, population


def _round_plan(plan: SweepPlan, runs: list[SweepRun], settings: AdaptiveSettings) -> SweepPlan:
    """The sweep of one round: each run on its own prefix, each task's limit the largest of its runs'."""
    run_limits: dict[str, dict[str, int]] = {}
    for run in runs:
        run_limits.setdefault(run.checkpoint, {})[run.task] = run.limit
    limits = {task: max((run.limit for run in runs if run.task == task), default=1) for task in plan.tasks}
    return dataclasses.replace(
        plan, limits=limits, run_limits=run_limits, limit_sample="shuffled", limit_seed=settings.seed
    )


def _look_alone(run: SweepRun, settings: AdaptiveSettings, round_number: int) -> None:
    """A run against its own rule: the interval's width, or the reference (``DIR/<task>`` or ``DIR``)."""
    assert run.population is not None
    rule = settings
    if settings.decide_vs is not None and (settings.decide_vs / run.task / "run.json").is_file():
        rule = dataclasses.replace(settings, decide_vs=settings.decide_vs / run.task)
    run.seen = look(run.run_dir, run.order, rule, run.population)
    if run.seen["stop"]:
        run.stop("rule", round_number)


def _calls(run: SweepRun) -> dict[str, int]:
    """The judge calls the run used, the full task's estimate (used x N / n) and those saved."""
    used = judge_calls(run.run_dir)
    n = len(run.order)
    full = round(used * run.population / n) if n and run.population else used
    return {"used": used, "full_task_estimate": full, "saved": full - used}


def _summed(parts: list[dict[str, int]]) -> dict[str, int]:
    return {key: sum(part[key] for part in parts) for key in ("used", "full_task_estimate", "saved")}


def _document(runs: list[SweepRun], settings: AdaptiveSettings, rounds: int) -> dict[str, Any]:
    from jurist.decide.race import comparison_level

    calls = {run.key: _calls(run) for run in runs}
    checkpoints = list(dict.fromkeys(run.checkpoint for run in runs))
    rule = settings.record()
    if settings.versus_best:
        rule["level_per_comparison"] = comparison_level(settings.level, len(checkpoints))
    return {
        "schema": SCHEMA,
        "rule": rule,
        "rounds": rounds,
        "questions_per_task": max((run.limit for run in runs), default=0),
        "runs": {
            run.key: run.seen
            | {
                "n": len(run.order),
                "population": run.population,
                "stopped": run.stopped or "sweep failed",
                "stopped_round": run.stopped_round,
                "judge_calls": calls[run.key],
            }
            for run in runs
        },  # fmt: skip
        "checkpoints": {
            name: {"judge_calls": _summed([calls[run.key] for run in runs if run.checkpoint == name])}
            for name in checkpoints
        },
        "judge_calls": _summed(list(calls.values())),
    }


def run_adaptive_sweep(plan: SweepPlan, settings: AdaptiveSettings, sweep: Callable[[SweepPlan], Any]) -> Any:
    """Rounds of ``sweep(plan)`` (run_sweep with the command's arguments), each checkpoint x task going on
    until its rule says stop or every question of the task is in; adaptive.json written."""
    from rich.console import Console

    from jurist.decide.race import look_against_best
    from jurist.store import write_json_atomic

    settings.check_rule()
    if plan.limits:
        raise JuristError("--adaptive chooses how many questions to judge: give no --limit")
    console = Console(stderr=True, highlight=False)
    runs = [SweepRun(c.name, t, plan.run_dir(c, t)) for c in plan.checkpoints for t in plan.tasks]
    if not runs:  # no checkpoint: the sweep says so as it does without --adaptive
        return sweep(plan)
    rounds, result = 0, None
    while any(run.stopped is None for run in runs):
        rounds += 1
        going = [run for run in runs if run.stopped is None]
        for run in going:
            longer = run.limit + settings.round_size
            run.limit = longer if run.population is None else min(run.population, longer)
        result = sweep(_round_plan(plan, runs, settings))
        if result.exit_code != 0:
            break
        for run in going:
            drawn = _order(run.run_dir, settings.seed)
            if drawn is None:  # the round left no run directory: nothing to look at, nor to go on with
                run.stop("no run directory", rounds)
            else:
                run.order, run.population = drawn
        if settings.versus_best:
            look_against_best(going, runs, settings, rounds, len(plan.checkpoints))
        else:
            for run in going:
                if run.population is not None:
                    _look_alone(run, settings, rounds)
        for run in going:  # by the limit, not the outcomes: a question left invalid is not asked again
            if run.population is not None and run.limit >= run.population:
                run.stop("every question judged", rounds)
        ended = [f"{run.key} ({run.stopped})" for run in going if run.stopped is not None]
        console.print(
            f"adaptive round {rounds}: {len(going)} run(s) went on; stopped: {', '.join(ended) or 'none'}",
            markup=False,
            soft_wrap=True,
        )
    document = _document(runs, settings, rounds)
    write_json_atomic(plan.out / "adaptive.json", json.loads(json.dumps(document)))
    total = document["judge_calls"]
    console.print(
        f"adaptive: judge calls {total['used']} of about {total['full_task_estimate']} for the full tasks "
        f"(saved {total['saved']})",
        markup=False,
    )
    return result
