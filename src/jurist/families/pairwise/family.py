"""The pairwise family: battles scored against the baseline(s) as win rates, Bradley-Terry, style control
or AlpacaEval's LC win rate (:mod:`jurist.families.pairwise.run`), with the benchmark's official scoring
by default.

What "as the run scored" means for a pairwise run: the method run.json's ``scoring`` records (``--method``,
``--style-control``, ``--length-controlled``, ``--category``, ``--ensemble``), or, when the run chose none,
the benchmark's own (``scoring.official``: Arena-Hard v2.0 style-controls its hard prompts, each category
against its own baseline; AlpacaEval 2.0 reports the length-controlled win rate). Runs written before
run.json recorded ``official`` take it from the benchmark facts in ``bench_info``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from jurist.errors import JuristError
from jurist.families.door import (
    FinishedRun,
    Headline,
    InvalidCounts,
    RecordedRun,
    RunEnd,
    ScoreRequest,
    Scores,
    SummaryBoard,
)
from jurist.families.pairwise.options import Scored, ScoreOptions
from jurist.families.registry import FamilyName
from jurist.ratings import ALL, Battle, Row

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.paired import PairedCells
    from jurist.families.reward import AnswerReward, RewardOptions
    from jurist.judging import JudgeKind

METHOD_NAMES = {
    "winrate": "weighted win rate",
    "bt": "Bradley-Terry (Elo scale)",
    "style-control": "style-controlled win rate",
    "lc-winrate": "length-controlled win rate",
}


@dataclass(frozen=True)
class Official:
    """A benchmark's own scoring of a pairwise run (used unless a method is chosen)."""

    style_control: tuple[str, ...] = ()
    style_categories: tuple[str, ...] = ()
    length_controlled: bool = False
    categories: tuple[str, ...] = ()


def official_scoring(run: RecordedRun, battles: list[Battle]) -> Official:
    """run.json's ``scoring.official``; for a run written before it was recorded, the benchmark facts in
    ``bench_info``: Arena-Hard by name (its style features, each category of the battles alone), AlpacaEval
    (its LC facts)."""
    recorded = run.scoring.get("official")
    if isinstance(recorded, Mapping):
        return Official(
            tuple(recorded.get("style_control") or ()),
            tuple(recorded.get("style_categories") or ()),
            bool(recorded.get("length_controlled")),
            tuple(recorded.get("categories") or ()),
        )
    info = run.bench_info
    named = info.get("official_scoring")
    if not isinstance(named, Mapping):
        return Official(length_controlled=isinstance(info.get("lc"), Mapping))
    categories = tuple(dict.fromkeys(str(b.get("category", "default")) for b in battles))
    return Official(
        tuple(named.get("style_control") or ()),
        tuple(named.get("style_categories") or ()),
        categories=categories if len(categories) > 1 else (),
    )


def score_options(
    run: RecordedRun, request: ScoreRequest, end: RunEnd | None, battles: list[Battle]
) -> ScoreOptions:
    """The options a score uses: the request's where given, else the run's (module docstring)."""
    scoring = run.scoring
    official = official_scoring(run, battles)
    style_categories: tuple[str, ...] = ()
    if request.chooses_method():
        method = request.method or "winrate"
        style, lc = request.style_control or (), bool(request.length_controlled)
    else:
        recorded = scoring.get("method")
        method = recorded if recorded in ("winrate", "bt") else "winrate"
        style, lc = tuple(scoring.get("style_control") or ()), bool(scoring.get("length_controlled"))
        if not (style or lc or method != "winrate"):
            style, style_categories = official.style_control, official.style_categories
            lc = official.length_controlled
    if request.categories is not None:
        categories = request.categories
    else:
        categories = tuple(scoring.get("categories") or ()) or official.categories
    n_bootstrap, seed, ci_level = run.bootstrap(request)
    return ScoreOptions(
        method=method,
        style_control=style,
        style_categories=style_categories,
        categories=categories,
        baselines=request.baselines or (end.baselines if end else ()) or _scored_baselines(run),
        judges=request.judges,
        ensemble=request.ensemble if request.ensemble is not None else bool(scoring.get("ensemble")),
        length_controlled=lc,
        instruction_difficulty=request.instruction_difficulty,
        n_bootstrap=n_bootstrap,
        seed=seed,
        ci_level=ci_level,
        resample=request.resample or "questions",
    )


