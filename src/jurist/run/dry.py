"""``jurist run --dry-run``: what a run would send and what it would cost, without sending a request.

Everything is resolved as the run would resolve it (models, benchmark, run directory, request cache), and
every request is built by the code that would send it: the answer stage's messages, the judge kinds' own
games and rubric items, the same bodies and cache keys. The engine's own clients ask, through a transport
that never sends (:class:`RecordingTransport`): a cache hit answers as in a run, a miss is written down.
Answers not generated yet are stand-ins in the judges' prompts, counted as the tokens they are expected to
have (the mean that earlier runs of this directory observed, else ``max_tokens``; at most ``max_tokens``).
A reply is expected at the mean completion that earlier runs of the directory observed for its phase and
model, else at the mean of the replies the cache holds for this very run, else, for a judge whose protocol
replies with a label alone, at that protocol's cap (:data:`REPLY_CAPS`), else at ``max_tokens`` (the
model's, or the benchmark's reference judge's); the cost range's top is ``max_tokens`` whatever the guess.
Prompts are counted with each model's own tokenizer (:mod:`jurist.tokens.counters`); where it is not
known, o200k stands in, and the cost range's top counts every byte of such a prompt as a token.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from rich.console import Console

from jurist.benchmarks import Benchmark, Question
from jurist.config import Price
from jurist.engine import (
    PROBE_MESSAGES,
    Completion,
    ConcurrencyLimits,
    ModelClient,
    RequestCache,
    RequestFailed,
    RetryPolicy,
    default_cache_path,
    open_cache,
)
from jurist.judging import CacheMode, JudgeItem, JudgeKind, PartialJudgment
from jurist.money import Ledger, row_order, worst_prompt_tokens
from jurist.report import dry_run_table, table_console
from jurist.run.batching import batch_phases, dry_batch_note
from jurist.run.budget import Estimate, estimate_notes, priced_estimate
from jurist.run.card import probe_estimates
from jurist.run.config import RunConfig
from jurist.run.generate import PartialGames, answer_messages, sample_params
from jurist.run.indexes import RunIndexes
from jurist.run.plan import RunPlan, resolve
from jurist.run.recording import NotSent, Planned, RecordingTransport
from jurist.run.work import answer_work
from jurist.tokens import TokenCounter, counter_for

_STAND_IN = re.compile(r"JURISTPLANNEDANSWER(\d+)X")

REPLY_CAPS = {"simple": 16, "structured": 32, "logprob": 4}
"""Expected completion tokens of one reply of the judge protocols whose reply is a verdict label and
nothing else: ``simple`` ("[[A>B]]", about 5 o200k tokens, with room for a stray word), ``structured``
(``{"verdict": "A>B"}``, about 8), ``logprob`` (one digit; it sends max_tokens 4 itself). A protocol that
writes a judgment first (Arena-Hard's, jurist-pairwise) or a custom prompt has no cap: its replies are
expected at ``max_tokens`` until a run or the cache has observed them."""


class Planner:
    """Walks a run's work as :class:`~jurist.run.pipeline.Pipeline` would, with clients that record."""

    def __init__(self, plan: RunPlan, cache: RequestCache | None) -> None:
        self.run = plan
        self.cache = cache
        self.prices: Mapping[str, Price] = plan.budget.prices
        self.past = plan.budget.earlier  # what earlier runs of the directory observed
        self.indexes = RunIndexes(plan.run_dir, plan.bench.shipped_answers)
        self.ledger = Ledger()  # the dry clients' cache hits, by phase and model
        self.plan: list[Planned] = []
        self.done: Counter[tuple[str, str]] = Counter()
        self.clients: dict[str, ModelClient] = {}
        self.planned: dict[str, dict[tuple[str, int], str | None]] = {}  # generated now: text, or unknown
        self.stand_ins: list[str] = []  # alias of stand-in number i
        self.counters: dict[str, TokenCounter] = {}  # by alias, as used
        self.cached_replies: dict[tuple[str, str], list[int]] = {}  # (phase, alias) -> [tokens, replies]
        self.notes: list[str] = []

    def counter(self, alias: str) -> TokenCounter:
        """The tokenizer that counts ``alias``'s prompts (a ``tokenizer:`` that cannot load: an error)."""
        if alias not in self.counters:
            self.counters[alias] = counter_for(self.run.specs[alias])
        return self.counters[alias]

    def prompt_tokens(self, alias: str, messages: list[dict[str, Any]]) -> tuple[int, int]:
        """A prompt's tokens as counted, and at most: the same with the model's own tokenizer; with o200k
        standing in for it, every byte (as JSON) a token, a bound for any byte-level tokenizer."""
        counter = self.counter(alias)
        counted = counter.count_prompt(messages)
        return counted, counted if counter.exact else max(counted, worst_prompt_tokens(messages))

    def client(self, alias: str) -> ModelClient:
        if alias not in self.clients:
            self.clients[alias] = ModelClient(
                self.run.specs[alias],
                ConcurrencyLimits(1),
                RetryPolicy(),
                cache=self.cache,
                ledger=self.ledger,
                transport=RecordingTransport(self.plan, self.cached_replies),
            )
        return self.clients[alias]

    # -- answers ----------------------------------------------------------------------------------------
    async def generation(self) -> None:
        run = self.run
        n = len(run.bench.questions)
        for alias, jobs in answer_work(run, self.indexes).items():
            client = self.client(alias)
            wanted = run.samples if alias in run.candidates else 1
            self.done[("generate", alias)] += n * wanted - sum(len(job.samples) for job in jobs)
            texts = self.planned.setdefault(alias, {})
            for job in jobs:
                messages = answer_messages(client.spec, job.question)
                samples = list(job.samples)
                if len(samples) > 1 and client.spec.sample_batching:
                    first = samples[0]
                    params = {"n": len(samples), **sample_params(client, first)}
                    reply = await self._ask(client, messages, first, params)
                    choices = [reply, *reply.more] if reply is not None else []
                    for index, sample in enumerate(samples):
                        texts[(job.question.uid, sample)] = (
                            choices[index].text if index < len(choices) else None
                        )
                    continue
                for sample in samples:
                    reply = await self._ask(client, messages, sample, sample_params(client, sample))
                    texts[(job.question.uid, sample)] = reply.text if reply is not None else None
            if wanted > 1 and client.spec.sample_batching is None and jobs:
                self.notes.append(
                    f"{alias}: counted one request per sample; if its server honours n, jurist asks each "
                    "question's samples in one request"
                )

    async def _ask(
        self, client: ModelClient, messages: list[dict[str, Any]], sample: int, params: dict[str, Any]
    ) -> Completion | None:
        try:
            return await client.complete(messages, sample=sample, phase="generate", **params)
        except NotSent:
            return None

    def answer(self, alias: str, question: Question, sample: int) -> str | None:
        """The answer the judges will see: on disk, from the cache, a stand-in (to be generated), or None."""
        planned = self.planned.get(alias, {})
        if (question.uid, sample) in planned:
            text = planned[(question.uid, sample)]
            if text is not None:
                return text
            self.stand_ins.append(alias)
            return f"JURISTPLANNEDANSWER{len(self.stand_ins) - 1}X"
        return self.indexes.answers(alias).text(question.uid, sample)

    # -- judgments --------------------------------------------------------------------------------------
    async def judging(self) -> None:
        run = self.run
        rejudge = run.config.rejudge_invalid
        paid = PartialGames.load(run.run_dir.partial_games)
        for model in run.candidates:
            for judge in run.judges:
                kind, client = run.kinds[judge], self.client(judge)
                stored = self.indexes.judgments(judge, model)
                for question in run.bench.questions:
                    for sample in range(run.samples):
                        item = self._item(judge, model, question, sample)
                        if item is None:
                            continue
                        if _STAND_IN.search(item.answer + (item.baseline_answer or "")):
                            await self._judge(kind, client, item, "off", None)  # nothing to look up
                            continue
                        key = kind.key(item)
                        if key not in stored:
                            await self._judge(kind, client, item, "use", paid.get(key))
                        elif rejudge and stored.invalid(key):
                            await self._judge(kind, client, item, "refresh", None)
                        else:
                            self.done[("judge", judge)] += 1

    def _item(self, judge: str, model: str, question: Question, sample: int) -> JudgeItem | None:
        answer = self.answer(model, question, sample)
        if answer is None:
            return None
        baseline = self.run.bench.baseline_for(question)
        base = self.answer(baseline, question, 0) if baseline is not None else None
        if baseline is not None and base is None:
            return None
        return JudgeItem(judge, model, question, sample, answer, baseline, base)

    @staticmethod
    async def _judge(
        kind: JudgeKind,
        client: ModelClient,
        item: JudgeItem,
        cache: CacheMode,
        earlier: dict[int, Any] | None,
    ) -> None:
        try:
            await kind.judge(client, item, cache=cache, earlier=earlier)
        except (PartialJudgment, RequestFailed):
            pass  # the requests it would send are written down; the rest came from the cache

    # -- the estimate -----------------------------------------------------------------------------------
    def _observed(self, phase: str, alias: str) -> int | None:
        """Mean completion tokens per answer that earlier runs of this directory got, else that the
        cache's replies to this run's own requests had, if any."""
        for row in (self.past or {}).get("rows") or []:
            if row.get("phase") == phase and row.get("model") == alias:
                answers = int(row.get("choices") or row.get("replies") or 0)
                if answers:
                    return round(int(row.get("completion_tokens") or 0) / answers)
        tokens, replies = self.cached_replies.get((phase, alias), (0, 0))
        return round(tokens / replies) if replies else None

    def _protocol_cap(self, phase: str, alias: str) -> tuple[str, int] | None:
        """(protocol, expected tokens) for a judge request whose protocol replies with a label alone."""
        kind = self.run.kinds.get(alias) if phase in ("judge", "reask") else None
        name = str(getattr(kind, "protocol_name", "") or "")
        return (name, REPLY_CAPS[name]) if name in REPLY_CAPS else None

    def _expected_completion(self, phase: str, alias: str, most: int | None) -> tuple[int, str]:
        """Expected completion tokens of one reply, and the basis of the guess (module docstring)."""
        observed = self._observed(phase, alias)
        if observed is not None:
            return observed, "observed mean"
        cap = self._protocol_cap(phase, alias)
        if cap is not None:
            name, tokens = cap
            return (min(tokens, most) if most else tokens), f"{name} protocol cap"
        return (int(most), "max_tokens") if most else (0, "unknown")

    def _stand_in_tokens(self, alias: str) -> tuple[int, int | None]:
        """Expected and most tokens of an answer of ``alias`` not generated yet."""
        spec = self.run.specs.get(alias)
        most = spec.max_tokens if spec is not None else None
        observed = self._observed("generate", alias)
        return (observed if observed is not None else most or 0), most

    def estimate(self) -> dict[tuple[str, str], Estimate]:
        rows: dict[tuple[str, str], Estimate] = {}
        for request in self.plan:
            row = rows.setdefault((request.phase, request.alias), Estimate())
            row.requests += 1
            texts = (str(message.get("content", "")) for message in request.messages)
            stand_ins = [int(index) for text in texts for index in _STAND_IN.findall(text)]
            counted, at_most = self.prompt_tokens(request.alias, [_strip(m) for m in request.messages])
            row.prompt += counted
            row.prompt_low += counted
            row.prompt_high += at_most
            for index in stand_ins:
                expected, most = self._stand_in_tokens(self.stand_ins[index])
                row.prompt += expected
                row.prompt_high += most or 0
                if most is None:  # an answer of unbounded length: no worst case for this row
                    row.completion_high = None
            spec = self.run.specs[request.alias]
            choices = int(request.params.get("n") or 1)
            most = request.params.get("max_tokens") or spec.max_tokens
            expected, basis = self._expected_completion(request.phase, request.alias, most)
            row.basis.add(basis)
            row.completion += choices * expected
            if row.completion_high is not None:
                row.completion_high = row.completion_high + choices * int(most) if most else None
        for hits in self.ledger.summary()["rows"]:  # what the dry clients found in the cache
            if hits["cache_hits"]:
                rows.setdefault((hits["phase"], hits["model"]), Estimate()).cached += hits["cache_hits"]
        for key, done in self.done.items():
            if done:
                rows.setdefault(key, Estimate()).done += done
        rows.update(probe_estimates(self.run, rows))  # the judge card's probes (jurist.run.card)
        self._probes(rows)
        return dict(sorted(rows.items(), key=row_order))

    def _probes(self, rows: dict[tuple[str, str], Estimate]) -> None:
        """The pre-run check's one-token probes, one per endpoint of each model with work (not sent here)."""
        config = self.run.config
        if not config.engine.check:
            return
        busy = {alias for (_, alias), row in rows.items() if row.requests}
        for alias in sorted(busy):
            spec = self.run.specs[alias]
            if spec.serve is None:
                row = rows.setdefault(("check", alias), Estimate())
                row.requests += len(spec.resolved_endpoints())
                counted, most = self.prompt_tokens(alias, PROBE_MESSAGES)
                row.prompt = row.prompt_low = row.requests * counted
                row.prompt_high = row.requests * most
                row.completion = row.requests
                row.completion_high = row.requests
                row.basis.add("probe")


def _strip(message: dict[str, Any]) -> dict[str, Any]:
    """The message without its stand-ins (counted apart, at their expected length)."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": _STAND_IN.sub("", content)}
    return message


def _existing_cache(config: RunConfig) -> RequestCache | None:
    """The request cache a run would use, opened only if it exists: a dry run creates nothing."""
    if not config.engine.cache:
        return None
    path = config.engine.cache_path if config.engine.cache_path is not None else default_cache_path()
    if path.is_dir() or not path.suffix:
        path = path / "requests.sqlite"
    return open_cache(path) if path.is_file() else None


def plan_run(
    config: RunConfig, console: Console | None = None, loaded: Benchmark | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of the estimate (one per phase and model, a total last) and the notes that go with it;
    ``loaded``: the benchmark already built (a replacement study's panel), as :func:`resolve` takes it."""
    plan = resolve(config, loaded=loaded)  # as the run would: models, benchmark, prices, the budget checked
    cache = _existing_cache(config)
    planner = Planner(plan, cache)

    async def walk() -> None:
        try:
            await planner.generation()
            if plan.judges:
                await planner.judging()
        finally:  # the sessions that asked the endpoints what they serve
            for client in planner.clients.values():
                await client.aclose()

    try:
        asyncio.run(walk())
    finally:
        if cache is not None:
            cache.close()
    rows, unpriced = priced_estimate(planner.estimate(), planner.prices, batch_phases(plan))
    notes = list(dict.fromkeys(planner.notes + unpriced + dry_batch_note(rows)))
    for row in rows[:-1]:
        row["tokenizer"] = planner.counter(str(row["model"])).label
    guessed = sorted(alias for alias, counter in planner.counters.items() if not counter.exact)
    if guessed:
        notes.append(
            f"prompt tokens of {', '.join(guessed)} estimated with o200k, not their own tokenizer (name it "
            "with tokenizer: in the models file); the cost range's top counts each prompt byte as a token"
        )
    unknown = sum(text is None for texts in planner.planned.values() for text in texts.values())
    if planner.stand_ins:
        notes.append(
            f"{unknown:,} answer(s) to judge are not generated yet: in the judges' prompts "
            "they count at their model's observed mean length (else max_tokens), in the cost range from "
            "empty to max_tokens"
        )
    return rows, notes + estimate_notes(config, rows, planner.past, planner.prices)


def dry_run(config: RunConfig, console: Console | None = None, loaded: Benchmark | None = None) -> int:
    """Print the estimate of ``config``'s run; nothing is sent or written. Returns the exit code (0)."""
    console = console or Console(stderr=True)
    rows, notes = plan_run(config, console, loaded)
    if config.output_format == "json":  # for programs: the rows and notes, nothing else on stdout
        print(json.dumps({"rows": rows, "notes": notes}, indent=2, ensure_ascii=False))
        return 0
    title = f"jurist run --dry-run: {config.bench} (nothing sent)"
    table_console().print(dry_run_table(rows, title))
    for note in notes:
        console.print(note, markup=False, highlight=False, style="dim")
    return 0
