"""A run's outcomes question by question, for paired comparisons and adaptive stopping: the same files the
door scores (battles, points), read through the same readers, grouped per (judge, model) and question.

Each family (its ``paired_cells``) gives each question of each (judge, model) a sum and a count of entries
whose ratio over all questions is the task's headline score (before ``scale``): pairwise, P(model beats the
baseline) per game times its weight (the weighted win rate); rules, the prompt-level pass of each sampled
answer (IFEval's strict, IFBench's loose headline); rubric, each graded answer's score (HealthBench's Σ met /
Σ possible, WritingBench's criterion scores on 1-10, each an entry, kept as a tenth). A comparison also needs
to know the run is the same experiment: :attr:`RunOutcomes.identity` holds what must agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.families.door import RecordedRun
from jurist.families.registry import FamilyName, family_of_run, score_family

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
class PairedCells:
    """What a family pairs of one run: the cells per (judge, model), the units a difference is reported
    in, and the factor from a cell's ratio to them."""

    cells: Mapping[tuple[str, str], Cells]
    units: str
    scale: float
    exact_test: bool = False
    """Each cell's ``passed`` holds one pass or fail per prompt: McNemar's exact test applies."""
    head_to_head: bool = False
    """The outcomes are games against a baseline, so two candidates' answers can be judged against each
    other by the same protocol (``compare --head-to-head``)."""


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
    exact_test: bool = False
    head_to_head: bool = False

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
    """The per-question outcomes of the run directory at ``path``, as its family pairs them."""
    recorded = RecordedRun.read(path)
    if not recorded.has_run_json:
        raise JuristError(f"{path}: no run.json: not a jurist run directory")
    family = family_of_run(path, recorded.fields)
    paired = score_family(family).paired_cells(recorded)
    if paired is None:
        raise JuristError(f"{path}: a {family} run has no paired comparison")
    fields = recorded.fields
    return RunOutcomes(
        root=path,
        task=recorded.name,
        family=family,
        units=paired.units,
        scale=paired.scale,
        identity=identity_of(fields),
        models=tuple(str(m) for m in fields.get("models") or []),
        cells=dict(paired.cells),
        n_questions=int(fields.get("n_questions") or 0),
        samples=int(fields.get("samples") or 1),
        exact_test=paired.exact_test,
        head_to_head=paired.head_to_head,
    )
