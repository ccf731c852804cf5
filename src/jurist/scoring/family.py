"""Which scoring family scores a run: one table from a benchmark's metric to its family, the run.json fields
that record the family and the run's scoring settings, and the one fallback for run directories that do
not name a family (written before the field existed, or imported from a peer tool).

A family is a kind of outcome and the statistics over it (:mod:`jurist.scoring.door`): ``pairwise``
battles scored as win rates, Bradley-Terry, style control or LC; ``judge-accuracy`` (JudgeBench's judge
verdicts against its labels); ``rules`` (IFEval/IFBench point records); ``rubric`` (HealthBench and
WritingBench point records); ``placement`` (judged battles placed among an arena's human votes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.benchmarks.base import Benchmark

FamilyName = Literal["pairwise", "judge-accuracy", "rules", "rubric", "placement"]
FAMILIES: tuple[FamilyName, ...] = get_args(FamilyName)

FAMILY_OF_METRIC: Mapping[str, FamilyName] = {
    "winrate": "pairwise",
    "judge-accuracy": "judge-accuracy",
    "instruction-following": "rules",
    "rubric": "rubric",
    "arena-elo": "placement",
    "arena-calibration": "placement",
}
"""THE table: a benchmark's metric (:data:`jurist.benchmarks.base.Metric`) -> the family that scores it."""


def family_of_metrics(metrics: Iterable[str]) -> FamilyName:
    """The family of a benchmark's metrics (every benchmark reports one family's numbers)."""
    families = list(dict.fromkeys(FAMILY_OF_METRIC[m] for m in metrics if m in FAMILY_OF_METRIC))
    if len(families) != 1:
        raise JuristError(f"metrics {list(metrics)}: no single scoring family ({families or 'none'})")
    return families[0]


def run_scoring_fields(bench: Benchmark, settings: Mapping[str, Any]) -> dict[str, Any]:
    """run.json's ``score_family`` and ``scoring`` for a run of ``bench`` with the command line's scoring
    ``settings``: the metrics, the settings, and the benchmark's own scoring (``official``: what a pairwise
    run reports unless the command line chooses a method), so ``jurist show`` scores as the run did."""
    official = bench.official_scoring
    return {
        "score_family": family_of_metrics(bench.metrics),
        "scoring": {
            "metrics": list(bench.metrics),
            **settings,
            "official": {
                "style_control": list(official.style_control),
                "style_categories": list(official.style_categories),
                "length_controlled": official.length_controlled,
                "categories": list(bench.score_categories),
            },
        },
    }


def family_of_run(path: Path, run_json: Mapping[str, Any] | None) -> FamilyName:
    """The family of the run at ``path`` (a run directory, or an arena battles file): run.json's
    ``score_family``, else :func:`derived_family`."""
    named = (run_json or {}).get("score_family")
    if named in FAMILIES:
        return named  # type: ignore[no-any-return]
    if named is not None:
        raise JuristError(f"{path}: run.json's score_family {named!r} is not one of {', '.join(FAMILIES)}")
    return derived_family(path, run_json)


def derived_family(path: Path, run_json: Mapping[str, Any] | None) -> FamilyName:
    """The only fallback: the family of a run that does not name one, told from run.json's other fields
    (its metrics, JudgeArena's import format, the JudgeBench runner's bench, the judge kind or rule suite).

    Without a run.json at all, ``path`` is a peer tool's output: an arena battles file or a JudgeArena
    results folder (placement), else a folder of jurist-schema battles (pairwise).
    """
    if run_json is None:
        from jurist.scoring.placement import is_arena_run

        return "placement" if is_arena_run(path) else "pairwise"
    metrics = (run_json.get("scoring") or {}).get("metrics")
    if isinstance(metrics, list) and any(m in FAMILY_OF_METRIC for m in metrics):
        return family_of_metrics(metrics)
    if run_json.get("format") == "judgearena":
        return "placement"
    if run_json.get("bench") == "judgebench":
        return "judge-accuracy"
    if run_json.get("judge_kind") == "rubric":
        return "rubric"
    if run_json.get("rule_suite"):
        return "rules"
    return "pairwise"
