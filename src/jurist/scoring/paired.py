"""A run's outcomes question by question, for paired comparisons and adaptive stopping: the same files the
door scores (battles, points), read through the same readers, grouped per (judge, model) and question.

Each family gives each question of each (judge, model) a sum and a count of entries whose ratio over all
questions is the task's headline score (before ``scale``): pairwise, P(model beats the baseline) per game
times its weight (the weighted win rate); rules, the prompt-level pass of each sampled answer (IFEval's
strict, IFBench's loose headline); rubric, each graded answer's score (HealthBench's Σ met / Σ possible,
WritingBench's criterion scores on 1-10, each an entry, kept as a tenth). A comparison also needs to
know the run is the same experiment: :attr:`RunOutcomes.identity` holds what must agree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.scoring.door import RecordedRun
from jurist.scoring.family import FamilyName, family_of_run

COMPARABLE_FAMILIES: tuple[FamilyName, ...] = ("pairwise", "rules", "rubric")
JUDGE_FIELDS = ("model", "api_type", "temperature", "top_p", "max_tokens", "seed", "reasoning_effort")
"""The parts of a judge's models-file entry that change its verdicts (not where it is served or how fast)."""


@dataclass
class Cells:
    """One (judge, model)'s entries per question: ``sums[uid]`` / ``counts[uid]``; ``passed`` holds the
    rules family's pass/fail per (uid, sample) answer (McNemar's pairs)."""

    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, float] = field(default_factory=dict)
    passed: dict[tuple[str, int], bool] = field(default_factory=dict)

    def add(self, uid: str, value: float, weight: float = 1.0) -> None:
        self.sums[uid] = self.sums.get(uid, 0.0) + value * weight
        self.counts[uid] = self.counts.get(uid, 0.0) + weight

    def mean(self, uid: str) -> float:
        """The question's own score (before scale), in [0, 1] for every family but HealthBench's."""
        return self.sums[uid] / self.counts[uid]


@dataclass(frozen=True)
class RunOutcomes:
    """A run's per-question outcomes: the task, its family, the units its differences are stated in
    (``scale`` x the ratio), what must agree for a comparison to mean anything, and the cells."""

    root: Path
    task: str
    family: FamilyName
    units: str
    scale: float
    identity: dict[str, Any]
    models: tuple[str, ...]
    cells: dict[tuple[str, str], Cells]
    n_questions: int
    samples: int

    def judges(self) -> list[str]:
        return sorted({judge for judge, _ in self.cells})


def _judge_identity(fields: Mapping[str, Any]) -> dict[str, Any]:
    specs = fields.get("model_specs") or {}
    judges = [str(j) for j in fields.get("judges") or []]
    return {
        "judges": {
            judge: {
                key: (specs.get(judge) or {}).get(key)
                for key in JUDGE_FIELDS
                if key in (specs.get(judge) or {})
            }
            for judge in judges
        },
        "protocols": fields.get("protocols") or {},
        "judge_prompt": fields.get("judge_prompt"),
        "judge_preset": fields.get("judge_preset"),
    }


def identity_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """What two runs must share, in three parts a refusal can name: the benchmark (its name and facts, the
    question selection aside: paired on the questions both answered), the judge, and the settings."""
    info = {key: value for key, value in (fields.get("bench_info") or {}).items() if key != "selection"}
    return {
        "benchmark": {"name": fields.get("bench_name") or fields.get("bench"), "info": info},
        "judge": _judge_identity(fields),
        "settings": {
            "score_family": fields.get("score_family"),
            "judge_kind": fields.get("judge_kind"),
            "rule_suite": fields.get("rule_suite"),
            "baselines": sorted(str(b) for b in fields.get("baselines") or []),
        },
    }


