"""``jurist run --adaptive``: the task's questions in a seeded random order, in rounds, until the answer is
known — its interval narrower than ``--target-ci W``, or (``--decide-vs RUN [--delta D]``) the paired
comparison with a reference run decided — with an interval that stays valid however often it is looked at.

Each round is an ordinary run of the same directory on a longer prefix of one seeded order
(``--limit K --sample shuffled``), so nothing asked before is asked again and a later run without
``--adaptive`` completes the task from where it stopped. After each round the run's per-question
outcomes (:func:`jurist.families.read_outcomes`) feed an anytime-valid confidence sequence
(:mod:`jurist.ratings.confseq`, Waudby-Smith and Ramdas' empirical Bernstein, without replacement from the
task's N questions), per (judge, model) or for the paired difference with the reference. ``adaptive.json``
records the n used, the interval and what it guarantees, and the judge calls used against the full task.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.run import RunConfig, RunResult

SCHEMA = "jurist.adaptive/1"


@dataclass(frozen=True)
class AdaptiveSettings:
    """When to stop: the interval's width (task units), a decision against a reference run, or (a sweep's
    ``--decide-vs best``) a decision against the best checkpoint so far."""

    target_ci: float | None = None
    decide_vs: Path | None = None
    delta: float = 0.0
    level: float = 0.95
    round_size: int = 20
    seed: int = 0
    versus_best: bool = False

    def record(self) -> dict[str, Any]:
        """The rule as adaptive.json keeps it."""
        fields = dataclasses.asdict(self)
        best = fields.pop("versus_best")
        return fields | {"decide_vs": "best" if best else str(self.decide_vs) if self.decide_vs else None}

    def check(self) -> None:
        named_best = (
            self.decide_vs is not None and str(self.decide_vs) == "best" and not self.decide_vs.is_dir()
        )
        if self.versus_best or named_best:
            raise JuristError("--decide-vs best races the checkpoints of a sweep (jurist sweep --adaptive)")
        self.check_rule()
        if self.decide_vs is not None and not (self.decide_vs / "run.json").is_file():
            raise JuristError(f"--decide-vs: {self.decide_vs} is not a run directory (no run.json)")

    def check_rule(self) -> None:
        """One stopping rule, with sensible values (a sweep's --decide-vs may be a folder of task runs)."""
        if (self.target_ci is not None) + (self.decide_vs is not None) + self.versus_best != 1:
            raise JuristError("--adaptive needs one stopping rule: --target-ci W or --decide-vs RUN")
        if self.target_ci is not None and self.target_ci <= 0:
            raise JuristError(f"--target-ci: {self.target_ci} is not a positive width")
        if self.decide_vs is not None and not self.decide_vs.is_dir():
            raise JuristError(f"--decide-vs: {self.decide_vs} is not a run directory")
        if self.round_size < 1:
            raise JuristError(f"--round: {self.round_size} is not a positive number of questions")


def _bounded(value: float) -> float:
    """A question's score on the confidence sequence's [0, 1] scale (HealthBench's may leave it)."""
    return min(1.0, max(0.0, value))


def judge_calls(run_dir: Path) -> int:
    """Judge requests the directory has sent (usage.jsonl, phase judge), every run of it together."""
    from jurist.store import iter_jsonl

    path = run_dir / "usage.jsonl"
    if not path.is_file():
        return 0
    return sum(int(r.get("requests", 0)) for r in iter_jsonl(path, repair=False) if r.get("phase") == "judge")


def look(run_dir: Path, order: list[str], settings: AdaptiveSettings, population: int) -> dict[str, Any]:
    """One look at the run: every (judge, model)'s sequence interval and whether the rule says stop."""
    from jurist.families import read_outcomes
    from jurist.ratings import confidence_sequence, difference_sequence

    outcomes = read_outcomes(run_dir)
    alpha = 1.0 - settings.level
    reference = read_outcomes(settings.decide_vs) if settings.decide_vs is not None else None
    entries: list[dict[str, Any]] = []
    for (judge, model), cells in sorted(outcomes.cells.items()):
        if model not in outcomes.models:
            continue
        drawn = [uid for uid in order if uid in cells.sums]
        if not drawn:
            continue
        entry: dict[str, Any] = {"judge": judge or None, "model": model, "n": len(drawn)}
        if reference is None:
            cs = confidence_sequence(
                [_bounded(cells.mean(u)) for u in drawn], alpha=alpha, population=population
            )
            width = outcomes.scale * (cs.high - cs.low)
            assert settings.target_ci is not None
            entry |= {
                "estimate": outcomes.scale * cs.estimate,
                "interval": [outcomes.scale * cs.low, outcomes.scale * cs.high],
                "width": width,
                "stop": width <= settings.target_ci,
            }
        else:
            ref_cells = [c for (j, m), c in reference.cells.items() if j == judge and m in reference.models]
            if len(ref_cells) != 1:
                raise JuristError(f"--decide-vs: {settings.decide_vs} has no one model judged by {judge!r}")
            shared = [u for u in drawn if u in ref_cells[0].sums]
            if not shared:
                continue
            cs = difference_sequence(
                [_bounded(ref_cells[0].mean(u)) for u in shared],
                [_bounded(cells.mean(u)) for u in shared],
                alpha=alpha,
                population=population,
            )
            low, high = outcomes.scale * cs.low, outcomes.scale * cs.high
            decision = "better" if low > settings.delta else "worse" if high < -settings.delta else None
            if decision is None and -settings.delta <= low and high <= settings.delta and settings.delta > 0:
                decision = "within delta"
            entry |= {
                "n": len(shared),
                "difference": outcomes.scale * cs.estimate,
                "interval": [low, high],
                "decision": decision or "undecided",
                "stop": decision is not None,
            }
        entries.append(entry)
    return {"entries": entries, "stop": bool(entries) and all(e["stop"] for e in entries)}


def run_adaptive(config: RunConfig, settings: AdaptiveSettings) -> RunResult:
    """Rounds of the run on growing prefixes of one seeded order, until the rule says stop (or every
    question is in); ``adaptive.json`` written, the summary printed."""
    from rich.console import Console

    from jurist.benchmarks import shuffled_order
    from jurist.run import resolve, run_pipeline
    from jurist.store import write_json_atomic

    settings.check()
    if config.limit is not None:
        raise JuristError("--adaptive chooses how many questions to judge: give no --limit")
    questions = resolve(config).bench.questions
    population = len(questions)
    order = [q.uid for q in shuffled_order(questions, settings.seed)]
    console = Console(stderr=True, highlight=False)
    size, result, seen = 0, None, {}
    while size < population:
        size = min(population, size + settings.round_size)
        round_config = dataclasses.replace(
            config, limit=size, limit_sample="shuffled", limit_seed=settings.seed
        )
        result = run_pipeline(round_config)
        if result.exit_code != 0:
            break
        seen = look(result.run_dir, order[:size], settings, population)
        console.print(
            f"adaptive: {size} of {population} questions: "
            + "; ".join(_entry_text(e) for e in seen["entries"]),
            markup=False,
            soft_wrap=True,
        )
        if seen["stop"]:
            break
    assert result is not None
    calls = judge_calls(result.run_dir)
    full = calls * population / size if size else 0.0
    stopped = "rule" if seen.get("stop") else "every question judged" if size >= population else "run failed"
    document = {
        "schema": SCHEMA,
        "rule": settings.record(),
        "n": size,
        "population": population,
        "stopped": stopped,
        "guarantee": f"each interval holds with probability >= {settings.level:.0%} at every look at once "
        "(anytime-valid; questions drawn without replacement in a seeded order)",
        "results": seen.get("entries", []),
        "judge_calls": {"used": calls, "full_task_estimate": round(full), "saved": round(full - calls)},
    }
    write_json_atomic(result.run_dir / "adaptive.json", json.loads(json.dumps(document)))
    saved = f"judge calls {calls} of about {round(full)} for the full task (saved {round(full - calls)})"
    console.print(f"adaptive: stopped at n={size} of {population} ({stopped}); {saved}", markup=False)
    return result


def _entry_text(entry: dict[str, Any]) -> str:
    low, high = entry["interval"]
    name = entry["model"] + (f" [{entry['judge']}]" if entry.get("judge") else "")
    if "decision" in entry:
        return f"{name} {entry['difference']:+.2f} [{low:+.2f}, {high:+.2f}] {entry['decision']}"
    return f"{name} {entry['estimate']:.2f} [{low:.2f}, {high:.2f}] (width {entry['width']:.2f})"
