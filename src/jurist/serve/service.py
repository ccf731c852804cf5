"""The reward service: one benchmark's protocol, exactly as ``jurist run`` judges it, one answer at a time.

The benchmark, its judge, the judge's kind (prompts, reader, re-ask), its sampling and the engine's limits,
retries, request cache, ledger and budget all come from the same :func:`jurist.run.resolve` a run starts
from, so a reward request for a (question, answer) that a run judged sends the same request bytes: the
request cache answers it, with no new judge request and the same verdicts. The service adds only what a
trainer needs around that: items that name a benchmark question by uid (or bring their own question and
baseline answer), the family's reward (:func:`jurist.families.family_reward`, written once in the family's
own place) and what each item cost.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
import uuid
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.benchmarks import Question
from jurist.engine import BudgetExhausted, Engine, RequestFailed, RetryPolicy, make_throttle, open_cache
from jurist.errors import JuristError
from jurist.families import AnswerReward, RewardOptions, RewardRule, family_reward
from jurist.judging import JudgeItem, PartialJudgment
from jurist.redact import mask
from jurist.run import BudgetSettings, EngineSettings, RunConfig, RunLedger, RunPlan, resolve, resolve_budget
from jurist.serve.rule_checks import RuleChecks, RuleJob, usable_cores
from jurist.store import RunDirLock

CANDIDATE = "policy"
"""The alias a reward item's answer is judged under (it enters no prompt, only the judgment record)."""
GIVEN_BASELINE = "given-baseline"
"""The baseline alias of an item that brings its own ``baseline_answer``."""
BUDGET_REFUSED, JUDGE_FAILED = "budget", "judge_failed"
"""An item's ``error_kind``: the budget refused its judge request, or the request failed after retries."""


class BadItem(ValueError):
    """An item the service cannot judge (unknown uid, no baseline answer...): a 4xx, one line."""


