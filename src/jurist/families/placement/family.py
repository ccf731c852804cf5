"""The placement family: an arena run's judged battles placed among the arena's human votes
(:mod:`jurist.families.placement.fit`), or, for a calibration run, each judge's temperature fitted to them.

Outcomes: the judged battles with each question's real arena opponent, then the human anchor battles, in
JudgeArena's schema (``battles.jsonl``), or ``calibration.json`` (the fit needs each question's human vote,
which only the benchmark holds). Score: the fit again from ``battles.jsonl``, or the calibration kept; a
battles file with no human votes (JudgeArena saves only the judged ones) is tallied. Documents:
``elo_ratings.json`` (one per (judge, model) under ``elo_ratings/`` when there are several) and
``leaderboard.json``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

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
from jurist.families.placement.arena_battles import HARD_PREF, LABEL_GAP
from jurist.families.placement.fit import (
    CALIBRATION_FILE,
    ELO_FILE,
    evaluated_models,
    fit_reports,
    settings_for,
    summary_rows,
)
from jurist.families.registry import FamilyName
from jurist.ratings import ALL, r

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.paired import PairedCells
    from jurist.families.reward import AnswerReward, RewardOptions
    from jurist.judging import JudgeKind

Row = dict[str, Any]


@dataclass
class PlacementDetail:
    """What a placement score holds besides its rows: the fitted reports; or a calibration document; or,
    for battles without human votes, the judged battles' tally and the elo_ratings.json stored beside."""

    kind: Literal["reports", "calibration", "tally"]
    reports: list[dict[str, Any]] = field(default_factory=list)
    calibration: dict[str, Any] | None = None
    stored: dict[str, Any] | None = None
    settings: dict[str, Any] = field(default_factory=dict)


class PlacementFamily:
    """Judged battles on an arena's human scale; elo_ratings.json and leaderboard.json."""

    name: ClassVar[FamilyName] = "placement"

    def reward(self, kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
        """``jurist serve reward``'s reward of one answer: the pairwise one, against the opponent's answer."""
        from jurist.families.pairwise.reward import pairwise_reward

        return pairwise_reward(kind, options)

    def outcomes(self, run: FinishedRun) -> RunEnd:
        from jurist.families.placement.arena_battles import evaluated_name, judged_battles
        from jurist.store import rewrite_jsonl_atomic, write_json_atomic

        bench = run.bench
        human = getattr(bench, "human", None)
        if human is None:
            raise JuristError(f"{bench.name}: an arena benchmark must carry its human anchor battles")
        info = dict(bench.info)
        if "arena-calibration" in bench.metrics:
            pairs = list(run.judged())
            fits = calibration_fits(pairs, bench.baselines()[0])
            document = {"arena": info.get("arena"), "selection": info.get("selection"), "judges": fits}
            write_json_atomic(run.run_dir.root / CALIBRATION_FILE, document)
            return RunEnd(len(pairs))
        names = {alias: evaluated_name(alias, human.models) for alias in run.candidates}
        temperature = (info.get("placement") or {}).get("temperature")
        battles, invalid = judged_battles(run.judged(), names, temperature, info.get("arena"))
        judged = len(battles)
        battles.extend(human.records())
        rewrite_jsonl_atomic(run.run_dir.battles, battles)
        by_name = {(judge, names.get(alias, alias), ALL): n for (judge, alias), n in invalid.items()}
        return RunEnd(judged, invalid=by_name)

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        what = "an arena placement fits each judge's battles among the human votes; options"
        notes = ignored_note(request, what, ["--judge"] if request.judges else [])
        title = f"jurist: {run.name}"
        if _is_calibration(run):
            document = _calibration(run)
            rows = [{"judge": judge, **fit} for judge, fit in (document.get("judges") or {}).items()]
            scored = any(row.get("temperature") is not None for row in rows)
            detail = PlacementDetail("calibration", calibration=document)
            return Scores(
                self.name, rows, "judge calibration", title, {}, notes, detail=detail, scored=scored
            )
        reports, fit_notes, battles, settings = _fit(run, request)
        if not any(b["source"] == "human" for b in battles):
            stored = _stored_report(run)
            detail = PlacementDetail("tally", stored=stored, settings=settings)
            rows = judged_summary(battles)
            return Scores(
                self.name, rows, "judged battles", title, settings, [*fit_notes, *notes], detail=detail
            )
        invalid = _invalid(run, end)
        rows = summary_rows(reports)
        for row in rows:
            row["invalid"] = invalid.get((row["judge"], row["model"], ALL), 0)
        for (judge, model, _), n in sorted(invalid.items()):
            if n:
                notes.append(f"{n} verdict(s) of {judge} on {model} could not be read and were left out")
        detail = PlacementDetail("reports", reports=reports, settings=settings)
        return Scores(
            self.name,
            rows,
            "arena placement (Elo among the human votes)",
            title,
            settings,
            [*fit_notes, *notes],
            [warning for report in reports for warning in report["jurist"].get("warnings", ())],
            detail=detail,
            scored=bool(reports),
        )

    def documents(self, scores: Scores) -> dict[str, Any]:
        from jurist.store import file_stem

        detail: PlacementDetail = scores.detail
        if detail.kind != "reports":
            return {CALIBRATION_FILE: detail.calibration} if detail.kind == "calibration" else {}
        reports = detail.reports
        if len(reports) == 1:
            names = [ELO_FILE]
        else:
            names = [
                f"elo_ratings/{file_stem(str(rep['judge_model']))}/{file_stem(str(rep['model']))}.json"
                for rep in reports
            ]
        return {**dict(zip(names, reports, strict=True)), "leaderboard.json": scores.rows}

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        from jurist.families.placement.show import print_placement

        print_placement(scores, fmt, title, out, err)

    def summary(self, rows: Sequence[Row], method: Any) -> SummaryBoard:
        from jurist.families.placement.show import TITLE

        return SummaryBoard(TITLE, layout="pairwise")

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        if row.get("baseline") or "rating" not in row:
            return None
        return Headline("rating", row["rating"], row.get("ci_low"), row.get("ci_high"))

    def paired_cells(self, run: RecordedRun) -> PairedCells | None:
        return None


def _fit(
    run: RecordedRun, request: ScoreRequest
) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], dict[str, Any]]:
    """(reports, notes, battles, settings): the fit again from the run's (or one file's) battles."""
    from jurist.families.placement.arena_battles import find_battles, read_battles

    path = run.root
    source = find_battles(path) if path.is_dir() else path
    if source is None:
        raise JuristError(f"{path}: no battles.jsonl or battles.parquet")
    battles = read_battles(source)
    folder = path if path.is_dir() else path.parent
    overrides = {"n_bootstrap": request.n_bootstrap, "seed": request.seed, "ci_level": request.ci_level}
    settings = settings_for(folder, run.fields if run.has_run_json else None, **overrides)
    described = {"n_bootstrap": settings.n_bootstrap, "seed": settings.seed, "ci_level": settings.ci_level}
    if not any(b["source"] == "human" for b in battles):
        return (
            [],
            [f"{source}: no human battles, so nothing to place on the arena's scale"],
            battles,
            described,
        )
    reports, notes = fit_reports(battles, settings)
    return reports, notes, battles, described


