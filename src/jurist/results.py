"""From the stored judgments of a run to what it reports: outcomes on disk, then each metric's rows.

Outcomes (``battles.jsonl``) are rewritten whole from the judgments that belong to the current answers
and prompts, so stale judgments never count. Scoring then goes through the same layer as ``jurist show``
(:mod:`jurist.scoring`), so every ``show`` method is available at the end of ``run``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from jurist.benchmarks.base import Benchmark
from jurist.judging.base import JudgeItem, JudgeKind
from jurist.run_config import RunConfig
from jurist.store.jsonl import JsonlAppender, write_json_atomic
from jurist.store.run_dir import RunDir

Judged = tuple[JudgeItem, dict[str, Any]]


@dataclass(frozen=True)
class RunView:
    """What scoring needs to know about a run (a narrow view of the pipeline, so no import cycle)."""

    bench: Benchmark
    config: RunConfig
    run_dir: RunDir
    judges: Sequence[str]
    baselines: Sequence[str]
    kinds: dict[str, JudgeKind]


def write_outcomes(
    run: RunView, judged: Iterable[Judged]
) -> tuple[list[dict[str, Any]], Counter[tuple[str, str]]]:
    """battles.jsonl from the current judgments (replaced atomically); invalid counts per (judge, model)."""
    battles: list[dict[str, Any]] = []
    invalid: Counter[tuple[str, str]] = Counter()
    for item, record in judged:
        if record.get("invalid"):
            invalid[(item.judge, item.model)] += 1
        battles.extend(run.kinds[item.judge].outcomes(record))
    tmp = run.run_dir.battles.with_suffix(".jsonl.tmp")
    tmp.unlink(missing_ok=True)
    with JsonlAppender(tmp) as out:
        for battle in battles:
            out.append(battle)
    tmp.replace(run.run_dir.battles)
    return battles, invalid


def score_outcomes(run: RunView, judged: list[Judged], console: Console) -> list[dict[str, Any]]:
    """Write outcomes, score every metric of the benchmark, print the tables; returns the headline rows."""
    battles, invalid = write_outcomes(run, judged)
    rows: list[dict[str, Any]] = []
    if "winrate" in run.bench.metrics:
        rows = _win_rates(run, battles, invalid, console)
    if "judge-accuracy" in run.bench.metrics:
        rows = _judge_accuracy(run, judged, console)
    return rows


def _win_rates(
    run: RunView, battles: list[dict[str, Any]], invalid: Counter[tuple[str, str]], console: Console
) -> list[dict[str, Any]]:
    from jurist.report.formats import print_scored, render_table
    from jurist.scoring import ScoreOptions, ratings_document, score_run, win_rate_leaderboard, write_outputs

    config = run.config
    if not battles:  # every verdict invalid (or nothing judged): rows that say so, not an error
        rows = win_rate_leaderboard(
            [], set(run.baselines), invalid=dict(invalid), n_bootstrap=config.n_bootstrap, seed=config.seed
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
    options = ScoreOptions(
        method=config.method,  # type: ignore[arg-type]
        style_control=tuple(config.style_control),
        categories=tuple(config.categories),
        length_controlled=config.length_controlled,
        ensemble=config.ensemble,
        baselines=tuple(run.baselines),
        n_bootstrap=config.n_bootstrap,
        seed=config.seed,
        ci_level=config.ci_level,
    )
    counts = {(judge, model, "*"): n for (judge, model), n in invalid.items()}
    scored = score_run(run.run_dir.root, options, invalid=counts)
    write_outputs(run.run_dir.root, scored)
    print_scored(console, scored, title=f"jurist: {run.bench.name}")
    return scored.rows


def _judge_accuracy(run: RunView, judged: list[Judged], console: Console) -> list[dict[str, Any]]:
    """Judge accuracy with JudgeBench's two-game rule; a pair with no stored judgment has no decisions."""
    from jurist.benchmarks.judgebench import pair_of
    from jurist.benchmarks.judgebench_scoring import (
        judgebench_table,
        score_decisions,
        score_row,
        table_console,
    )

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
    table_console().print(judgebench_table(rows, title=title))
    return rows