@dataclass(frozen=True)
class ServeSettings:
    """What ``jurist serve reward`` was asked: the run options that shape judging, and the reward's."""

    bench: str
    judge: str | None = None
    models_file: Path | None = None
    bench_options: Mapping[str, str] = field(default_factory=dict)
    baseline: str | None = None
    judge_protocol: str | None = None
    judge_prompt: Path | None = None
    reward: RewardRule = "debiased"
    loose: bool = False
    invalid_reward: float = 0.0
    """The reward an invalid judgment gets where a trainer's shape needs a number (flagged beside it)."""
    out: Path | None = None
    cache: bool = True
    cache_path: Path | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    prices_file: Path | None = None
    max_concurrency: int = 64
    min_interval: float = 0.0
    rule_workers: int | None = None
    """Processes checking rule rewards (1: in the server's own; None: :func:`usable_cores`, for a
    benchmark checked by rules; refused on a judged one)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def run_config(self) -> RunConfig:
        """The ``jurist run`` these settings judge like (its budget is the service's own: see build)."""
        return RunConfig(
            bench=self.bench,
            bench_options=dict(self.bench_options),
            models_file=self.models_file,
            judges=[self.judge] if self.judge else [],
            baseline=self.baseline,
            judge_protocol=self.judge_protocol,
            judge_prompt=self.judge_prompt,
            out=self.out or Path("runs") / f"serve-reward-{Path(self.bench).stem}",
            engine=EngineSettings(
                max_concurrency=self.max_concurrency,
                retry=self.retry,
                min_interval=self.min_interval,
                cache=self.cache,
                cache_path=self.cache_path,
                progress=False,
                check=False,
            ),
            budget=BudgetSettings(prices_file=self.prices_file),
        )


@dataclass(frozen=True)
class RewardItem:
    """One answer to reward: a benchmark question by ``uid`` (else by its ``question`` text, or a question
    of its own), with an optional ``baseline_answer`` in place of the benchmark's baseline."""

    answer: str
    uid: str | None = None
    question: str | None = None
    category: str | None = None
    baseline_answer: str | None = None
    sample: int = 0
    step: int | None = None
    instructions: tuple[tuple[str, ...], tuple[dict[str, Any], ...]] | None = None
    """A rules item's own (instruction ids, kwargs), for a prompt that is no benchmark question."""


@dataclass
class ItemCost:
    """What one item's judge requests cost, from the ledger rows they settled (cache hits included)."""

    requests: int = 0
    cache_hits: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    def add(self, row: Mapping[str, Any]) -> None:
        self.requests += int(row.get("requests") or 0)
        self.cache_hits += int(row.get("cache_hits") or 0)
        self.failed += int(row.get("failed") or 0)
        self.prompt_tokens += int(row.get("prompt_tokens") or 0)
        self.completion_tokens += int(row.get("completion_tokens") or 0)
        if row.get("cost_usd") is not None:
            self.cost_usd = (self.cost_usd or 0.0) + float(row["cost_usd"])

    def as_dict(self) -> dict[str, Any]:
        """The fields by name (``dataclasses.asdict`` deep-copies each one: profiled, 40% of the server's own
        time per rule item)."""
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "failed": self.failed,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass
class RewardOutcome:
    """An item's reward (None: invalid or failed), with what decided it and what it cost."""

    family: str
    uid: str
    reward: float | None
    invalid: bool = False
    error: str | None = None
    error_kind: str | None = None
    """``judge_failed`` (a request failed after retries) or ``budget`` (the budget refused it)."""
    record: dict[str, Any] | None = None
    """The judgment as ``jurist run`` stores it (judge kinds), or the rule checks."""
    cost: ItemCost = field(default_factory=ItemCost)
    seconds: float = 0.0


_ITEM_COST: ContextVar[ItemCost | None] = ContextVar("jurist_reward_item_cost", default=None)


class RewardService:
    """One benchmark's reward: items in, outcomes out, through one long-lived engine."""

    def __init__(
        self,
        settings: ServeSettings,
        plan: RunPlan,
        reward: AnswerReward,
        accounts: RunLedger,
        lock: RunDirLock,
    ) -> None:
        self.settings, self.plan, self.accounts, self._lock = settings, plan, accounts, lock
        self.bench = plan.bench
        self.judge = plan.judges[0] if plan.judges else None
        self.kind = plan.kinds[self.judge] if self.judge else None
        self.family_reward = reward
        """The family's reward (its own place's); the server asks it, never the family's name."""
        self.family = reward.label
        self.by_uid = {q.uid: q for q in self.bench.questions}
        self.by_prompt: dict[str, Question] = {}
        for question in self.bench.questions:
            self.by_prompt.setdefault(question.prompt, question)
        self.rules = None
        if not self.family_reward.judged:
            assert self.bench.rule_suite is not None
            workers = usable_cores() if settings.rule_workers is None else settings.rule_workers
            self.rules = RuleChecks(self.bench.rule_suite, workers, settings.loose)
        self.ledger = accounts.ledger
        write = self.ledger.record
        self.ledger.record = lambda row: _recorded(write, row)
        config = plan.config
        self.engine = Engine(
            dict(plan.specs),
            max_concurrency=config.engine.max_concurrency,
            policy=config.engine.retry,
            throttle=make_throttle(config.engine.min_interval, config.engine.throttle_file),
            cache=open_cache(config.engine.cache_path, enabled=config.engine.cache),
            ledger=self.ledger,
        )

    @classmethod
    def build(cls, settings: ServeSettings) -> RewardService:
        """Resolve the benchmark and judge as ``jurist run`` would; lock the service's directory and open
        its usage log (the budget counts what earlier services there spent). One JuristError if not."""
        config = settings.run_config()
        plan = resolve(config)
        if plan.bench.candidates:
            raise JuristError(f"{plan.bench.name} judges fixed response pairs: there is no answer to reward")
        if plan.bench.judge_kind is None and plan.bench.rule_suite is None:
            raise JuristError(f"{plan.bench.name}: no judge and no rule suite, so no reward")
        judge = plan.judges[0] if plan.judges else None
        options = RewardOptions(rule=settings.reward, loose=settings.loose)
        reward = family_reward(plan.bench, plan.kinds[judge] if judge else None, options)
        if reward.judged and settings.rule_workers is not None:
            raise JuristError(f"--rule-workers: {plan.bench.name} is judged, not checked by rules")
        limits = dataclasses.replace(
            config.budget, max_cost=settings.max_cost, max_tokens=settings.max_tokens
        )
        bounded = dataclasses.replace(config, budget=limits)
        budget = resolve_budget(bounded, plan.specs, plan.run_dir.root, [], plan.judges)
        lock = RunDirLock(plan.run_dir.root)
        lock.acquire()
        accounts = RunLedger(budget)
        accounts.open_log(plan.run_dir.root, f"serve-{uuid.uuid4().hex[:8]}")
        return cls(settings, dataclasses.replace(plan, budget=budget), reward, accounts, lock)

    @property
    def root(self) -> Path:
        return self.plan.run_dir.root

    # -- items --------------------------------------------------------------------------------------------
    def question_for(self, item: RewardItem) -> Question:
        """The benchmark's question (by uid, else by its exact text), else one of the item's own."""
        if item.uid is not None:
            question = self.by_uid.get(item.uid)
            if question is None:
                raise BadItem(f"uid {item.uid[:80]!r} is not a question of {self.bench.name}")
            return question
        if item.question is None:
            raise BadItem("an item needs a uid or a question")
        known = self.by_prompt.get(item.question)
        if known is not None:
            return known
        refused = self.family_reward.own_question(self.bench.name, item.instructions is not None)
        if refused is not None:
            raise BadItem(refused)
        digest = hashlib.sha256(item.question.encode("utf-8")).hexdigest()[:16]
        return Question(uid=f"q-{digest}", prompt=item.question, category=item.category or "default")

    def baseline_for(self, item: RewardItem, question: Question) -> tuple[str, str]:
        """(baseline alias, its answer): the item's own, else the benchmark's shipped one for the uid."""
        if item.baseline_answer is not None:
            return GIVEN_BASELINE, item.baseline_answer
        alias = self.bench.baseline_for(question)
        text = (self.bench.shipped_answers.get(alias) or {}).get(question.uid) if alias else None
        if alias is None or text is None:
            raise BadItem(f"no baseline answer for {question.uid[:80]!r}: send baseline_answer")
        return alias, text

    def prepare(self, item: RewardItem) -> JudgeItem | Question:
        """What judging ``item`` needs, checked before anything is sent (BadItem: a 4xx)."""
        question = self.question_for(item)
        if self.rules is not None:
            unknown = sorted(set(self.instructions_of(item, question)[0]) - self.rules.known)
            if unknown:
                raise BadItem(f"no checker for instruction id {unknown[0][:80]!r}")
            return question
        assert self.judge is not None
        baseline: tuple[str | None, str | None] = (None, None)
        if self.family_reward.against_baseline:
            baseline = self.baseline_for(item, question)
        return JudgeItem(
            judge=self.judge,
            model=CANDIDATE,
            question=question,
            sample=item.sample,
            answer=item.answer,
            baseline=baseline[0],
            baseline_answer=baseline[1],
        )

    async def reward(self, item: RewardItem, prepared: JudgeItem | Question | None = None) -> RewardOutcome:
        """One item's outcome; a failed judge request is its error, never a reward."""
        work = prepared if prepared is not None else self.prepare(item)
        started = time.perf_counter()
        cost = ItemCost()
        token = _ITEM_COST.set(cost)
        try:
            if isinstance(work, Question):
                outcome = await self._rules(item, work)
            else:
                outcome = await self._judged(work)
        finally:
            _ITEM_COST.reset(token)
        outcome.cost, outcome.seconds = cost, time.perf_counter() - started
        return outcome

    def instructions_of(self, item: RewardItem, question: Question) -> tuple[Sequence[str], Sequence[Any]]:
        """A benchmark question's instructions, else the item's own."""
        if item.instructions is not None and question.uid not in self.by_uid:
            return item.instructions
        return question.metadata["instruction_id_list"], question.metadata["kwargs"]

    async def reward_many(
        self, items: Sequence[RewardItem], prepared: Sequence[JudgeItem | Question]
    ) -> list[RewardOutcome]:
        """The outcomes of a request's items, in order: judged items all at once within the engine's
        limits; rule items checked as one batch (:meth:`RuleChecks.check_many`), each outcome with the
        seconds its own checks took."""
        if self.rules is None:
            return list(
                await asyncio.gather(*(self.reward(i, p) for i, p in zip(items, prepared, strict=True)))
            )
        questions = [work for work in prepared if isinstance(work, Question)]
        assert len(questions) == len(items)
        jobs = [self._rule_job(item, question) for item, question in zip(items, questions, strict=True)]
        done = await self.rules.check_many(jobs)
        outcomes = []
        for question, (checks, seconds) in zip(questions, done, strict=True):
            outcome = self._rules_outcome(question, checks)
            outcome.seconds = seconds
            outcomes.append(outcome)
        return outcomes

    def _rule_job(self, item: RewardItem, question: Question) -> RuleJob:
        ids, kwargs = self.instructions_of(item, question)
        return item.answer, ids, [k or {} for k in kwargs], question.prompt

    async def _rules(self, item: RewardItem, question: Question) -> RewardOutcome:
        assert self.rules is not None
        checks = await self.rules.check(*self._rule_job(item, question))
        return self._rules_outcome(question, checks)

    def _rules_outcome(self, question: Question, checks: list[dict[str, Any]]) -> RewardOutcome:
        record = {"instructions": checks, "prompt_strict": all(c["strict"] for c in checks)}
        return RewardOutcome(self.family, question.uid, self.family_reward.of(record), record=record)

    async def _judged(self, item: JudgeItem) -> RewardOutcome:
        assert self.kind is not None and self.judge is not None
        uid = item.question.uid
        try:
            record = await self.kind.judge(self.engine.client(self.judge), item, cache="use")
        except (PartialJudgment, RequestFailed) as exc:
            failure = exc.failure if isinstance(exc, PartialJudgment) else exc
            kind = BUDGET_REFUSED if isinstance(failure, BudgetExhausted) else JUDGE_FAILED
            return RewardOutcome(self.family, uid, None, error=_one_line(failure), error_kind=kind)
        reward = self.family_reward.of(record)
        return RewardOutcome(self.family, uid, reward, invalid=reward is None, record=record)

    async def aclose(self) -> None:
        """The engine closed (sessions, cache written back, servers stopped), the log and lock released."""
        try:
            if self.rules is not None:
                self.rules.close()
            await self.engine.aclose()
        finally:
            if self.engine.cache is not None:
                self.engine.cache.close()
            self.engine.close_servers()
            self.accounts.close_log()
            self._lock.release()


def _recorded(write: Any, row: dict[str, Any]) -> None:
    """The usage log's line, and the item's cost when the request was made for one."""
    if write is not None:
        write(row)
    cost = _ITEM_COST.get()
    if cost is not None:
        cost.add(row)


def _one_line(exc: BaseException) -> str:
    return mask(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:500]


__all__ = [
    "BUDGET_REFUSED",
    "BadItem",
    "CANDIDATE",
    "ItemCost",
    "RewardItem",
    "RewardOutcome",
    "RewardService",
    "ServeSettings",
]