def _scored_baselines(run: RecordedRun) -> tuple[str, ...]:
    """The baselines the run's last scoring used (ratings.json: a run scores the baselines of earlier
    runs' judgments in its directory too); empty: run.json's, else inferred (:func:`resolve_baselines`)."""
    from jurist.families.pairwise.battles import read_json

    ratings = read_json(run.root / "ratings.json") if run.root.is_dir() else None
    listed = ratings.get("baselines") if isinstance(ratings, dict) else None
    return tuple(str(name) for name in listed) if isinstance(listed, list) else ()


def headline(settings: Mapping[str, Any]) -> str:
    """What the score column is, in words."""
    text = METHOD_NAMES.get(str(settings.get("method")), str(settings.get("method")))
    if settings.get("lc_difficulty") == "estimated":
        text = "win rate; LC only estimated (not AlpacaEval's official difficulty)"
    if settings.get("style_categories"):
        text += f" on {', '.join(settings['style_categories'])} (weighted win rate elsewhere)"
    if settings.get("categories"):
        text += ", each category against its own baseline"
    if settings.get("ensemble"):
        text += ", the judges pooled"
    return text


def hard_preference_notes(battles: list[dict[str, Any]]) -> list[str]:
    """A line per judge whose AlpacaEval preferences were read from the reply's text (its server gave no
    logprobs): hard 1/0 preferences where the reference weighs a probability, so its rows are not
    AlpacaEval's numbers."""
    games: dict[str, set[tuple[Any, ...]]] = {}
    for battle in battles:
        if battle.get("verdict_source") == "text":
            key = (battle.get("model_b"), battle.get("uid"), battle.get("sample"))
            games.setdefault(str(battle.get("judge")), set()).add(key)
    return [
        f"judge {judge}: {len(found):,} preference(s) read from the reply's text, not its logprobs (the "
        "server returned none): hard 1/0 preferences where AlpacaEval weighs a probability"
        for judge, found in sorted(games.items())
    ]


