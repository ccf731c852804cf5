"""``jurist compare``: is b better than a, task by task, on the questions both answered?

Per task (and judge) the family's paired statistic (:mod:`jurist.ratings.paired`): the difference of the
headline scores with its paired, question-clustered bootstrap interval; the p-value of no difference
(McNemar's exact test for rule-checked runs, whose outcomes are pass/fail pairs; the bootstrap's normal
p-value otherwise); Holm's correction across the tasks of one pair of sides; the minimum detectable
difference at this n. ``decision`` says how b compares with a: ``better`` when the Holm-adjusted p is
below alpha = 1 - level and the whole interval lies above ``delta``, ``worse`` when it lies below
``-delta``, else ``undecided``. Runs that are not the same experiment are refused (:func:`check_same`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.decide.sides import Side, TaskRun
from jurist.errors import JuristError
from jurist.families import Cells, RunOutcomes, read_outcomes

REPLACEMENT_SCHEMA = "jurist.judge_replacement/1"


@dataclass(frozen=True)
class CompareSettings:
    """How differences are tested: interval level, the smallest difference that counts, the bootstrap."""

    level: float = 0.95
    delta: float = 0.0
    n_bootstrap: int = 2000
    seed: int = 0
    replacement: Path | None = None


def model_cells(outcomes: RunOutcomes, run: TaskRun, judge: str) -> tuple[str, Cells]:
    """The compared model of a run and its cells under ``judge`` (the run's only model unless named)."""
    models = sorted({model for j, model in outcomes.cells if j == judge})
    if run.model is not None:
        if run.model not in models:
            raise JuristError(
                f"{run.root}: model {run.model!r} has no outcomes here (has: {', '.join(models)})"
            )
        return run.model, outcomes.cells[(judge, run.model)]
    candidates = [m for m in outcomes.models if m in models] or models
    if len(candidates) != 1:
        raise JuristError(
            f"{run.root}: {len(candidates)} models have outcomes ({', '.join(candidates) or 'none'}): "
            f"name one as {run.root}#MODEL"
        )
    return candidates[0], outcomes.cells[(judge, candidates[0])]


def _differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))


def _replacement_note(path: Path | None, judges_a: list[str], judges_b: list[str]) -> str:
    """What a judge replacement map passed with ``--replacement`` says about these two judges."""
    if path is None:
        return ""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JuristError(f"--replacement: {path}: not a readable JSON file ({exc})") from None
    if not isinstance(document, dict) or document.get("schema") != REPLACEMENT_SCHEMA:
        raise JuristError(f"--replacement: {path}: field 'schema' is not {REPLACEMENT_SCHEMA!r}")
    found = document.get("candidate")
    candidate: dict[str, Any] = found if isinstance(found, dict) else {}
    named = {document.get("retired_judge"), candidate.get("judge"), candidate.get("model")} - {None}
    if all(judge in named for judge in judges_a + judges_b):  # the retired judge and its stand-in
        return (
            f"; a judge replacement map exists ({path}): score both runs with one judge through it "
            "(jurist judges replace), then compare"
        )
    return f"; the replacement map {path} does not name both judges"


def check_same(a: RunOutcomes, b: RunOutcomes, replacement: Path | None) -> None:
    """Refuse, in one line, two runs whose difference would not mean anything: another benchmark (or
    version of its data), another judge (model, sampling, prompt or protocol) or other settings
    (baseline, rule suite, family)."""
    where = f"{a.root} vs {b.root}"
    ia, ib = a.identity, b.identity
    if ia["benchmark"] != ib["benchmark"]:
        fields = _differing(ia["benchmark"]["info"], ib["benchmark"]["info"]) or ["name"]
        raise JuristError(
            f"{where}: not comparable: the benchmark differs ({', '.join(fields)}); "
            "a paired difference needs the same questions and data version"
        )
    if ia["judge"] != ib["judge"]:
        judges_a, judges_b = list(ia["judge"]["judges"]), list(ib["judge"]["judges"])
        raise JuristError(
            f"{where}: not comparable: the judge differs ({', '.join(_differing(ia['judge'], ib['judge']))}: "
            f"{', '.join(judges_a) or 'none'} vs {', '.join(judges_b) or 'none'})"
            + _replacement_note(replacement, judges_a, judges_b)
        )
    if ia["settings"] != ib["settings"]:
        differing = ", ".join(_differing(ia["settings"], ib["settings"]))
        raise JuristError(f"{where}: not comparable: the settings differ ({differing})")


