"""The re-judging of a replacement study: a seeded, stratified sample of the panel's decisions judged by
the candidate with the benchmark's own protocol, as one ordinary jurist run.

The study is a run of the benchmark whose candidates are the panel's models with their published answers
shipped, limited to a stratified sample of questions (``--items``, per category, seeded), judged by
``--judge`` against the benchmark's own baseline with the benchmark's own judge kind and prompt. So it has
what every run has: the engine's limits, retries and cache, the ledger, ``--max-cost``, ``--batch``,
``--dry-run``, and resumption (the run directory is ``DIR/run``: a second call sends only what is
missing). Its judgments are then read back as per-item scores from the model's side.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.benchmarks import Benchmark, load_benchmark
from jurist.config import ModelStringOptions
from jurist.errors import JuristError
from jurist.replace.panel import Panel
from jurist.run import (
    BatchChoice,
    BudgetSettings,
    EngineSettings,
    JudgeCardSettings,
    RunConfig,
    ScoringSettings,
)

RUN_FOLDER = "run"
"""The study's run directory inside ``--out``."""


@dataclass(frozen=True)
class StudyRequest:
    """What ``jurist judges replace`` was asked."""

    bench: str
    judge: str
    out: Path
    models: tuple[str, ...] = ()
    """Panel models to keep: names, or one number N (N models spread over the published scores)."""
    items: int | None = None
    """Questions to sample (stratified by category, seeded); None: every question."""
    seed: int = 0
    models_file: Path | None = None
    model_strings: ModelStringOptions = field(default_factory=ModelStringOptions)
    judge_prompt: Path | None = None
    batching: BatchChoice = field(default_factory=BatchChoice)
    prices_file: Path | None = None
    max_cost: float | None = None
    check: bool = True
    progress: bool = True
    n_bootstrap: int = 1000


def choose_models(panel: Panel, wanted: Sequence[str]) -> tuple[str, ...]:
    """The panel models ``wanted`` names (all when empty); one number N keeps N models spread evenly over
    the published scores, the best and the worst included."""
    models = panel.models
    if not wanted:
        return models
    if len(wanted) == 1 and wanted[0].isdigit():
        n = int(wanted[0])
        if n < 3:
            raise JuristError(f"--models {n}: a map and a rank correlation need at least 3 models")
        ranked = sorted(models, key=lambda m: -panel.published[m])
        if n >= len(ranked):
            return tuple(sorted(ranked))
        picks = {round(i * (len(ranked) - 1) / (n - 1)) for i in range(n)}
        return tuple(sorted(ranked[i] for i in picks))
    unknown = [m for m in wanted if m not in panel.answers]
    if unknown:
        raise JuristError(f"--models: {unknown[0]!r} is not in the panel ({', '.join(models)})")
    if len(set(wanted)) < 3:
        raise JuristError("--models: a map and a rank correlation need at least 3 models")
    return tuple(sorted(set(wanted)))


def study_benchmark(panel: Panel, models: Sequence[str], items: int | None, seed: int) -> Benchmark:
    """The benchmark limited to the sample, the panel's ``models`` as its candidates with their published
    answers shipped (only where the panel holds an answer: a missing one is not judged)."""
    bench = load_benchmark(panel.bench, panel.bench_options)
    answered = [q for q in bench.questions if any(q.uid in panel.answers[m] for m in models)]
    if not answered:
        raise JuristError(f"the panel's answers name no question of {panel.bench}")
    bench = dataclasses.replace(bench, questions=answered).limited(items, "stratified", seed)
    kept = {q.uid for q in bench.questions}
    shipped: dict[str, Mapping[str, str]] = dict(bench.shipped_answers)
    for model in models:
        shipped[model] = {uid: text for uid, text in panel.answers[model].items() if uid in kept}
    info: dict[str, Any] = {
        **bench.info,
        "replacement_panel": {"source": panel.source, "models": list(models), "seed": seed},
    }
    return dataclasses.replace(bench, shipped_answers=shipped, candidates=tuple(models), info=info)


def study_config(request: StudyRequest, bench_options: Mapping[str, str]) -> RunConfig:
    """The run of the study: the candidate judge, no judge card (the study is the card), quiet scoring;
    ``bench_options``: the panel's (:attr:`Panel.bench_options`)."""
    return RunConfig(
        bench=request.bench,
        bench_options=dict(bench_options),
        models_file=request.models_file,
        judges=[request.judge],
        model_strings=request.model_strings,
        out=request.out / RUN_FOLDER,
        judge_prompt=request.judge_prompt,
        scoring=ScoringSettings(n_bootstrap=0),
        engine=EngineSettings(progress=request.progress, check=request.check),
        budget=BudgetSettings(prices_file=request.prices_file, max_cost=request.max_cost),
        batching=request.batching,
        card=JudgeCardSettings(items=0),
    )


def run_study(request: StudyRequest, panel: Panel, bench: Benchmark, console: Console) -> int:
    """Judge the sample (resuming whatever the run directory holds); the run's exit code. The run's own
    leaderboard table is not printed: the study prints its own."""
    from jurist.engine import RequestFailed
    from jurist.redact import mask
    from jurist.run import resolve, run_plan

    config = study_config(request, panel.bench_options)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            result = run_plan(resolve(config, loaded=bench), console)
    except RequestFailed as exc:  # pragma: no cover - every stage catches these per item
        raise JuristError(mask(str(exc))) from None
    return result.exit_code


def dry_study(request: StudyRequest, panel: Panel, bench: Benchmark, console: Console) -> int:
    """``--dry-run``: the study's requests, tokens and dollars (nothing sent, nothing written)."""
    from jurist.run import dry_run

    return dry_run(study_config(request, panel.bench_options), console, loaded=bench)


def candidate_scores(run_root: Path, judge: str) -> dict[str, dict[str, float]]:
    """model -> uid -> the candidate's score from the model's side, from the run's battles (weights kept:
    a strong verdict counts as the judge kind weighs it; AlpacaEval's soft preference as its two shares)."""
    from jurist.families import load_battles
    from jurist.store import RunDir

    battles, _ = load_battles(RunDir(run_root))
    sums: dict[tuple[str, str], list[float]] = {}
    share = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}
    for battle in battles:
        if battle.get("judge") not in (None, judge) or battle.get("winner") not in share:
            continue
        a, b, p_a = str(battle["model_a"]), str(battle["model_b"]), share[str(battle["winner"])]
        weight = float(battle.get("weight", 1))
        for model, p in ((a, p_a), (b, 1.0 - p_a)):
            entry = sums.setdefault((model, str(battle["uid"])), [0.0, 0.0])
            entry[0] += weight * p
            entry[1] += weight
    out: dict[str, dict[str, float]] = {}
    for (model, uid), (won, total) in sums.items():
        if total > 0:
            out.setdefault(model, {})[uid] = won / total
    return out
