"""THE scoring door: ``jurist run`` (at its end) and ``jurist show`` score a run through
:func:`score_run_dir`, so both give the same rows and headline for every family.

A family (:class:`Family`, one subpackage of :mod:`jurist.families` each) turns a finished run's judgments (or
answers) into outcomes on disk (battles, points), scores the outcomes on disk, and names the documents its
scores are kept in (leaderboard.json and its own: ratings.json, summary.json, elo_ratings.json,
judgebench.json). Which family scores a run is a field of run.json (:mod:`jurist.families.registry`); how it
scores, with no option given, is what the run recorded there (its method, bootstrap settings, and the
benchmark's official scoring). Printing is the family's too (:func:`jurist.families.printing.print_scores`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from jurist.errors import JuristError, did_you_mean, unknown_value
from jurist.families.pairwise.options import STYLE_FEATURES, Method, Resample
from jurist.families.registry import FamilyName, family_of_run, score_family

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.benchmarks import Benchmark
    from jurist.families.paired import PairedCells
    from jurist.judging import JudgeItem, JudgeKind
    from jurist.store import AnswerIndex, RunDir

Row = dict[str, Any]
Judged = tuple["JudgeItem", dict[str, Any]]
InvalidCounts = dict[tuple[str, str, str], int]
"""Invalid verdicts per (judge, model, category, or ``*`` for the whole run)."""


@dataclass(frozen=True)
class ScoreRequest:
    """What to score with, as ``jurist show``'s options give it; None (or empty) is "as the run scored":
    the settings run.json records. A method given (``method``, ``style_control``, ``length_controlled``)
    replaces the run's, the benchmark's official scoring included; ``categories=()`` pools every category."""

    method: Method | None = None
    style_control: tuple[str, ...] | None = None
    length_controlled: bool | None = None
    categories: tuple[str, ...] | None = None
    baselines: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    ensemble: bool | None = None
    instruction_difficulty: Path | None = None
    n_bootstrap: int | None = None
    seed: int | None = None
    ci_level: float | None = None
    resample: Resample | None = None
    anchor: Path | None = None
    """A replacement study's replacement.json: each score re-anchored onto the retired judge's scale."""

    def chooses_method(self) -> bool:
        return self.method is not None or self.style_control is not None or self.length_controlled is not None

    def pairwise_options(self) -> list[str]:
        """The options given that only a pairwise score takes (named as the command line spells them)."""
        given = {
            "--method": self.method,
            "--style-control": self.style_control,
            "--length-controlled": self.length_controlled,
            "--category": self.categories,
            "--baseline": self.baselines or None,
            "--ensemble": self.ensemble,
            "--instruction-difficulty": self.instruction_difficulty,
            "--resample": self.resample,
        }
        return [name for name, value in given.items() if value is not None]

    def check(self) -> None:
        """Refuse values with no meaning, naming the command-line flag."""
        if self.method not in (None, "winrate", "bt"):
            raise unknown_value("--method", str(self.method), ("winrate", "bt"))
        if self.resample not in (None, "questions", "entries"):
            raise unknown_value("--resample", str(self.resample), ("questions", "entries"))
        unknown = set(self.style_control or ()) - set(STYLE_FEATURES)
        if unknown:
            hint = did_you_mean(sorted(unknown)[0], STYLE_FEATURES)
            raise JuristError(
                f"--style-control: unknown feature(s) {sorted(unknown)}{hint}; choose length, markdown"
            )
        if self.ci_level is not None and not 0.0 < self.ci_level < 1.0:
            raise JuristError(f"--ci: {self.ci_level} is not in (0, 1)")


def ignored_note(request: ScoreRequest, what: str, also: Sequence[str] = ()) -> list[str]:
    """A note naming the options given that a run of this family does not take."""
    given = [*request.pairwise_options(), *also]
    if not given:
        return []
    return [f"{what}: {', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply"]


@dataclass(frozen=True)
class RecordedRun:
    """A run as the door reads it: where it is and what its run.json records (empty for a bare battles file
    or a peer tool's folder)."""

    root: Path
    fields: Mapping[str, Any]
    has_run_json: bool

    @classmethod
    def read(cls, path: Path) -> RecordedRun:
        run_json = path / "run.json" if path.is_dir() else None
        if run_json is None or not run_json.is_file():
            return cls(path, {}, False)
        try:
            fields = json.loads(run_json.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise JuristError(f"{run_json}: not valid JSON ({exc})") from None
        return cls(path, fields if isinstance(fields, dict) else {}, True)

    @property
    def scoring(self) -> Mapping[str, Any]:
        return self.fields.get("scoring") or {}

    @property
    def bench_info(self) -> Mapping[str, Any]:
        return self.fields.get("bench_info") or {}

    @property
    def name(self) -> str:
        """The benchmark's name (the folder's, for a run that records none)."""
        return str(self.fields.get("bench_name") or self.fields.get("bench") or self.root.name)

    def bootstrap(self, request: ScoreRequest) -> tuple[int, int, float]:
        """(rounds, seed, CI level): the request's, else the run's, else 100, 0 and 90%."""
        scoring = self.scoring
        return (
            request.n_bootstrap if request.n_bootstrap is not None else int(scoring.get("bootstrap", 100)),
            request.seed if request.seed is not None else int(scoring.get("seed", 0)),
            request.ci_level if request.ci_level is not None else float(scoring.get("ci_level", 0.90)),
        )


@dataclass
class FinishedRun:
    """What the end of ``jurist run`` hands a family to write its outcomes: the benchmark, the run
    directory, who answered and judged, the judge kinds, and the current judgments (streamed once)."""

    bench: Benchmark
    run_dir: RunDir
    judges: Sequence[str]
    candidates: Sequence[str]
    baselines: Sequence[str]
    kinds: Mapping[str, JudgeKind]
    judged: Callable[[], Iterable[Judged]]
    answers: Mapping[str, AnswerIndex]
    samples: int
    strong_weight: int


@dataclass
class RunEnd:
    """What the end of a run knows that its directory does not hold yet: how many outcomes it wrote, the
    invalid verdicts it just read, baselines of earlier runs' judgments scored with it, its answer indexes
    (stored token lengths), JudgeBench's pairs, and notes on what was added."""

    outcomes: int = 0
    invalid: InvalidCounts | None = None
    baselines: tuple[str, ...] = ()
    answers: Mapping[str, AnswerIndex] | None = None
    pairs: Sequence[Any] | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Scores:
    """A run scored: the rows (leaderboard.json), what the headline number is, the title, the settings
    used, notes and warnings, the family's own result (``detail``: pairwise ``Scored``, placement reports,
    a calibration document...), and whether anything was scored at all."""

    family: FamilyName
    rows: list[Row]
    headline: str
    title: str
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    detail: Any = None
    scored: bool = True


@dataclass(frozen=True)
class Headline:
    """One leaderboard row's headline as ``--tasks`` and a sweep show it: the metric's name, its value and
    interval on the scale shown, and whether that scale is a fraction (0-1: three digits, not one)."""

    metric: str
    value: Any
    ci_low: Any
    ci_high: Any
    fraction: bool = False


BoardLayout = str
"""How the browser draws a leaderboard (view/assets/summary.js): ``pairwise`` (a score or rating with its
interval, per judge and category), ``rubric`` (a score on the suite's scale, then its breakdowns),
``rules`` (the four instruction-following rates), ``table`` (every plain field as a column). A plugin
family picks one of these."""


@dataclass(frozen=True)
class SummaryBoard:
    """The browser summary of one run's leaderboard, as its family draws it: the title, the axis (None:
    fitted to the numbers), the layout, and for a ``rubric`` board the row field it ranks on, that
    column's heading, its digits and the breakdowns shown under it (row field, label, heading)."""

    title: str
    scale: list[float] | None = None
    layout: BoardLayout = "table"
    score_field: str = "score"
    score_label: str = "score (0-1)"
    digits: int = 3
    breakdowns: tuple[tuple[str, str, str], ...] = ()


class Family(Protocol):
    """One family: outcomes (at a run's end) -> score (a run directory, a request) -> documents, and how
    its scores are shown: the terminal's tables, the browser's title and axis, the ``--tasks`` headline,
    and the paired statistic ``compare`` decides on."""

    name: ClassVar[FamilyName]
    # optional: ``warnings_in_table: ClassVar[bool]``, True where the family's warnings are part of its
    # table (printed whole by ``jurist run`` and ``jurist show``; else a warning the run said is not repeated)
    # optional: ``scoring_modules: ClassVar[tuple[str, ...]]``, what its ``outcomes`` and ``score`` import
    # (a run imports them in a thread while it waits on its last replies: jurist.run.ahead)

    def outcomes(self, run: FinishedRun) -> RunEnd:
        """Write the outcomes of ``run``'s current judgments (or answers) to its directory."""
        ...

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        """Score the outcomes on disk as ``request`` asks (else as the run recorded); no writes."""
        ...

    def documents(self, scores: Scores) -> dict[str, Any]:
        """The files the scores are kept in: path relative to the run directory -> JSON document."""
        ...

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        """The scores in ``fmt`` (table, json, csv, markdown) on ``out``, with their warnings."""
        ...

    def summary(self, rows: Sequence[Row], method: Any) -> SummaryBoard:
        """How the browser's summary draws these leaderboard rows (its title, axis and layout)."""
        ...

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        """A leaderboard row's headline (None: a row that is not a model's score, a baseline's fixed 50)."""
        ...

    def paired_cells(self, run: RecordedRun) -> PairedCells | None:
        """The run's per-question outcomes for a paired comparison; None: the family has none."""
        ...


def score_run_dir(
    path: Path,
    request: ScoreRequest | None = None,
    *,
    recorded: Mapping[str, Any] | None = None,
    end: RunEnd | None = None,
) -> Scores:
    """Score the run at ``path`` (a run directory, or an arena battles file) as ``request`` asks, else as
    the run recorded; ``recorded``: run.json's fields (read from ``path`` when not given); ``end``: what the
    end of a run adds (:class:`RunEnd`). Pure reading: the caller writes :func:`write_documents`."""
    request = request or ScoreRequest()
    request.check()
    run = RecordedRun.read(path) if recorded is None else RecordedRun(path, recorded, True)
    if not path.exists():
        raise JuristError(f"{path}: no such run directory")
    name = family_of_run(path, run.fields if run.has_run_json else None)
    return score_family(name).score(run, request, end)


def write_documents(root: Path, scores: Scores) -> list[Path]:
    """Write the documents of ``scores`` into the run directory ``root`` (a battles file's folder)."""
    from jurist.store import write_json_atomic

    folder = root if root.is_dir() else root.parent
    written = []
    for name, document in score_family(scores.family).documents(scores).items():
        write_json_atomic(folder / name, document)
        written.append(folder / name)
    return written
