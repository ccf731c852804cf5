"""From the stored judgments of a run to what it reports: outcomes on disk, then each metric's rows.

Outcomes (``battles.jsonl``) are rewritten whole from the judgments that belong to the current answers
and prompts, so stale judgments never count. Scoring then goes through the same layer as ``jurist show``
(:mod:`jurist.scoring`), so every ``show`` method is available at the end of ``run``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console

from jurist.benchmarks.base import Benchmark
from jurist.judging.base import JudgeItem, JudgeKind
from jurist.judging.pairwise import battles_from_judgment
from jurist.run.config import RunConfig
from jurist.store.jsonl import iter_numbered_jsonl, rewrite_jsonl_atomic, write_json_atomic
from jurist.store.line_index import AnswerIndex
from jurist.store.records import judgment_kind, sample_of, text_hash
from jurist.store.run_dir import RunDir

if TYPE_CHECKING:
    from jurist.scoring.options import Scored

Judged = tuple[JudgeItem, dict[str, Any]]


@dataclass(frozen=True)
class RunView:
    """What scoring needs to know about a run (a narrow view of the pipeline, so no import cycle)."""

    bench: Benchmark
    config: RunConfig
    run_dir: RunDir
    judges: Sequence[str]
    candidates: Sequence[str]
    baselines: Sequence[str]
    kinds: dict[str, JudgeKind]


@dataclass
class OutcomeCounts:
    """What writing the outcomes saw: how many battles, invalid verdicts per (judge, model), and which
    (judge, model) pairs have any battle at all (the battles themselves went to disk, not to memory)."""

    battles: int = 0
    invalid: Counter[tuple[str, str]] = field(default_factory=Counter)
    sides: set[tuple[str, str]] = field(default_factory=set)

    def add(self, battle: Mapping[str, Any]) -> Mapping[str, Any]:
        self.battles += 1
        judge = str(battle.get("judge", ""))
        self.sides.add((judge, str(battle["model_a"])))
        self.sides.add((judge, str(battle["model_b"])))
        return battle


def write_outcomes(
    run: RunView, judged: Iterable[Judged], earlier: Iterable[dict[str, Any]]
) -> OutcomeCounts:
    """battles.jsonl from the current judgments and valid earlier ones (replaced atomically), streamed:
    each judgment's battles are written as it is read."""
    counts = OutcomeCounts()

    def battles() -> Iterator[Mapping[str, Any]]:
        for item, record in judged:
            if record.get("invalid"):
                counts.invalid[(item.judge, item.model)] += 1
            yield from map(counts.add, run.kinds[item.judge].outcomes(record))
        for record in earlier:
            if record.get("invalid"):
                counts.invalid[(record["judge"], record["model"])] += 1
            yield from map(counts.add, battles_from_judgment(record, strong_weight=run.config.strong_weight))

    rewrite_jsonl_atomic(run.run_dir.battles, battles())
    return counts


@dataclass(frozen=True)
class WinRateReport:
    """What the end of a win-rate run prints besides its rows (leaderboard.json): kept by
    :mod:`jurist.run.score_memo` so that a re-run with nothing new prints it again without rescoring."""

    title: str
    ci_level: float
    sanity: list[dict[str, Any]]
    warnings: list[str]
    notes: list[str]
    unscored: list[str]

    def print(self, console: Console, rows: list[dict[str, Any]]) -> None:
        from jurist.report.formats import print_scored
        from jurist.scoring.options import Scored

        settings = {"ci_level": self.ci_level}
        scored = Scored(rows, self.notes, settings, [], self.sanity, self.warnings)
        print_scored(console, scored, title=self.title)
        for line in self.unscored:
            console.print(line, style="bold yellow", markup=False, highlight=False)


@dataclass(frozen=True)
class Outcome:
    """The headline rows, and whether anything could be scored at all (else the run exits non-zero);
    ``report``: the rest of what was printed, for a win-rate run."""

    rows: list[dict[str, Any]]
    scored: bool
    report: WinRateReport | None = None


