"""The pointwise families: a run's point records (:mod:`jurist.scoring.point_outcomes`) scored as rules
(IFEval, IFBench: :mod:`jurist.scoring.rules`) or rubric (HealthBench, WritingBench:
:mod:`jurist.scoring.rubric`), with the run's bootstrap settings unless the request gives others; kept in
``summary.json`` (the rows plus each reference's own shape) and ``leaderboard.json``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from jurist.errors import JuristError
from jurist.scoring.door import FinishedRun, RecordedRun, RunEnd, ScoreRequest, Scores, ignored_note
from jurist.scoring.family import FamilyName

Row = dict[str, Any]


def _settings(run: RecordedRun, request: ScoreRequest) -> dict[str, Any]:
    n_bootstrap, seed, ci_level = run.bootstrap(request)
    return {"n_bootstrap": n_bootstrap, "seed": seed, "ci_level": ci_level, "resample": "questions"}


def _unscored(family: FamilyName, headline: str, run: RecordedRun, request: ScoreRequest) -> Scores:
    """The end of a run that wrote no point (nothing answered or graded): nothing to score or print."""
    return Scores(family, [], headline, f"jurist: {run.name}", _settings(run, request), scored=False)


class RulesFamily:
    """Rule-checked answers: prompt- and instruction-level accuracy, strict and loose."""

    name: ClassVar[FamilyName] = "rules"

    def outcomes(self, run: FinishedRun) -> RunEnd:
        from jurist.scoring.point_outcomes import check_points

        return RunEnd(check_points(run.run_dir, run.bench, list(run.candidates), run.samples))

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        from jurist.scoring.point_outcomes import load_points
        from jurist.scoring.rules import HEADLINE, LABELS, score_points
        from jurist.store.run_dir import RunDir

        info = dict(run.bench_info)
        suite = str(info.get("suite") or run.fields.get("rule_suite") or "")
        headline = f"{LABELS[HEADLINE.get(suite, 'prompt_strict')]} accuracy"
        if end is not None and end.outcomes == 0:
            return _unscored(self.name, headline, run, request)
        points = load_points(RunDir(run.root))
        if not points:
            raise JuristError(f"{run.root}: the run has no checked answers in points/")
        suite = suite or str(points[0].get("metric"))
        headline = f"{LABELS[HEADLINE.get(suite, 'prompt_strict')]} accuracy"
        settings = _settings(run, request)
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
        if not scores.rows:  # nothing checked or graded: nothing to keep
            return {}
        return {
            "summary.json": rules_summary(scores.rows, scores.detail or {}, settings=scores.settings),
            "leaderboard.json": scores.rows,
        }


def rules_summary(
    rows: list[Row], bench_info: Mapping[str, Any], *, settings: dict[str, Any]
) -> dict[str, Any]:
    """``summary.json`` of a rule-checked run: its stable, documented result (docs/scoring.md)."""
    from jurist.scoring.rules import reference_summary

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


class RubricFamily:
    """Rubric-graded answers: HealthBench's score, WritingBench's overall, by tag and domain."""

    name: ClassVar[FamilyName] = "rubric"

    def outcomes(self, run: FinishedRun) -> RunEnd:
        from jurist.scoring.point_outcomes import write_rubric_points

        return RunEnd(write_rubric_points(run.run_dir, run.judged(), run.kinds, list(run.candidates)))

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        from jurist.scoring.point_outcomes import load_points
        from jurist.scoring.rubric import LengthAdjustment, score_rubric_points
        from jurist.store.run_dir import RunDir

        info = dict(run.bench_info)
        variant = str(info["variant"]) if info.get("variant") else None
        if end is not None and end.outcomes == 0:
            return _unscored(self.name, _rubric_headline(str(info.get("suite")), variant), run, request)
        points = [
            p for p in load_points(RunDir(run.root)) if not request.judges or p.get("judge") in request.judges
        ]
        if not points:
            raise JuristError(f"{run.root}: the run has no graded answers in points/")
        suite = str(info.get("suite") or points[0]["metric"])
        settings = {**_settings(run, request), "bootstrap_std_rounds": 1000}
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
            _rubric_headline(suite, variant),
            f"jurist: {run.name}",
            settings,
            notes,
            detail=info,
            scored=has_scores(rows),
        )

    def documents(self, scores: Scores) -> dict[str, Any]:
        if not scores.rows:  # nothing checked or graded: nothing to keep
            return {}
        return {
            "summary.json": rubric_summary(scores.rows, scores.detail or {}, settings=scores.settings),
            "leaderboard.json": scores.rows,
        }


def _rubric_headline(suite: str, variant: str | None) -> str:
    if suite == "writingbench":
        return "WritingBench overall (1-10)"
    return f"HealthBench score ({variant or 'simple-evals'})"


def has_scores(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row has a score (a run whose every answer went unscored has none)."""
    return any(row.get("score", row.get("overall")) is not None for row in rows)


def rubric_summary(
    rows: list[Row], bench_info: Mapping[str, Any], *, settings: dict[str, Any]
) -> dict[str, Any]:
    """``summary.json`` of a rubric run: the stable result, with each row's reference-shaped summary."""
    from jurist.scoring.rubric import reference_summary

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
