"""The generate stage, and what both stages that send requests share (:mod:`jurist.run.judge` judges).

Each stage takes its work (only what is missing on disk), sends it through the engine under its limits,
and appends every result the moment it arrives; a transport failure goes to ``failures.jsonl`` and is
retried by the next run. Neither knows which benchmark or judge kind it serves.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.benchmarks import Question
from jurist.config import ModelSpec
from jurist.engine import Completion, Engine, ModelClient, RequestFailed
from jurist.judging import CacheMode, JudgeItem, JudgeKind
from jurist.report import StageProgress
from jurist.run.job_pools import announcing, last_taken, lazy_jobs, run_jobs, workers_for
from jurist.store import JsonlAppender, answer_record
from jurist.tokens import answer_style_metadata

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import TaskID

WrittenLine = tuple[tuple[int, int], Mapping[str, Any]]
"""Where an answer's line lies in its file (:meth:`JsonlAppender.append`) and the record it holds."""
AnswerWritten = Callable[[str, str, int, WrittenLine], None]
"""Told (model alias, uid, sample, the line) the moment an answer's line is on disk: the judge stage's
feed, whose index takes the line from it instead of reading it back (:meth:`AnswerIndex.learned`)."""
AnswerChecked = Callable[[Question, Mapping[str, Any]], None]
"""Handed (question, answer record) as the record is written: a rule-checked run's checks begin."""


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