class PairwiseFamily:
    """Battles against the baseline(s); ratings.json and leaderboard.json."""

    name: ClassVar[FamilyName] = "pairwise"

    def reward(self, kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
        """``jurist serve reward``'s reward of one answer: two swapped games, or AlpacaEval's preference."""
        from jurist.families.pairwise.reward import pairwise_reward

        return pairwise_reward(kind, options)

    scoring_modules: ClassVar[tuple[str, ...]] = (
        "numpy", "numpy.random", "numpy.ma", "statistics", "jurist.ratings.winrate",
        "jurist.ratings.replacement", "jurist.families.pairwise.outcomes", "jurist.families.pairwise.anchor",
        "jurist.families.pairwise.run", "jurist.families.pairwise.show",
    )  # fmt: skip
    """What scoring a run imports (the family's door imports them where used)."""
    warnings_in_table: ClassVar[bool] = True
    """Its warnings (AlpacaEval's estimated LC) are part of its table, printed by run and show alike."""

    def outcomes(self, run: FinishedRun) -> RunEnd:
        from jurist.families.pairwise.outcomes import earlier_judgments, write_outcomes

        earlier, notes = earlier_judgments(run)
        counts = write_outcomes(run, run.judged(), earlier)
        baselines = tuple(dict.fromkeys([*run.baselines, *(str(r["baseline"]) for r in earlier)]))
        return RunEnd(counts.battles, counts.by_row(), baselines, run.answers, notes=notes)

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        from jurist.families.pairwise.battles import (
            invalid_counts,
            load_battles,
            name_null_judges,
            read_battles_file,
        )
        from jurist.families.pairwise.run import check_options, score_battles
        from jurist.store import RunDir

        one_file = run.root.is_file()  # a battles file alone (jurist's schema), scored where it lies
        directory = RunDir(run.root.parent if one_file else run.root)
        if not (one_file or run.root.is_dir()):
            raise JuristError(f"{run.root}: no such run directory")
        opts = score_options(run, request, end, [])
        check_options(opts)  # before reading: a bad combination is said at once
        if one_file:
            battles, source = name_null_judges(read_battles_file(run.root)), "battles.jsonl"
        else:
            battles, source = load_battles(directory)
        invalid = end.invalid if end is not None and end.invalid is not None else None
        invalid = invalid_counts(directory, run.fields) if invalid is None else invalid
        opts = score_options(run, request, end, battles)
        if battles:
            scored = score_battles(
                directory,
                battles,
                source,
                opts,
                run.fields,
                invalid=invalid,
                answers=end.answers if end else None,
            )
        elif end is not None or source == "battles.jsonl":  # judged, and every verdict unreadable (or none)
            scored = _no_battles(run, opts, invalid)
        else:
            raise JuristError(f"{run.root}: the run has no battles to score (from {source})")
        scored.notes.extend(end.notes if end else ())
        scored.notes.extend(hard_preference_notes(battles))
        scores = Scores(
            self.name,
            scored.rows,
            headline(scored.settings),
            f"jurist: {run.name}",
            scored.settings,
            scored.notes,
            [*scored.warnings, *_unscored(battles, invalid, opts.judges, run.fields.get("judge_kind"))],
            detail=scored,
            scored=bool(battles),
        )
        if scores.scored:  # re-anchored onto the published scale, or labelled not comparable
            from jurist.families.pairwise.anchor import anchor_scores

            anchor_scores(scores, run.fields, run.name, request.anchor)
        return scores

    def documents(self, scores: Scores) -> dict[str, Any]:
        from jurist.families.pairwise.run import ratings_file

        return {"ratings.json": ratings_file(scores.detail), "leaderboard.json": scores.rows}

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        from jurist.families.pairwise.show import print_pairwise

        print_pairwise(scores, fmt, title, out, err)

    def summary(self, rows: Sequence[Row], method: Any) -> SummaryBoard:
        from jurist.families.pairwise.show import summary_title

        return SummaryBoard(summary_title(rows, method), layout="pairwise")

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        from jurist.families.pairwise.show import row_headline

        return row_headline(row)

    def paired_cells(self, run: RecordedRun) -> PairedCells | None:
        from jurist.families.pairwise.paired import paired_cells

        return paired_cells(run)


def _no_battles(run: RecordedRun, opts: ScoreOptions, invalid: InvalidCounts) -> Scored:
    """Every verdict invalid (nothing to score): rows that say so, the baselines at 50, not an error."""
    from jurist.families.pairwise.run import _describe, _settings, resolve_baselines
    from jurist.families.pairwise.winrate import win_rate_leaderboard

    settings = _settings(opts, run.fields)
    baselines = list(opts.baselines) or resolve_baselines(opts, run.fields, [])
    totals = {(j, m): n for (j, m, category), n in invalid.items() if category == ALL and n}
    totals = {key: n for key, n in totals.items() if not opts.judges or key[0] in opts.judges}
    rows: list[Row] = win_rate_leaderboard([], set(baselines), invalid=totals, n_bootstrap=0)
    for judge in sorted({judge for judge, _ in totals} or {""}):
        for name in baselines:
            rows.append(
                {"model": name, "judge": judge, "score": 50.0, "ci_low": 50.0, "ci_high": 50.0}
                | {"n": 0, "invalid": 0, "baseline": True}
            )
    return Scored(rows, [], _describe(opts, settings, baselines), [])


def _unscored(
    battles: list[Battle], invalid: InvalidCounts, judges: tuple[str, ...], judge_kind: object = None
) -> list[str]:
    """A loud line for each (judge, model) whose every verdict was unreadable: it has no score. The remedy
    offered is one the run's judge kind takes (AlpacaEval's ``preference`` kind has its own protocol and
    refuses ``--judge-protocol``)."""
    sides = {(b.get("judge", ""), b[side]) for b in battles for side in ("model_a", "model_b")}
    remedy = (
        "--judge-protocol structured or --rejudge-invalid"
        if judge_kind in (None, "pairwise")
        else "--rejudge-invalid (or another judge)"
    )
    return [
        f"none of the {n} verdict(s) of judge {judge} on {model} could be read, so {model} has no score "
        f"from it; see its judgments' raw text, then try {remedy}"
        for (judge, model, category), n in sorted(invalid.items())
        if category == ALL and n and (judge, model) not in sides and (not judges or judge in judges)
    ]