def score_outcomes(
    run: RunView, judged: Iterable[Judged], console: Console, answers: Mapping[str, AnswerIndex] | None = None
) -> Outcome:
    """Write outcomes, score every metric of the benchmark, print the tables. ``judged`` is streamed
    once (JudgeBench's few hundred pairs are the exception: its accuracy reads them again); ``answers``:
    the run's answer indexes (:func:`jurist.scoring.score_run`)."""
    if "judge-accuracy" in run.bench.metrics:
        pairs = list(judged)
        write_outcomes(run, pairs, [])
        rows = _judge_accuracy(run, pairs, console)
        return Outcome(rows, scored=bool(pairs))
    earlier, notes = earlier_judgments(run)
    counts = write_outcomes(run, judged, earlier)
    baselines = list(dict.fromkeys([*run.baselines, *(str(r["baseline"]) for r in earlier)]))
    if not counts.battles:
        from jurist.report.formats import print_notes

        rows = _no_battles(run, counts, baselines, console)
        print_notes(console, notes)
        _print_unscored(console, _unscored(counts))
        return Outcome(rows, scored=False)
    scored = _win_rates(run, counts, baselines, answers)
    report = WinRateReport(
        f"jurist: {run.bench.name}",
        float(scored.settings["ci_level"]),
        scored.sanity,
        scored.warnings,
        [*scored.notes, *notes],
        _unscored(counts),
    )
    report.print(console, scored.rows)
    return Outcome(scored.rows, scored=True, report=report)


def _unscored(counts: OutcomeCounts) -> list[str]:
    """A loud line for each (judge, model) whose every verdict was unreadable: its row has no score."""
    return [
        f"warning: none of the {n} verdict(s) of judge {judge} on {model} could be read, so {model} has "
        "no score from it; see its judgments' raw text, then try --judge-protocol structured or "
        "--rejudge-invalid"
        for (judge, model), n in sorted(counts.invalid.items())
        if (judge, model) not in counts.sides
    ]


def _print_unscored(console: Console, lines: list[str]) -> None:
    for line in lines:
        console.print(line, style="bold yellow", markup=False, highlight=False)


def _no_battles(
    run: RunView, counts: OutcomeCounts, baselines: list[str], console: Console
) -> list[dict[str, Any]]:
    """Every verdict invalid (or nothing judged): rows that say so, not an error."""
    from jurist.report.formats import render_table
    from jurist.scoring import ratings_document, win_rate_leaderboard

    config = run.config
    invalid = counts.invalid
    rows = win_rate_leaderboard(
        [], set(baselines), invalid=dict(invalid), n_bootstrap=config.n_bootstrap, seed=config.seed
    )
    for judge in sorted({judge for judge, _ in invalid} or {""}):  # the baseline keeps its row
        for name in baselines:
            rows.append(
                {"model": name, "judge": judge, "score": 50.0, "ci_low": 50.0, "ci_high": 50.0}
                | {"n": 0, "invalid": 0, "baseline": True}
            )
    write_json_atomic(run.run_dir.leaderboard, rows)
    document = ratings_document(
        rows,
        method=config.method,
        seed=config.seed,
        n_bootstrap=config.n_bootstrap,
        ci_level=config.ci_level,
        battles=[],
    )
    write_json_atomic(run.run_dir.root / "ratings.json", document)
    console.print(render_table(rows, title=f"jurist: {run.bench.name}", ci_level=config.ci_level))
    return rows