def read_outcomes(path: Path) -> RunOutcomes:
    """The per-question outcomes of the run directory at ``path`` (one of the comparable families)."""
    recorded = RecordedRun.read(path)
    if not recorded.has_run_json:
        raise JuristError(f"{path}: no run.json: not a jurist run directory")
    family = family_of_run(path, recorded.fields)
    if family not in COMPARABLE_FAMILIES:
        raise JuristError(
            f"{path}: a {family} run has no paired comparison (only {', '.join(COMPARABLE_FAMILIES)})"
        )
    fields = recorded.fields
    info = recorded.bench_info
    if family == "pairwise":
        cells, units, scale = _pairwise_cells(recorded), "win-rate points", 100.0
    elif family == "rules":
        cells, units, scale = _rules_cells(recorded), "accuracy points", 100.0
    else:
        suite = str(info.get("suite") or "")
        cells = _rubric_cells(recorded, suite)
        units, scale = ("score (1-10)", 10.0) if suite == "writingbench" else ("score points", 100.0)
    return RunOutcomes(
        root=path,
        task=recorded.name,
        family=family,
        units=units,
        scale=scale,
        identity=identity_of(fields),
        models=tuple(str(m) for m in fields.get("models") or []),
        cells=cells,
        n_questions=int(fields.get("n_questions") or 0),
        samples=int(fields.get("samples") or 1),
    )


def _pairwise_cells(run: RecordedRun) -> dict[tuple[str, str], Cells]:
    from jurist.scoring.battles import load_battles
    from jurist.scoring.common import OUTCOME
    from jurist.scoring.options import ScoreOptions
    from jurist.scoring.run import resolve_baselines
    from jurist.store.run_dir import RunDir

    battles, _ = load_battles(RunDir(run.root))
    baselines = set(resolve_baselines(ScoreOptions(), run.fields, battles))
    cells: dict[tuple[str, str], Cells] = defaultdict(Cells)
    for battle in battles:
        a, b = battle["model_a"], battle["model_b"]
        if b in baselines and a not in baselines:
            model, p_model = a, OUTCOME[battle["winner"]]
        elif a in baselines and b not in baselines:
            model, p_model = b, 1.0 - OUTCOME[battle["winner"]]
        else:
            continue
        key = (str(battle.get("judge") or ""), str(model))
        cells[key].add(str(battle["uid"]), p_model, float(battle.get("weight", 1)))
    return dict(cells)


def _rules_cells(run: RecordedRun) -> dict[tuple[str, str], Cells]:
    from jurist.scoring.point_outcomes import load_points
    from jurist.scoring.rules import HEADLINE
    from jurist.store.run_dir import RunDir

    suite = str(run.bench_info.get("suite") or run.fields.get("rule_suite") or "")
    mode = "loose" if HEADLINE.get(suite, "prompt_strict") == "prompt_loose" else "strict"
    cells: dict[tuple[str, str], Cells] = defaultdict(Cells)
    for point in load_points(RunDir(run.root)):
        passed = all(bool(check[mode]) for check in point["detail"]["instructions"])
        cell = cells[("", str(point["model"]))]
        cell.add(str(point["uid"]), float(passed))
        cell.passed[(str(point["uid"]), int(point.get("sample", 0)))] = passed
    return dict(cells)


def _rubric_cells(run: RecordedRun, suite: str) -> dict[tuple[str, str], Cells]:
    from jurist.scoring.point_outcomes import load_points
    from jurist.scoring.rubric import group_answers, healthbench_metrics
    from jurist.store.run_dir import RunDir

    by_group: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for point in load_points(RunDir(run.root)):
        by_group[(str(point.get("judge") or ""), str(point["model"]))].append(point)
    cells: dict[tuple[str, str], Cells] = {}
    for key, points in by_group.items():
        cell = cells.setdefault(key, Cells())
        for (uid, _sample), items in group_answers(points).items():
            if any(p.get("value") is None for p in items):
                continue  # an unscored item leaves the answer out, as the door's score does
            if suite == "writingbench":
                for p in items:  # every criterion an entry: the micro average upstream reports
                    cell.add(uid, int(p["detail"]["score"]) / 10.0)
            else:
                overall = healthbench_metrics(items).get("overall_score")
                if overall is not None:
                    cell.add(uid, overall)
    return cells