class AnswerSink:
    """Where one model's answers go: its file, its bar, the failure log, and (overlapped stages) the
    judge stage, told of each answer as soon as it is written.

    An answer record carries style metadata counted with the o200k tokenizer. Counting it on the event
    loop, answer by answer, held every slot's next request back while a burst of answers was counted;
    and the tokenizer takes 0.4 s to build, on the first count. So the workers hand their answers over
    and go on asking; a writer task counts what has arrived in a thread, a batch at a time, and writes
    it in order.
    """

    def __init__(
        self,
        client: ModelClient,
        out: JsonlAppender,
        progress: StageProgress,
        bar: TaskID,
        failures: FailureLog,
        written: AnswerWritten | None = None,
        checked: AnswerChecked | None = None,
    ) -> None:
        self.client, self.out, self.progress, self.bar = client, out, progress, bar
        self.failures, self.written, self.checked = failures, written, checked
        self._waiting: list[tuple[Question, int, Completion, bool]] = []
        self._flush: asyncio.Future[None] | None = None

    def write(self, question: Question, sample: int, completion: Completion, *, batched: bool) -> None:
        """Take an answer to write (soon, in order); raises what made an earlier write fail (a full disk)."""
        flush = self._flush
        if flush is not None and flush.done():
            error = None if flush.cancelled() else flush.exception()
            if error is not None:
                raise error
            flush = None
        self._waiting.append((question, sample, completion, batched))
        if flush is None:
            self._flush = asyncio.ensure_future(self._write_waiting())

    async def _write_waiting(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            counted = await asyncio.to_thread(_style_metadata, [entry[2].text for entry in batch])
            for (question, sample, completion, batched), metadata in zip(batch, counted, strict=True):
                record, span = _write_answer(
                    self.out, self.client, question, sample, completion, batched, metadata
                )
                if self.checked is not None:
                    self.checked(question, record)
                self.progress.advance(self.bar, tokens=completion.completion_tokens or 0)
                if self.written is not None:
                    self.written(self.client.alias, question.uid, sample, (span, record))

    async def settle(self) -> None:
        """Write what is still waiting (before the file is closed); raises what made a write fail."""
        while self._flush is not None and not self._flush.done():
            await self._flush
        if self._flush is not None and not self._flush.cancelled():
            self._flush.result()

    def failed(self, exc: RequestFailed, question: Question, sample: int) -> None:
        self.failures.record("generate", exc, model=self.client.alias, uid=question.uid, sample=sample)
        self.progress.advance(self.bar, failed=True)


async def generate(
    engine: Engine,
    work: Mapping[str, Collection[AnswerJob]],
    files: Mapping[str, Path],
    failures: FailureLog,
    progress: StageProgress,
    written: AnswerWritten | None = None,
    checked: AnswerChecked | None = None,
    all_asked: Callable[[], None] | None = None,
) -> None:
    """Answer every job of every model concurrently; ``files`` maps each model to its answers file,
    ``written`` (if given) hears of each answer once it is on disk, ``checked`` (if given) gets each
    answer record as it is written, and ``all_asked`` (if given) is called once every model's last job
    has been taken: the stage's last replies are on their way.

    Each model's jobs are taken one at a time by its pool of workers (:func:`workers_for`), so a caller
    may pass lazy collections (a length and an iterator) and nothing per job is held before its turn."""
    with ExitStack() as stack:
        pools, sinks = [], []
        models_asking = [sum(1 for todo in work.values() if todo)]
        for alias, todo in work.items():
            if not todo:
                continue
            bar = progress.add_bar(f"answer  {alias}", sum(len(job.samples) for job in todo))
            out = stack.enter_context(JsonlAppender(files[alias]))
            client = engine.client(alias)
            sinks.append(sink := AnswerSink(client, out, progress, bar, failures, written, checked))
            jobs = lazy_jobs(_answer_one, todo, sink)
            fed = None
            if client.batcher is not None:  # its last batch of answers is cut once every job has started
                client.batcher.feeding()
                fed = client.batcher.fed
            if fed is not None or all_asked is not None:
                jobs = announcing(jobs, len(todo), last_taken(fed, models_asking, all_asked))
            pools.append(run_jobs(jobs, workers_for(engine, client, len(todo))))
        try:
            await asyncio.gather(*pools)
        finally:  # what was answered is written, however the stage ends
            for sink in sinks:
                await sink.settle()


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


async def _answer_one(job: AnswerJob, sink: AnswerSink) -> None:
    """Answer ``job``'s samples: first, where the server may honour ``n``, one request for all of them
    (its choices answer the first samples), then one request per sample still missing."""
    client, question = sink.client, job.question
    messages = answer_messages(client.spec, question)
    todo = list(job.samples)
    if len(todo) > 1 and client.sample_batching is None:
        async with client.batch_probe:  # the first batch finds out; the others wait for its answer
            if client.sample_batching is None:
                todo = await _answer_batch(sink, question, messages, todo)
    if len(todo) > 1 and client.sample_batching:
        todo = await _answer_batch(sink, question, messages, todo)
    for sample in todo:
        try:
            completion = await client.complete(
                messages, sample=sample, phase="generate", **sample_params(client, sample)
            )
        except RequestFailed as exc:
            sink.failed(exc, question, sample)
            continue
        sink.write(question, sample, completion, batched=False)


async def _answer_batch(
    sink: AnswerSink, question: Question, messages: list[dict[str, Any]], todo: list[int]
) -> list[int]:
    """One request with ``n`` = the missing samples; returns the samples it did not answer. A server
    that answers fewer choices, or refuses ``n`` (HTTP 400), is asked one sample at a time from then on;
    the choices it did return are kept."""
    client, first = sink.client, todo[0]
    try:
        completion = await client.complete(
            messages, sample=first, n=len(todo), phase="generate", **sample_params(client, first)
        )
    except RequestFailed as exc:
        if client.sample_batching is None and exc.status == 400:
            client.sample_batching = False
            return todo
        for sample in todo:
            sink.failed(exc, question, sample)
        return []
    choices = [completion, *completion.more][: len(todo)]
    if client.sample_batching is None:
        client.sample_batching = len(choices) == len(todo)
    for sample, choice in zip(todo, choices, strict=False):
        sink.write(question, sample, choice, batched=len(choices) > 1)
    return todo[len(choices) :]


def _style_metadata(texts: list[str]) -> list[dict[str, Any]]:
    return [answer_style_metadata(text) for text in texts]


def _write_answer(
    out: JsonlAppender,
    client: ModelClient,
    question: Question,
    sample: int,
    completion: Completion,
    batched: bool,
    metadata: dict[str, Any],
) -> tuple[dict[str, Any], tuple[int, int]]:
    """The answer's record, appended to ``out`` and returned with where its line lies."""
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
        metadata=metadata,  # style-control features, Arena-Hard's shape
        reasoning=completion.reasoning or None,
        content_head=completion.content_head,  # the content as written is content_head + answer
    )
    written = dict(record)
    return written, out.append(written)


def rule_checks_ahead(rule_suite: str | None, mode: str) -> AnswerChecked | None:
    """What starts a rule-checked run's checks as its answers arrive (:func:`jurist.rules.start_checking`),
    overlapping them with the requests still out, so the run's end finds them done: the same checks of
    the same text (:func:`jurist.rules.visible_answer` of the record) that the end asks for. None where
    the run checks nothing (no rule suite, or answers only)."""
    if rule_suite is None or mode == "inference-only":
        return None
    from jurist.rules import checkers, start_checking, visible_answer

    table = checkers(rule_suite)

    def checked(question: Question, record: Mapping[str, Any]) -> None:
        text, _ = visible_answer(record)
        ids, kwargs = question.metadata["instruction_id_list"], question.metadata["kwargs"]
        start_checking(table, text, ids, kwargs, question.prompt)

    return checked


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
        from jurist.store import iter_jsonl

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
