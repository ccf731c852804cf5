"""``jurist run``'s own option groups: how its requests are sent, what shapes its scores, what it may
spend, its batches and its judge card. Each turns its flags into the run's setting group
(:mod:`jurist.run.config`) in one method."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.commands.options import Ci, Ensemble, LengthControlled, RequestFlags, StyleControl, split_list
from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.run import BatchChoice, BudgetSettings, EngineSettings, JudgeCardSettings, ScoringSettings


@dataclasses.dataclass(frozen=True)
class EngineFlags:
    """How many requests at once and how often, and whether served models run in this process."""

    max_concurrency: Annotated[int, typer.Option(min=1, help="requests in flight, all models together")] = 64
    min_interval: Annotated[
        float, typer.Option(min=0.0, help="seconds between request starts, across all jurist processes")
    ] = 0.0
    throttle_file: Annotated[
        Path | None,
        typer.Option(help="state file shared by throttled processes [~/.cache/jurist/throttle.lock]"),
    ] = None
    cache_only: Annotated[
        bool,
        typer.Option(
            "--cache-only",
            help="send nothing: answer from the request cache as each server last identified itself "
            "(servers may be down); what it lacks fails, and a run without it sends that",
        ),
    ] = False
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="run served models in-process (llama.cpp Llama on CPU, vLLM on GPU) instead of "
            "starting servers",
        ),
    ] = False

    def settings(self, requests: RequestFlags) -> EngineSettings:
        from jurist.run import EngineSettings

        return EngineSettings(
            max_concurrency=self.max_concurrency,
            retry=requests.retry(),
            min_interval=self.min_interval,
            throttle_file=self.throttle_file,
            cache=not requests.no_cache,
            cache_path=requests.cache_dir,
            cache_only=self.cache_only,
            check=not requests.no_check,
            progress=not requests.no_progress,
            local=self.local,
        )


@dataclasses.dataclass(frozen=True)
class ScoringFlags:
    """What shapes the run's scores (``jurist show`` takes the same, defaulting to the run's)."""

    method: Annotated[str, typer.Option(help="scoring: winrate | bt (Bradley-Terry, Elo scale)")] = "winrate"
    style_control: StyleControl = None
    category: Annotated[
        list[str] | None,
        typer.Option("--category", help="score this category alone, against its own baseline (repeatable)"),
    ] = None
    length_controlled: LengthControlled = False
    ensemble: Ensemble = False
    bootstrap: Annotated[int, typer.Option(min=0, help="bootstrap rounds")] = 100
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0
    ci: Ci = 0.90

    def settings(self, anchor: Path | None) -> ScoringSettings:
        from jurist.run import ScoringSettings

        return ScoringSettings(
            method=self.method,
            style_control=tuple(split_list([self.style_control])) if self.style_control else (),
            categories=tuple(split_list(self.category)),
            length_controlled=self.length_controlled,
            ensemble=self.ensemble,
            n_bootstrap=self.bootstrap,
            seed=self.seed,
            ci_level=self.ci,
            anchor=anchor,
        )


@dataclasses.dataclass(frozen=True)
class BudgetFlags:
    """What the run directory may spend, and at which prices."""

    prices: Annotated[
        Path | None,
        typer.Option(
            help="YAML/JSON: alias or served model name -> {input, output, cached_input} USD per 1M"
        ),
    ] = None
    max_cost: Annotated[
        float | None,
        typer.Option(min=0.0, help="budget in USD for the run directory: stops before it could be exceeded"),
    ] = None
    max_tokens: Annotated[
        int | None,
        typer.Option(min=0, help="budget in tokens (prompt + completion, all models) for the run directory"),
    ] = None

    def settings(self) -> BudgetSettings:
        from jurist.run import BudgetSettings

        return BudgetSettings(prices_file=self.prices, max_cost=self.max_cost, max_tokens=self.max_tokens)


@dataclasses.dataclass(frozen=True)
class BatchFlags:
    """The providers' batch APIs (docs/batch.md)."""

    batch: Annotated[
        str,
        typer.Option(
            help="send requests through the providers' batch APIs, at ~half price: none | judges | all"
        ),
    ] = "none"
    batch_poll: Annotated[float, typer.Option(min=0.01, help="seconds between polls of a batch")] = 30.0
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="cut a batch at N requests (default: the provider's limit)")
    ] = None
    batch_age: Annotated[
        float, typer.Option(min=0.0, help="or once its oldest request has waited S seconds")
    ] = 30.0
    batch_attempts: Annotated[
        int, typer.Option(min=1, help="batches that may leave a request unanswered, over all runs of RUN")
    ] = 3
    batch_deadline: Annotated[
        float | None, typer.Option(min=0.0, help="past S seconds in batches, send a request synchronously")
    ] = None

    def choice(self) -> BatchChoice:
        from jurist.run import batch_choice

        return batch_choice(
            self.batch,
            self.batch_poll,
            self.batch_size,
            self.batch_age,
            self.batch_attempts,
            self.batch_deadline,
        )


@dataclasses.dataclass(frozen=True)
class JudgeCardFlags:
    """The judge card's probes (docs/judge-card.md)."""

    judge_card: Annotated[
        int | None,
        typer.Option(
            min=10, help="items per judge-card probe [50]; all probes stay within 10% of the judge requests"
        ),
    ] = None
    no_judge_card: Annotated[bool, typer.Option("--no-judge-card", help="skip the judge card's probes")] = (
        False
    )
    gold: Annotated[
        Path | None,
        typer.Option(help="human labels (JSONL, docs/judge-card.md): the card's gold agreement against them"),
    ] = None
    judge_gate: Annotated[
        bool,
        typer.Option("--judge-gate", help="exit 4 when a judge-card probe is flagged (after saving all)"),
    ] = False

    def settings(self) -> JudgeCardSettings:
        from jurist.run import JudgeCardSettings

        if self.no_judge_card and (self.judge_card is not None or self.judge_gate):
            given = "--judge-card" if self.judge_card is not None else "--judge-gate"
            raise JuristError(f"--no-judge-card excludes {given}")
        return JudgeCardSettings(0 if self.no_judge_card else self.judge_card, self.judge_gate, self.gold)
