"""The rules family: a run's rule-checked point records (:mod:`jurist.families.points`) scored as IFEval
and IFBench do (:mod:`jurist.families.rules.score`), with the run's bootstrap settings unless the request
gives others; kept in ``summary.json`` (the rows plus the reference's own shape) and ``leaderboard.json``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from jurist.errors import JuristError
from jurist.families.door import (
    FinishedRun,
    Headline,
    RecordedRun,
    RunEnd,
    ScoreRequest,
    Scores,
    SummaryBoard,
    ignored_note,
)
from jurist.families.points import (
    load_points,
    point_documents,
    point_settings,
    print_point_scores,
    unscored,
)
from jurist.families.registry import FamilyName

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.paired import PairedCells
    from jurist.families.reward import AnswerReward, RewardOptions
    from jurist.judging import JudgeKind

Row = dict[str, Any]


class RulesFamily:
    """Rule-checked answers: prompt- and instruction-level accuracy, strict and loose."""

    name: ClassVar[FamilyName] = "rules"
    scoring_modules: ClassVar[tuple[str, ...]] = (
        "numpy", "numpy.random", "numpy.ma", "jurist.ratings.battles", "jurist.ratings.binomial",
        "jurist.ratings.sanity", "jurist.families.points", "jurist.families.rules.score",
        "jurist.families.rules.table",
    )  # fmt: skip
    """What scoring a run imports (the family's door imports them where used)."""

    def reward(self, kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
        """``jurist serve reward``'s reward of one answer: the share of instructions followed."""
        from jurist.families.rules.reward import rules_reward

        return rules_reward(kind, options)

    def outcomes(self, run: FinishedRun) -> RunEnd:
        from jurist.families.points import check_points

        return RunEnd(check_points(run.run_dir, run.bench, list(run.candidates), run.samples))

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        from jurist.families.rules.score import HEADLINE, LABELS, score_points
        from jurist.store import RunDir

        info = dict(run.bench_info)
        suite = str(info.get("suite") or run.fields.get("rule_suite") or "")
        headline = f"{LABELS[HEADLINE.get(suite, 'prompt_strict')]} accuracy"
        if end is not None and end.outcomes == 0:
            return unscored(self.name, headline, run, request)
        points = load_points(RunDir(run.root))
        if not points:
            raise JuristError(f"{run.root}: the run has no checked answers in points/")
        suite = suite or str(points[0].get("metric"))
        headline = f"{LABELS[HEADLINE.get(suite, 'prompt_strict')]} accuracy"
        settings = point_settings(run, request)
        rows = score_points(
            points,
            suite=suite,
            n_bootstrap=settings["n_bootstrap"],
            seed=settings["seed"],
            ci_level=settings["ci_level"],
        )
        notes = ignored_note(
            request,
            "a rule-checked run has no judge or baseline; options",
            ["--judge"] if request.judges else [],
        )
        detail = {"suite": suite, **info}
        return Scores(self.name, rows, headline, f"jurist: {run.name}", settings, notes, detail=detail)

    def documents(self, scores: Scores) -> dict[str, Any]:
        return point_documents(scores, rules_summary)

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        from jurist.families.rules.table import print_rule_rows

        print_point_scores(scores, print_rule_rows, fmt, title, out, err, detail)

    def summary(self, rows: Sequence[Row], method: Any) -> SummaryBoard:
        return SummaryBoard("Rule checks: instructions followed (%)", [0.0, 100.0], layout="rules")

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        name = row.get("headline")  # the suite's headline metric
        if row.get("baseline") or not isinstance(name, str):
            return None
        return Headline(name, row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high"))

    def paired_cells(self, run: RecordedRun) -> PairedCells | None:
        from jurist.families.rules.paired import paired_cells

        return paired_cells(run)


def rules_summary(
    rows: list[Row], bench_info: Mapping[str, Any], *, settings: dict[str, Any]
) -> dict[str, Any]:
    """``summary.json`` of a rule-checked run: its stable, documented result (docs/scoring.md)."""
    from jurist.families.rules.score import reference_summary

    return {
        "schema": "jurist.rules.summary/1",
        "suite": bench_info.get("suite"),
        "version": bench_info.get("version"),
        "data_sha256": bench_info.get("sha256"),
        "settings": settings,
        "tstamp": time.time(),
        "models": {
            row["model"]: {
                **{key: value for key, value in row.items() if key != "model"},
                "summary": reference_summary(row),
            }
            for row in rows
        },
    }