def compare_task(
    a: TaskRun, b: TaskRun, settings: CompareSettings, *, name_a: str, name_b: str
) -> list[dict[str, Any]]:
    """One row per judge of the two runs of one task (before Holm's correction and the decision)."""
    from jurist.ratings import mcnemar_exact, paired_bootstrap

    outcomes_a, outcomes_b = read_outcomes(a.root), read_outcomes(b.root)
    check_same(outcomes_a, outcomes_b, settings.replacement)
    rows = []
    for judge in sorted(set(outcomes_a.judges()) & set(outcomes_b.judges())):
        model_a, cells_a = model_cells(outcomes_a, a, judge)
        model_b, cells_b = model_cells(outcomes_b, b, judge)
        shared = sorted(set(cells_a.sums) & set(cells_b.sums))
        result = paired_bootstrap(
            [cells_a.sums[u] for u in shared],
            [cells_a.counts[u] for u in shared],
            [cells_b.sums[u] for u in shared],
            [cells_b.counts[u] for u in shared],
            scale=outcomes_a.scale,
            n_bootstrap=settings.n_bootstrap,
            seed=settings.seed,
            ci_level=settings.level,
        )
        row: dict[str, Any] = {
            "task": a.task,
            "judge": judge or None,
            "a": name_a,
            "b": name_b,
            "model_a": model_a,
            "model_b": model_b,
            "family": outcomes_a.family,
            "units": outcomes_a.units,
            "n": result.n,
            "n_a": len(cells_a.sums),
            "n_b": len(cells_b.sums),
            "score_a": _score(cells_a, shared, outcomes_a.scale),
            "score_b": _score(cells_b, shared, outcomes_b.scale),
            "difference": {"estimate": result.estimate, "ci": [result.ci_low, result.ci_high]},
            "level": settings.level,
            "test": "paired bootstrap",
            "p": result.p,
            "p_bootstrap": result.p,
            "mdd": result.mdd,
        }
        if outcomes_a.exact_test:
            pairs = sorted(set(cells_a.passed) & set(cells_b.passed))
            exact = mcnemar_exact([cells_a.passed[k] for k in pairs], [cells_b.passed[k] for k in pairs])
            row |= {"test": "McNemar exact", "p": exact.p, "discordant": [exact.a_only, exact.b_only]}
        rows.append(row)
    if not rows:
        raise JuristError(f"{a.root} vs {b.root}: no judge scored both runs")
    return rows


def _score(cells: Cells, uids: list[str], scale: float) -> float | None:
    count = sum(cells.counts[u] for u in uids)
    return scale * sum(cells.sums[u] for u in uids) / count if count else None


def decide(rows: list[dict[str, Any]], level: float, delta: float) -> None:
    """Holm-adjust the p-values of ``rows`` (one pair of sides, every task) and add the decisions."""
    from jurist.ratings import holm

    alpha = 1.0 - level
    for row, adjusted in zip(rows, holm([float(r["p"]) for r in rows]), strict=True):
        low, high = row["difference"]["ci"]
        significant = adjusted == adjusted and adjusted < alpha
        row["p_holm"] = adjusted
        row["delta"] = delta
        if significant and low > delta:
            row["decision"] = "better"
        elif significant and high < -delta:
            row["decision"] = "worse"
        else:
            row["decision"] = "undecided"


def compare_sides(
    sides: list[Side], settings: CompareSettings, against: str = "first"
) -> list[dict[str, Any]]:
    """Every later side against the first (``against="first"``) or against the one before it
    (``"previous"``), on the tasks both have; Holm's correction within each pair."""
    if len(sides) < 2:
        raise JuristError("jurist compare needs at least two runs (or a sweep of two checkpoints)")
    rows: list[dict[str, Any]] = []
    for k in range(1, len(sides)):
        a = sides[0] if against == "first" else sides[k - 1]
        b = sides[k]
        tasks = [task for task in a.tasks if task in b.tasks]
        if not tasks:
            raise JuristError(f"{a.name} vs {b.name}: no task in common")
        pair: list[dict[str, Any]] = []
        for task in tasks:
            pair.extend(compare_task(a.tasks[task], b.tasks[task], settings, name_a=a.name, name_b=b.name))
        decide(pair, settings.level, settings.delta)
        rows.extend(pair)
    return rows