def _win_rates(
    run: RunView,
    counts: OutcomeCounts,
    baselines: list[str],
    answers: Mapping[str, AnswerIndex] | None = None,
) -> Scored:
    """Score the battles just written as the run's options (or the benchmark's official scoring) say;
    ratings.json and leaderboard.json written."""
    from jurist.scoring import ScoreOptions, score_run, write_outputs

    config = run.config
    invalid = counts.invalid
    official = run.bench.official_scoring
    chosen = bool(config.style_control) or config.length_controlled or config.method != "winrate"
    options = ScoreOptions(
        method=config.method,  # type: ignore[arg-type]
        style_control=tuple(config.style_control) if chosen else official.style_control,
        style_categories=() if chosen else official.style_categories,
        categories=tuple(config.categories) or tuple(run.bench.score_categories),
        length_controlled=config.length_controlled or (not chosen and official.length_controlled),
        ensemble=config.ensemble,
        baselines=tuple(baselines),
        n_bootstrap=config.n_bootstrap,
        seed=config.seed,
        ci_level=config.ci_level,
    )
    by_row = {(judge, model, "*"): n for (judge, model), n in invalid.items()}
    scored = score_run(run.run_dir.root, options, invalid=by_row, answers=answers)
    write_outputs(run.run_dir.root, scored)
    return scored


def _judge_accuracy(run: RunView, judged: list[Judged], console: Console) -> list[dict[str, Any]]:
    """Judge accuracy with JudgeBench's two-game rule; a pair with no stored judgment has no decisions."""
    from jurist.benchmarks.judgebench import pair_of
    from jurist.benchmarks.judgebench_scoring import score_decisions, score_row
    from jurist.report.formats import judgebench_table

    pairs = [pair_of(q) for q in run.bench.questions]
    stored = {(item.judge, item.question.uid): record for item, record in judged if item.sample == 0}
    rows = []
    for judge in run.judges:
        decisions: dict[str, tuple[str | None, ...]] = {}
        for pair in pairs:
            record = stored.get((judge, pair.pair_id))
            games = record["games"] if record else [{"label": None}, {"label": None}]
            decisions[pair.pair_id] = tuple(game["label"] for game in games)
        rows.append(score_row(score_decisions(pairs, decisions, judge=judge)))
    write_json_atomic(run.run_dir.root / "judgebench.json", rows)
    title = f"JudgeBench ({run.bench.info.get('split', run.bench.name)}, {len(pairs)} pairs)"
    console.print(judgebench_table(rows, title=title))
    return rows


def earlier_judgments(run: RunView) -> tuple[list[dict[str, Any]], list[str]]:
    """Valid pairwise judgments in the run directory for (judge, model) pairs this run did not cover.

    A run with fewer --model/--judge than an earlier one in the same directory still scores everything
    valid there: a judgment counts when the answers it judged are the ones on disk now (its answer hashes
    match); the last such judgment per (uid, sample) wins. Returns the records and notes saying what was
    added.
    """
    covered = {run.run_dir.judgments(j, m) for j in run.judges for m in run.candidates}
    root = run.run_dir.root / "judgments"
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    answers: dict[str, dict[tuple[str, int], Any]] = {}
    for path in sorted(root.glob("*/*.jsonl")) if root.is_dir() else []:
        if path in covered:
            continue
        latest: dict[tuple[str, int], dict[str, Any]] = {}
        for _, record in iter_numbered_jsonl(path, repair=False):
            if judgment_kind(record) == "pairwise" and _still_current(run, record, answers):
                latest[(str(record["uid"]), sample_of(record))] = record
        if latest:
            first = next(iter(latest.values()))
            records.extend(latest.values())
            notes.append(
                f"also scored: {len(latest)} judgment(s) of {first['judge']} on {first['model']} from an "
                "earlier run in this directory"
            )
    return records, notes


def _still_current(
    run: RunView, record: dict[str, Any], answers: dict[str, dict[tuple[str, int], Any]]
) -> bool:
    """Whether ``record`` judged the answers now on disk (model and baseline, by hash)."""
    try:
        model, baseline, uid = str(record["model"]), str(record["baseline"]), str(record["uid"])
    except KeyError:
        return False
    for alias, hashed, sample in ((model, "answer_hash", sample_of(record)), (baseline, "baseline_hash", 0)):
        if alias not in answers:
            answers[alias] = (
                dict(run.run_dir.load_answers(alias)) if run.run_dir.answers(alias).exists() else {}
            )
        answer = answers[alias].get((uid, sample))
        if answer is None or text_hash(answer["answer"]) != record.get(hashed):
            return False
    return True
