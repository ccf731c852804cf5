"""What a benchmark is: data plus choices.

A benchmark is its questions (with per-question metadata), the answers it ships (a reference baseline, or
JudgeBench's fixed response pairs), which baseline each question is judged against, its judge kind (or
none, for rule-checked tasks), the metrics it reports and how many samples it takes per prompt by default.
The runner reads only these fields, so a new benchmark is one module plus one registry line.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jurist.errors import JuristError
from jurist.judging import JudgeKindName, JudgePromptSource
from jurist.store import Question

__all__ = [  # Question is re-exported: it lives in jurist.store.records, below the judge kinds
    "Benchmark",
    "BenchmarkOptions",
    "Metric",
    "OfficialScoring",
    "Question",
    "RubricSuite",
    "SampleMethod",
    "register_rubric_suite",
    "rubric_suite",
    "stratified_subset",
    "take_options",
]

Metric = Literal[
    "winrate", "judge-accuracy", "instruction-following", "arena-elo", "arena-calibration", "rubric"
]
"""What scoring reports: a win rate against the baseline (with every ``show`` method), judge accuracy,
rule-checked instruction following (prompt- and instruction-level, strict and loose), a placement among an
arena's human-voted ratings, a judge's temperature fitted to those votes, or rubric scores (HealthBench,
WritingBench: :mod:`jurist.families.rubric.score`)."""

SampleMethod = Literal["first", "stratified", "shuffled"]
"""How ``--limit N`` picks its questions: the first N, or a seeded subset proportional per category."""

BenchmarkOptions = Mapping[str, str]
"""``-B key=value`` options of ``jurist run``, passed to the benchmark's factory untouched."""


@dataclass(frozen=True)
class OfficialScoring:
    """How the benchmark's own leaderboard scores a pairwise run, used unless the command line chooses
    (``--style-control``, ``--length-controlled``, ``--method``): Arena-Hard v2.0 style-controls its hard
    prompts only, AlpacaEval 2.0 reports the length-controlled win rate beside the raw one."""

    style_control: tuple[str, ...] = ()
    style_categories: tuple[str, ...] = ()
    """The categories style control applies to (empty: all)."""
    length_controlled: bool = False


