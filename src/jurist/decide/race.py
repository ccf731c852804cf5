"""``jurist sweep --adaptive --decide-vs best``: each checkpoint raced against the best checkpoint so far.

After each round, per task, the leader is the checkpoint still going with the highest score on the
questions drawn so far (every checkpoint still going has the same ones). Every other checkpoint still going
is compared with it as :func:`jurist.decide.adaptive.look` compares a run with a reference: the paired
difference's confidence sequence on the questions both have. A checkpoint stops once that difference is
decided ``worse`` (wholly below -delta) or, with delta > 0, ``within delta``; a ``better`` one goes on (it
leads the next round). The leader stops once no other checkpoint of the task is going. The leader may
change between rounds, so each comparison's level is split over the K - 1 checkpoints it could be made
with (Bonferroni): for any one checkpoint, the chance that it is stopped by a wrong decision is at most
alpha whichever checkpoints lead (docs/decisions.md says what that covers and what it does not).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from jurist.decide.adaptive import AdaptiveSettings, look

if TYPE_CHECKING:
    from jurist.decide.adaptive_sweep import SweepRun

STOPPING = frozenset({"worse", "within delta"})
"""The decisions against the leader that stop a checkpoint (it cannot be, or beat, the best by delta)."""


def comparison_level(level: float, checkpoints: int) -> float:
    """The level of each paired comparison: alpha = 1 - level split over the other K - 1 checkpoints."""
    return 1.0 - (1.0 - level) / max(1, checkpoints - 1)


def _estimate(run: SweepRun) -> float:
    """The run's score on its drawn questions (the mean of each question's own score; judges averaged)."""
    from jurist.families import read_outcomes

    outcomes = read_outcomes(run.run_dir)
    means = []
    for (_, model), cells in outcomes.cells.items():
        drawn = [uid for uid in run.order if uid in cells.sums]
        if model in outcomes.models and drawn:
            means.append(sum(cells.mean(uid) for uid in drawn) / len(drawn))
    return outcomes.scale * sum(means) / len(means) if means else float("-inf")


def look_against_best(
    going: list[SweepRun],
    runs: list[SweepRun],
    settings: AdaptiveSettings,
    round_number: int,
    checkpoints: int,
) -> None:
    """One look at every run still ``going``, task by task, against the task's leader; stopped runs
    are marked (``runs``: every run of the sweep, to know whether the leader is left alone)."""
    level = comparison_level(settings.level, checkpoints)
    for task in dict.fromkeys(run.task for run in going):
        racing = [run for run in going if run.task == task and run.population is not None]
        if not racing:
            continue
        scores = {run.key: _estimate(run) for run in racing}
        leader = max(racing, key=lambda run: scores[run.key])  # a tie: the first in the plan's order
        rule = dataclasses.replace(settings, versus_best=False, decide_vs=leader.run_dir, level=level)
        for run in racing:
            if run is leader:
                continue
            assert run.population is not None
            run.seen = look(run.run_dir, run.order, rule, run.population) | {"leader": leader.checkpoint}
            decisions = {entry["decision"] for entry in run.seen["entries"]}
            run.seen["stop"] = bool(decisions) and decisions <= STOPPING
            if run.seen["stop"]:
                run.stop("rule", round_number)
        alone = not [r for r in runs if r.task == task and r.stopped is None and r is not leader]
        leader.seen = {
            "entries": [],
            "leader": leader.checkpoint,
            "estimate": scores[leader.key],
            "stop": alone,
        }
        if alone:
            leader.stop("rule", round_number)
