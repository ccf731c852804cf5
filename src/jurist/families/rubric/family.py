"""The rubric family: a run's graded point records (:mod:`jurist.families.points`) scored as HealthBench
and WritingBench do (:mod:`jurist.families.rubric.score`, the suite's :class:`jurist.benchmarks.base.
RubricSuite` saying which), with the run's bootstrap settings unless the request gives others; kept in
``summary.json`` (the rows plus the reference's own shape) and ``leaderboard.json``.
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


class RubricFamily:
    """Rubric-graded answers: HealthBench's score, WritingBench's overall, by tag and domain."""

    name: ClassVar[FamilyName] = "rubric"
    scoring_modules: ClassVar[tuple[str, ...]] = (
        "numpy", "jurist.families.points", "jurist.families.rubric.score", "jurist.families.rubric.table",
    )  # fmt: skip
    """What scoring a run imports (the family's door imports them where used)."""

    def reward(self, kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
        """``jurist serve reward``'s reward of one answer: the benchmark's own score of the answer."""
        from jurist.families.rubric.reward import rubric_reward

        return rubric_reward(kind, options)

    def outcomes(self, run: FinishedRun) -> RunEnd:
        from jurist.families.points import write_rubric_points

        return RunEnd(write_rubric_points(run.run_dir, run.judged(), run.kinds, list(run.candidates)))

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        from jurist.families.rubric.score import LengthAdjustment, score_rubric_points
        from jurist.store import RunDir

        info = dict(run.bench_info)
        variant = str(info["variant"]) if info.get("variant") else None
        if end is not None and end.outcomes == 0:
            return unscored(self.name, _headline(str(info.get("suite")), variant), run, request)
        points = [
            p for p in load_points(RunDir(run.root)) if not request.judges or p.get("judge") in request.judges
        ]
        if not points:
            raise JuristError(f"{run.root}: the run has no graded answers in points/")
        suite = str(info.get("suite") or points[0]["metric"])
        settings = {**point_settings(run, request), "bootstrap_std_rounds": 1000}
        rows = score_rubric_points(
            points,
            suite=suite,
            variant=variant,
            n_bootstrap=settings["n_bootstrap"],
            seed=settings["seed"],
            ci_level=settings["ci_level"],
            length=LengthAdjustment.from_info(info.get("length_adjustment")),
        )
        notes = ignored_note(request, "a rubric run has no baseline; options")  # --judge picks graders
        return Scores(
            self.name,
            rows,
            _headline(suite, variant),
            f"jurist: {run.name}",
            settings,
            notes,
            detail=info,
            scored=has_scores(rows),
        )

    def documents(self, scores: Scores) -> dict[str, Any]:
        return point_documents(scores, rubric_summary)

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        from jurist.families.rubric.table import print_rubric_rows

        print_point_scores(scores, print_rubric_rows, fmt, title, out, err, detail)

    def summary(self, rows: Sequence[Row], method: Any) -> SummaryBoard:
        from jurist.benchmarks import rubric_suite

        suite = rubric_suite(next((row.get("suite") for row in rows if row.get("suite")), None))
        if suite is None:  # a registered grader's own suite: a 0-1 score, no breakdowns known
            return SummaryBoard("Leaderboard", [0.0, 1.0], layout="rubric")
        variant = next((row.get("variant") for row in rows if row.get("variant")), None)
        return SummaryBoard(
            suite.worded(suite.title, variant),
            list(suite.scale),
            layout="rubric",
            score_field=suite.headline_field,
            score_label=suite.board_label,
            digits=3 if suite.fraction else 2,
            breakdowns=suite.breakdowns,
        )

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        from jurist.benchmarks import rubric_suite

        suite = rubric_suite(row.get("suite"))
        if suite is None or suite.shown_field not in row:
            return None
        low, high = row.get("ci_low"), row.get("ci_high")
        if low is not None and high is not None:
            low, high = suite.shown_factor * low, suite.shown_factor * high
        return Headline(suite.shown_field, row[suite.shown_field], low, high, suite.fraction)

    def paired_cells(self, run: RecordedRun) -> PairedCells | None:
        from jurist.families.rubric.paired import paired_cells

        return paired_cells(run)


def _headline(suite: str, variant: str | None) -> str:
    from jurist.benchmarks import rubric_suite

    described = rubric_suite(suite)
    return described.worded(described.headline, variant) if described else f"{suite} score"


def has_scores(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row has a score (a run whose every answer went unscored has none)."""
    return any(row.get("score", row.get("overall")) is not None for row in rows)


def rubric_summary(
    rows: list[Row], bench_info: Mapping[str, Any], *, settings: dict[str, Any]
) -> dict[str, Any]:
    """``summary.json`` of a rubric run: the stable result, with each row's reference-shaped summary."""
    from jurist.families.rubric.score import reference_summary

    return {
        "schema": "jurist.rubric.summary/1",
        "suite": bench_info.get("suite"),
        "variant": bench_info.get("variant"),
        "data": {key: bench_info.get(key) for key in ("subset", "version", "source", "file", "sha256")},
        "grader": bench_info.get("grader"),
        "settings": settings,
        "tstamp": time.time(),
        "rows": [{**row, "summary": reference_summary(row)} for row in rows],
    }