def _is_calibration(run: RecordedRun) -> bool:
    """A calibration run: its metric says so (run.json)."""
    metrics = run.scoring.get("metrics")
    return isinstance(metrics, list) and "arena-calibration" in metrics


def _calibration(run: RecordedRun) -> dict[str, Any]:
    path = run.root / CALIBRATION_FILE
    if not path.is_file():
        raise JuristError(f"{run.root}: the calibration run has no {CALIBRATION_FILE}")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path}: not valid JSON ({exc})") from None
    return document if isinstance(document, dict) else {}


def _stored_report(run: RecordedRun) -> dict[str, Any] | None:
    from jurist.families.placement.arena_battles import read_elo_report

    folder = run.root if run.root.is_dir() else run.root.parent
    return read_elo_report(folder / ELO_FILE) if (folder / ELO_FILE).is_file() else None


def _invalid(run: RecordedRun, end: RunEnd | None) -> dict[tuple[str, str, str], int]:
    """Unreadable verdicts per (judge, evaluated model): the run's own at its end, else its leaderboard's."""
    if end is not None and end.invalid is not None:
        return end.invalid
    if not run.root.is_dir():
        return {}
    from jurist.families.pairwise.battles import invalid_counts
    from jurist.store import RunDir

    return invalid_counts(RunDir(run.root), {})


def judged_summary(battles: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (judge, evaluated side of each battle's first model pair): wins, losses, ties, as JudgeArena
    summarises a judge-only file (no human battles to place against)."""
    judged = [dict(b) for b in battles if b["source"] == "llm-judge"]
    rows = []
    for judge, model in evaluated_models(judged, set()):
        wins = losses = ties = 0
        for b in judged:
            if b["judge_model"] != judge or model not in (b["model_a"], b["model_b"]):
                continue
            won = "model_a" if b["model_a"] == model else "model_b"
            if b["winner"] == won:
                wins += 1
            elif b["winner"] in ("tie", "tie (bothbad)"):
                ties += 1
            else:
                losses += 1
        total = wins + losses + ties
        winrate = (wins + 0.5 * ties) / total if total else None
        rows.append(
            {"judge": judge, "model": model, "wins": wins, "losses": losses, "ties": ties, "winrate": winrate}
        )
    return rows


def calibration_fits(judged: Iterable[tuple[Any, dict[str, Any]]], side_a: str) -> dict[str, dict[str, Any]]:
    """Per judge: the temperature that best predicts the human votes from its graded verdicts."""
    from jurist.ratings import calibrate_temperature

    gaps: dict[str, list[float]] = defaultdict(list)
    votes: dict[str, list[float]] = defaultdict(list)
    invalid: Counter[str] = Counter()
    for item, record in judged:
        judge = str(record["judge"])
        human = 1.0 - HARD_PREF[str(item.question.metadata["human_winner"])]
        for game in record["games"]:
            label = game.get("label")
            if label not in LABEL_GAP:
                invalid[judge] += 1
                continue
            gap = LABEL_GAP[str(label)]
            gaps[judge].append(gap if game["a"] == side_a else -gap)
            votes[judge].append(human)
    fits: dict[str, dict[str, Any]] = {}
    for judge in sorted(gaps):
        diff, y = np.asarray(gaps[judge]), np.asarray(votes[judge])
        decisive = (y != 0.5) & (diff != 0.0)
        agree = (
            float(np.mean(np.sign(diff[decisive]) == np.sign(y[decisive] - 0.5))) if decisive.any() else None
        )
        try:
            fit = calibrate_temperature(diff, y)
        except ValueError as exc:
            fits[judge] = {"temperature": None, "error": str(exc), "n_games": int(diff.size)}
            continue
        fits[judge] = {
            "temperature": r(fit.temperature),
            "n_pairs": fit.n_pairs,
            "neg_log_likelihood": r(fit.neg_log_likelihood),
            "agreement": None if agree is None else r(agree),
            "n_games": int(diff.size),
            "invalid": invalid[judge],
        }
    return fits