@dataclass(frozen=True)
class Benchmark:
    """A named set of questions and the choices that say how to answer, judge and score them."""

    name: str
    questions: Sequence[Question]
    shipped_answers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Answers the benchmark brings: model alias -> uid -> text (written to ``answers/`` as sample 0)."""
    shipped_metadata: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    """Style metadata stored with shipped answers (alias -> uid -> Arena-Hard's ``metadata``), written with
    them instead of counting again; an answer without it is counted when written."""
    baseline: str | None = None
    """The baseline every question is judged against, unless ``baselines_by_category`` names another."""
    baselines_by_category: Mapping[str, str] = field(default_factory=dict)
    candidates: tuple[str, ...] = ()
    """Models the benchmark fixes itself (JudgeBench judges its shipped pairs); empty: ``--model`` decides."""
    judge_kind: JudgeKindName | None = "pairwise"
    """The judge kind (:mod:`jurist.judging.kinds`); None: rule-checked, no judge."""
    judge_protocol: str = "arena-hard"
    judge_prompt_source: JudgePromptSource | None = None
    """The prompt the benchmark hands its judge kind (upstream's pinned texts, found when a judge is built);
    None where the kind's protocols bring their own."""
    rule_suite: str | None = None
    """The checkers of a rule-checked benchmark (``ifeval``, ``ifbench``: :mod:`jurist.rules.registry`)."""
    metrics: tuple[Metric, ...] = ("winrate",)
    default_samples: int = 1
    info: Mapping[str, Any] = field(default_factory=dict)
    """Facts for run.json and reports (a split name, the model that wrote shipped answers...)."""
    score_categories: tuple[str, ...] = ()
    """Categories scored each alone by default (Arena-Hard v2.0 reports hard_prompt and creative_writing
    apart, each against its own baseline); empty: one score over all questions."""
    official_scoring: OfficialScoring = field(default_factory=OfficialScoring)
    requirements: Callable[[Sequence[Question]], None] | None = field(default=None, compare=False)
    """Raises one JuristError when something the given questions need is not installed (IFBench: the NLTK
    data a few of its instructions use); asked by :meth:`require_installed` for the questions a run keeps,
    so a ``--limit`` that leaves those questions out needs none of it."""

    def require_installed(self) -> None:
        """Before any request: what this benchmark's questions need is installed, or one JuristError."""
        if self.requirements is not None:
            self.requirements(self.questions)

    def baseline_for(self, question: Question) -> str | None:
        """The baseline ``question`` is judged against (Arena-Hard v2.0: one per category)."""
        return self.baselines_by_category.get(question.category, self.baseline)

    def baselines(self) -> list[str]:
        """Every baseline some question is judged against, in first-use order."""
        named = (self.baseline_for(q) for q in self.questions)
        return list(dict.fromkeys(name for name in named if name is not None))

    def limited(self, limit: int | None, sample: SampleMethod = "first", seed: int = 0) -> Benchmark:
        """The first ``limit`` questions, or (``stratified``) a seeded subset with each category's share
        kept; the chosen uids are recorded in ``info["selection"]`` so a run says what it judged."""
        if limit is None or limit >= len(self.questions):
            return self
        if limit < 1:
            raise JuristError(f"--limit must be at least 1, not {limit}")
        if sample == "first":
            chosen = list(self.questions[:limit])
        elif sample == "stratified":
            chosen = stratified_subset(self.questions, limit, seed)
        elif sample == "shuffled":  # a prefix of one seeded order: each larger limit keeps the smaller's
            chosen = shuffled_prefix(self.questions, limit, seed)
        else:
            raise JuristError(f"--sample: unknown method {sample!r} (first | stratified)")
        uids = [q.uid for q in chosen]
        selection: dict[str, Any] = {
            "method": sample,
            "limit": limit,
            "of": len(self.questions),
            "uids_sha256": hashlib.sha256("\n".join(uids).encode()).hexdigest()[:16],
            "uids": uids,
        }
        if sample in ("stratified", "shuffled"):
            selection["seed"] = seed
        present = {q.category for q in chosen}
        categories = tuple(c for c in self.score_categories if c in present)
        return dataclasses.replace(
            self,
            questions=chosen,
            info={**self.info, "selection": selection},
            score_categories=categories if len(categories) > 1 else (),
        )

    def with_baseline(self, baseline: str) -> Benchmark:
        """Every question judged against ``baseline`` (``--baseline`` overrides the benchmark's choice)."""
        return dataclasses.replace(self, baseline=baseline, baselines_by_category={})


def shuffled_order(questions: Sequence[Question], seed: int) -> list[Question]:
    """The questions in the seeded random order adaptive evaluation draws them in: by ``sha256(seed:uid)``,
    so the order depends on nothing but the seed and the uids."""
    return sorted(questions, key=lambda q: hashlib.sha256(f"{seed}:{q.uid}".encode()).digest())


def shuffled_prefix(questions: Sequence[Question], limit: int, seed: int) -> list[Question]:
    """The first ``limit`` questions of :func:`shuffled_order`, kept in the file's order."""
    chosen = {q.uid for q in shuffled_order(questions, seed)[:limit]}
    return [q for q in questions if q.uid in chosen]


def stratified_subset(questions: Sequence[Question], limit: int, seed: int) -> list[Question]:
    """``limit`` questions, each category's count proportional to its share (largest remainders; every
    category gets one when ``limit`` allows, so each can be scored); within a category the questions whose
    ``sha256(seed:uid)`` sort first, so the choice depends on nothing but the seed and the uids (not on the
    Python version or the order of the file). The subset keeps the questions' order."""
    by_category: dict[str, list[int]] = {}
    for index, question in enumerate(questions):
        by_category.setdefault(question.category, []).append(index)
    total = len(questions)
    shares = {cat: limit * len(indices) / total for cat, indices in by_category.items()}
    quota = {cat: int(share) for cat, share in shares.items()}
    order = list(by_category)  # first-appearance order breaks ties
    for cat in sorted(order, key=lambda c: (-(shares[c] - quota[c]), order.index(c)))[
        : limit - sum(quota.values())
    ]:
        quota[cat] += 1
    if limit >= len(order):
        for cat in order:
            if quota[cat] == 0:
                donor = max(order, key=lambda c: (quota[c], -order.index(c)))
                quota[donor] -= 1
                quota[cat] = 1
    chosen: list[int] = []
    for cat, indices in by_category.items():
        ranked = sorted(indices, key=lambda i: hashlib.sha256(f"{seed}:{questions[i].uid}".encode()).digest())
        chosen.extend(ranked[: quota[cat]])
    return [questions[i] for i in sorted(chosen)]


def take_options(benchmark: str, options: BenchmarkOptions, allowed: Mapping[str, str]) -> dict[str, str]:
    """The ``-B`` options of ``benchmark``, refusing any it does not take (``allowed``: name -> help)."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = ", ".join(f"{name} ({text})" for name, text in allowed.items()) or "none"
        raise JuristError(f"-B {unknown[0]}: {benchmark} has no such option (it takes: {takes})")
    return dict(options)


@dataclass(frozen=True)
class RubricSuite:
    """What a rubric benchmark's scores look like, declared by the benchmark's module and looked up by the
    suite name its run.json records (``bench_info["suite"]``), so that no scorer, table or page asks which
    benchmark it is: how an answer's graded items make its score, which row field is the headline, the
    scale, and the words around it."""

    name: str
    """The suite as run.json's ``bench_info`` and the point records name it."""
    grading: Literal["points", "criteria"]
    """``points``: an answer scores Σ points of its met items / Σ positive points (HealthBench);
    ``criteria``: each criterion is scored 1-10 and the run's figure is their micro average (WritingBench)."""
    headline_field: str
    """The leaderboard row's field the rows are ranked on."""
    shown_field: str
    """The field ``--tasks`` and a sweep show, and the factor from the row's interval to it."""
    shown_factor: float
    scale: tuple[float, float]
    """The range of an answer's score and of the headline (0-1, or 1-10)."""
    headline: str
    """What the headline is, in words (``{variant}``: the run's variant)."""
    title: str
    """The browser summary's title (``{variant}`` as in :attr:`headline`)."""
    paired_units: str
    """What a paired difference between two runs is reported in, and the factor from an answer's score."""
    paired_scale: float
    variants: tuple[str, ...] = ()
    """The variants the suite is scored in (the first is the default; empty: one way only)."""
    unclipped_variants: tuple[str, ...] = ()
    """Variants whose means are not clipped to the scale (eval_framework's HealthBench)."""
    board_label: str = "score (0-1)"
    """The browser summary's heading of the headline column."""
    breakdowns: tuple[tuple[str, str, str], ...] = ()
    """The leaderboard row's breakdowns the browser summary shows under it: (row field, what one entry
    is, heading)."""

    @property
    def fraction(self) -> bool:
        """Whether the figures shown are fractions (three digits) rather than percents or 1-10 scores."""
        return self.scale == (0.0, 1.0) and self.shown_factor == 1.0

    def variant(self, given: str | None) -> str | None:
        """The variant a run is scored in: the one given, else the suite's default."""
        return given or (self.variants[0] if self.variants else None)

    def worded(self, text: str, variant: str | None) -> str:
        return text.format(variant=self.variant(variant) or "")


RUBRIC_SUITE_HOMES: dict[str, str] = {
    "healthbench": "jurist.benchmarks.healthbench",
    "writingbench": "jurist.benchmarks.writingbench",
}
"""Suite name -> the module whose ``RUBRIC_SUITE`` declares it (imported on first use)."""
_RUBRIC_SUITES: dict[str, RubricSuite] = {}


def register_rubric_suite(suite: RubricSuite) -> None:
    """Declare a rubric suite (a plugin benchmark's) under its name."""
    _RUBRIC_SUITES[suite.name] = suite


def rubric_suite(name: object) -> RubricSuite | None:
    """The rubric suite called ``name``; None for a name no module declares (a registered grader's own)."""
    key = str(name or "")
    if key not in _RUBRIC_SUITES and key in RUBRIC_SUITE_HOMES:
        import importlib

        register_rubric_suite(importlib.import_module(RUBRIC_SUITE_HOMES[key]).RUBRIC_SUITE)
    return _RUBRIC_SUITES.get(key)
