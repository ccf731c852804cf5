"""The two stages that send requests: answering questions and judging answers.

Each takes its work (only what is missing on disk), sends it through the engine under its limits, and
appends every result the moment it arrives; a transport failure goes to ``failures.jsonl`` and is retried
by the next run. Neither knows which benchmark or judge kind it serves.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.benchmarks.base import Question
from jurist.config import ModelSpec
from jurist.engine.client import Completion, Engine, ModelClient, RequestFailed
from jurist.judging.base import CacheMode, JudgeItem, JudgeKind, PartialJudgment
from jurist.report.progress import StageProgress
from jurist.store.jsonl import JsonlAppender
from jurist.store.records import answer_record
from jurist.style import answer_style_metadata, o200k_encoding, o200k_loaded


class FailureLog:
    """Appends failed requests to ``failures.jsonl`` (secrets masked) and counts them."""

    def __init__(self, path: Path, run_id: str) -> None:
        self._appender: JsonlAppender | None = None
        self._path = path
        self.run_id = run_id
        self.count = 0
        self.current: list[dict[str, Any]] = []  # this run's failures: what is still missing now

    def record(self, stage: str, exc: RequestFailed, **where: Any) -> None:
        if exc.kind == "budget":  # not sent, not failed: the next run with a larger budget asks it
            return
        if self._appender is None:
            self._appender = JsonlAppender(self._path)
        self.count += 1
        self.current.append({"stage": stage, **where, "kind": exc.kind, "status": exc.status})
        self._appender.append(
            {"run_id": self.run_id, "stage": stage, **where, **exc.record(), "tstamp": time.time()}
        )

    def close(self) -> None:
        if self._appender is not None:
            self._appender.close()


@dataclass(frozen=True, slots=True)
class AnswerJob:
    """The missing samples of one question: one request each, or one request with ``n`` for them all
    where the server honours it (:func:`_answer_one`)."""

    question: Question
    samples: tuple[int, ...] = (0,)


@dataclass(frozen=True, slots=True)
class JudgeJob:
    item: JudgeItem
    kind: JudgeKind
    cache: CacheMode
    earlier: dict[int, dict[str, Any]] | None = None  # games an earlier run paid for


def workers_for(engine: Engine, client: ModelClient, jobs: int) -> int:
    """How many jobs of one client run at once: its slots twice over, plus some.

    One task per job (the old way) cost ~0.1 MB of memory per question at 8 models, all of it waiting on
    a semaphore. A fixed pool of workers per client keeps memory flat in the number of questions; twice
    the client's slots keep them busy while some jobs sleep in a retry backoff (which holds no slot).
    """
    slots = min(client.spec.parallel, engine.limits.max_concurrency)
    return max(1, min(jobs, 2 * slots + 64))


def _lazy(
    one: Callable[..., Awaitable[None]], todo: Iterable[Any], client: ModelClient, *args: Any
) -> Iterator[Awaitable[None]]:
    """``one(client, job, *args)`` for each job, made only when a worker takes it (the arguments are
    bound now: a generator expression in a loop would see the loop's last client and file)."""
    for job in todo:
        yield one(client, job, *args)


async def run_jobs(jobs: Iterable[Awaitable[None]], workers: int) -> None:
    """Await ``jobs`` (lazy coroutines, made one at a time) with at most ``workers`` of them at once."""
    todo = iter(jobs)

    async def worker() -> None:
        for job in todo:  # one event loop: workers never take the same job
            await job

    await asyncio.gather(*(worker() for _ in range(workers)))


async def generate(
    engine: Engine,
    work: Mapping[str, Collection[AnswerJob]],
    files: dict[str, Path],
    failures: FailureLog,
    progress: StageProgress,
) -> None:
    """Answer every job of every model concurrently; ``files`` maps each model to its answers file.

    Each model's jobs are taken one at a time by its pool of workers (:func:`workers_for`), so a caller
    may pass lazy collections (a length and an iterator) and nothing per job is held before its turn."""
    # The o200k tokenizer (style metadata of every answer) takes ~0.5 s to build: built in a thread now,
    # so the event loop keeps sending while it loads instead of stalling on the first answer.
    warm = None if o200k_loaded() else asyncio.ensure_future(asyncio.to_thread(o200k_encoding))
    with ExitStack() as stack:
        pools = []
        for alias, todo in work.items():
            if not todo:
                continue
            bar = progress.add_bar(f"answer  {alias}", sum(len(job.samples) for job in todo))
            out = stack.enter_context(JsonlAppender(files[alias]))
            client = engine.client(alias)
            jobs = _lazy(_answer_one, todo, client, out, progress, bar, failures)
            pools.append(run_jobs(jobs, workers_for(engine, client, len(todo))))
        await asyncio.gather(*pools)
    if warm is not None:
        await warm


async def _tokenizer_ready() -> None:
    """Wait, off the event loop, for the tokenizer the answer records need (instant once built)."""
    if not o200k_loaded():
        await asyncio.to_thread(o200k_encoding)


def sample_params(client: ModelClient, sample: int) -> dict[str, Any]:
    """A distinct seed per sample when the models file sets ``seed``: sample k sends ``seed + k``, so
    repeated samples differ on servers that honour seeds, and sample 0's request (and cache key) is
    unchanged."""
    seed = client.spec.passthrough_params().get("seed")
    if sample and isinstance(seed, int) and not isinstance(seed, bool):
        return {"seed": seed + sample}
    return {}


def answer_messages(spec: ModelSpec, question: Question) -> list[dict[str, Any]]:
    """The chat messages that ask ``spec`` to answer ``question`` (the dry run builds the same)."""
    messages = []
    if spec.system_prompt:
        messages.append({"role": "system", "content": spec.system_prompt})
    turns = question.metadata.get("messages")  # a multi-turn prompt (see Question)
    if turns:
        messages.extend({"role": str(t["role"]), "content": str(t["content"])} for t in turns)
    else:
        messages.append({"role": "user", "content": question.prompt})
    return messages


async def _answer_one(
    client: ModelClient,
    job: AnswerJob,
    out: JsonlAppender,
    progress: StageProgress,
    bar: Any,
    failures: FailureLog,
) -> None:
    """Answer ``job``'s samples: first, where the server may honour ``n``, one request for all of them
    (its choices answer the first samples), then one request per sample still missing."""
    question = job.question
    messages = answer_messages(client.spec, question)
    todo = list(job.samples)
    where = {"model": client.alias, "uid": question.uid}
    if len(todo) > 1 and client.sample_batching is None:
        async with client.batch_probe:  # the first batch finds out; the others wait for its answer
            if client.sample_batching is None:
                todo = await _answer_batch(client, question, messages, todo, out, progress, bar, failures)
    if len(todo) > 1 and client.sample_batching:
        todo = await _answer_batch(client, question, messages, todo, out, progress, bar, failures)
    for sample in todo:
        try:
            completion = await client.complete(
                messages, sample=sample, phase="generate", **sample_params(client, sample)
            )
        except RequestFailed as exc:
            failures.record("generate", exc, **where, sample=sample)
            progress.advance(bar, failed=True)
            continue
        await _tokenizer_ready()
        _write_answer(out, client, question, sample, completion, batched=False)
        progress.advance(bar, tokens=completion.completion_tokens or 0)


async def _answer_batch(
    client: ModelClient,
    question: Question,
    messages: list[dict[str, Any]],
    todo: list[int],
    out: JsonlAppender,
    progress: StageProgress,
    bar: Any,
    failures: FailureLog,
) -> list[int]:
    """One request with ``n`` = the missing samples; returns the samples it did not answer. A server
    that answers fewer choices, or refuses ``n`` (HTTP 400), is asked one sample at a time from then on;
    the choices it did return are kept."""
    first = todo[0]
    try:
        completion = await client.complete(
            messages, sample=first, n=len(todo), phase="generate", **sample_params(client, first)
        )
    except RequestFailed as exc:
        if client.sample_batching is None and exc.status == 400:
            client.sample_batching = False
            return todo
        for sample in todo:
            failures.record("generate", exc, model=client.alias, uid=question.uid, sample=sample)
            progress.advance(bar, failed=True)
        return []
    choices = [completion, *completion.more][: len(todo)]
    if client.sample_batching is None:
        client.sample_batching = len(choices) == len(todo)
    await _tokenizer_ready()
    for sample, choice in zip(todo, choices, strict=False):
        _write_answer(out, client, question, sample, choice, batched=len(choices) > 1)
        progress.advance(bar, tokens=choice.completion_tokens or 0)
    return todo[len(choices) :]


def _write_answer(
    out: JsonlAppender,
    client: ModelClient,
    question: Question,
    sample: int,
    completion: Completion,
    *,
    batched: bool,
) -> None:
    usage = completion.usage()
    if batched:  # token counts are the request's, on its first answer only (sums stay what was billed)
        usage["batched"] = True
    record = answer_record(
        uid=question.uid,
        sample=sample,
        model=client.alias,
        category=question.category,
        answer=completion.text,
        tstamp=time.time(),
        usage=usage,
        finish_reason=completion.finish_reason,
        metadata=answer_style_metadata(completion.text),  # style-control features, Arena-Hard's shape
        reasoning=completion.reasoning or None,
    )
    out.append(dict(record))


async def judge(
    engine: Engine,
    work: Mapping[tuple[str, str], Collection[JudgeJob]],
    files: dict[tuple[str, str], Path],
    failures: FailureLog,
    progress: StageProgress,
    partial_games: Path,
) -> None:
    """Judge every (judge, model) job list concurrently, all judges at once under the global limit.

    The games of a judgment whose other game failed go to ``partial_games``, to be reused next run. As
    in :func:`generate`, jobs are taken lazily, one pool of workers per judge."""
    with ExitStack() as stack:
        kept = stack.enter_context(PartialGames(partial_games))
        by_judge: dict[str, list[Iterable[Awaitable[None]]]] = {}
        sizes: dict[str, int] = {}
        for (judge_alias, model), todo in work.items():
            if not todo:
                continue
            bar = progress.add_bar(f"judge   {judge_alias} -> {model}", len(todo))
            out = stack.enter_context(JsonlAppender(files[(judge_alias, model)]))
            client = engine.client(judge_alias)
            jobs = _lazy(_judge_one, todo, client, out, kept, progress, bar, failures)
            by_judge.setdefault(judge_alias, []).append(jobs)
            sizes[judge_alias] = sizes.get(judge_alias, 0) + len(todo)
        # One pool per judge, over all its models: the judge's slots are what the jobs share.
        await asyncio.gather(
            *(
                run_jobs(chain.from_iterable(lists), workers_for(engine, engine.client(alias), sizes[alias]))
                for alias, lists in by_judge.items()
            )
        )


async def _judge_one(
    client: ModelClient,
    job: JudgeJob,
    out: JsonlAppender,
    kept: PartialGames,
    progress: StageProgress,
    bar: Any,
    failures: FailureLog,
) -> None:
    item = job.item
    where = {"judge": client.alias, "model": item.model, "uid": item.question.uid, "sample": item.sample}
    try:
        record = await job.kind.judge(client, item, cache=job.cache, earlier=job.earlier)
    except PartialJudgment as partial:
        kept.keep(job.kind.key(item), partial.games, **where)
        failures.record("judge", partial.failure, **where)
        progress.advance(bar, failed=True)
        return
    except RequestFailed as exc:
        failures.record("judge", exc, **where)
        progress.advance(bar, failed=True)
        return
    out.append(record)
    parts = record.get("games") or record.get("items") or []  # pairwise games, rubric items
    tokens = sum(((part.get("usage") or {}).get("completion_tokens") or 0) for part in parts)
    progress.advance(bar, invalid=bool(record.get("invalid")), tokens=tokens)


class PartialGames:
    """``partial_games.jsonl``: the games of judgments whose other game failed, by judgment key.

    Kept apart from the judgments, so no reader of judgments ever meets half a judgment; the next run
    hands them back to the judge kind (:meth:`load`), and a completed judgment makes them moot.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._out: JsonlAppender | None = None

    def keep(self, key: str, games: dict[int, dict[str, Any]], **where: Any) -> None:
        if not games:
            return
        if self._out is None:
            self._out = JsonlAppender(self.path)
        for number, game in games.items():
            self._out.append({"kind": "partial-game", "key": key, "game": number, **where, "result": game})

    @staticmethod
    def load(path: Path) -> dict[str, dict[int, dict[str, Any]]]:
        """key -> {game number: game}; the last line for a (key, game) wins."""
        from jurist.store.jsonl import iter_jsonl

        games: dict[str, dict[int, dict[str, Any]]] = {}
        for record in iter_jsonl(path):
            games.setdefault(str(record["key"]), {})[int(record["game"])] = record["result"]
        return games

    def __enter__(self) -> PartialGames:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._out is not None:
            self._out.close()


def new_progress(console: Console, enabled: bool) -> StageProgress:
    return StageProgress(console, enabled=enabled)
