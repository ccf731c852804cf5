"""The judge stage, run beside the generate stage: an answer is judged as soon as it and its baseline's
answer exist, instead of after every answer of the run.

Run one after the other, the stages left the server idle twice: while the last answers trickled in
(fewer than the limit in flight) and while the judge stage read its work. Run at once, in one event loop
under the same global and per-model limits, judge requests fill every slot the answers leave, so the
requests in flight stay at the limit across the boundary. The judge stage's work arrives through a
:class:`JobQueue` per judge, fed by :class:`jurist.run.work.JudgeFeed` as answers are written; it ends
once answering has ended and its queues are empty.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jurist.engine import Engine, ModelClient, RequestFailed
from jurist.judging import PartialJudgment
from jurist.report import StageProgress
from jurist.run.generate import (
    AnswerChecked,
    AnswerJob,
    FailureLog,
    JudgeJob,
    PartialGames,
    WrittenLine,
    generate,
)
from jurist.run.job_pools import lazy_jobs, workers_for
from jurist.run.work import JudgeFeed, Pair
from jurist.store import JsonlAppender, RunDir

if TYPE_CHECKING:
    from rich.progress import TaskID


class JobQueue:
    """Lazy jobs for one pool of workers, added while the workers run.

    Workers wait while the queue is empty and open, and end once it is closed and empty, or as soon as
    ``stopped()`` says so (the budget ran out: nothing more is started). A job is made (its texts read)
    only when a worker takes it, so the queue holds iterators, never the jobs' texts. Workers are started
    as jobs arrive, up to the pool's size: an idle worker costs about a kilobyte, and a model whose
    requests wait in provider batches has a pool as large as a batch. ``drained`` is called once, when
    no job will be started any more (closed and empty, or stopped).
    """

    def __init__(
        self, stopped: Callable[[], bool] = lambda: False, drained: Callable[[], None] | None = None
    ) -> None:
        self._drained = drained
        self._parts: deque[Iterator[Awaitable[None]]] = deque()
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._closed = False
        self._stopped = stopped
        self._backlog = 0  # jobs put and not yet started (an upper bound: a part may end early)
        self._workers: set[asyncio.Task[None]] = set()
        self._size = 0  # the pool's size, once running

    def put(self, jobs: Iterable[Awaitable[None]], count: int) -> None:
        """Add ``count`` jobs (made as they are taken), wake as many waiting workers, start more if the
        pool is running and not full."""
        self._parts.append(iter(jobs))
        self._backlog += count
        idle = len(self._waiting)
        self._wake(count)
        self._grow(count - idle)

    def close(self) -> None:
        """No more jobs will come: workers end once the queue is empty."""
        self._closed = True
        self._wake(len(self._waiting))
        self._drain()

    def _drain(self, *, ended: bool = False) -> None:
        """Call ``drained`` once no job will start: closed and every job put taken (``_backlog`` is
        exact for parts that hold what they said), or ``ended`` (a worker found nothing more)."""
        if self._drained is not None and (ended or self._stopped() or (self._closed and not self._backlog)):
            drained, self._drained = self._drained, None
            drained()

    def _wake(self, count: int) -> None:
        while count > 0 and self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():  # a cancelled worker's waiter is done
                waiter.set_result(None)
                count -= 1

    def _grow(self, wanted: int) -> None:
        for _ in range(min(wanted, self._size - len(self._workers))):
            task = asyncio.ensure_future(self._worker())
            self._workers.add(task)

    async def take(self) -> Awaitable[None] | None:
        """The next job, waiting for one while the queue is open; None when the workers are done."""
        while not self._stopped():
            while self._parts:
                job = next(self._parts[0], None)
                if job is not None:
                    self._backlog = max(self._backlog - 1, 0)
                    self._drain()
                    return job
                self._parts.popleft()
            if self._closed:
                break
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            await waiter
        self._drain(ended=True)
        return None

    async def _worker(self) -> None:
        while (job := await self.take()) is not None:
            await job

    async def run(self, workers: int) -> None:
        """At most ``workers`` workers taking jobs until the queue is closed and empty (or stopped); the
        first worker's error is raised (the others are then cancelled)."""
        self._size = max(workers, 1)
        self._grow(max(self._backlog, 1))
        try:
            while self._workers:
                done, _ = await asyncio.wait(self._workers, return_when=asyncio.FIRST_EXCEPTION)
                self._workers -= done
                failed = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
                if failed:  # every one retrieved (several workers may end on one batch's error)
                    raise failed[0]  # type: ignore[misc]  # an exception, not None (filtered above)
        finally:
            for task in self._workers:
                task.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)


class JudgeStage:
    """The judge stage: one pool of workers per judge, over all its models (the judge's slots are what
    the jobs share), fed by :meth:`add` before or while it runs until :meth:`close`; judgments and
    partial games go to ``run_dir``."""

    def __init__(
        self,
        engine: Engine,
        judges: Sequence[str],
        run_dir: RunDir,
        failures: FailureLog,
        progress: StageProgress,
    ) -> None:
        self._engine, self._run_dir, self._failures, self._progress = engine, run_dir, failures, progress
        self._queues = {judge: self._queue(engine.client(judge)) for judge in judges}
        self._stack = ExitStack()
        self._kept = self._stack.enter_context(PartialGames(run_dir.partial_games))
        self._outs: dict[Pair, tuple[JsonlAppender, TaskID]] = {}

    def _queue(self, client: ModelClient) -> JobQueue:
        """A judge's queue; one whose requests wait in batches tells its dispatcher when it has started
        its last job, so the last batch is cut then rather than at its age."""
        batcher = client.batcher
        if batcher is None:
            return JobQueue(lambda: self._engine.ledger.stopped)
        batcher.feeding()
        return JobQueue(lambda: self._engine.ledger.stopped, batcher.fed)

    def add(self, pair: Pair, jobs: Collection[JudgeJob]) -> None:
        """Judge ``jobs`` (answers of ``pair``'s model for ``pair``'s judge); texts are read when a worker
        takes each one. A pair's file and bar are opened with its first jobs."""
        if not jobs:
            return
        judge, model = pair
        opened = self._outs.get(pair)
        if opened is None:
            bar = self._progress.add_bar(f"judge   {judge} -> {model}", len(jobs))
            out = self._stack.enter_context(JsonlAppender(self._run_dir.judgments(*pair)))
            opened = self._outs[pair] = (out, bar)
        else:
            self._progress.grow(opened[1], len(jobs))
        out, bar = opened
        client = self._engine.client(judge)
        one = lazy_jobs(_judge_one, jobs, client, out, self._kept, self._progress, bar, self._failures)
        self._queues[judge].put(one, len(jobs))

    def add_all(self, work: Mapping[Pair, Collection[JudgeJob]]) -> None:
        for pair, jobs in work.items():
            self.add(pair, jobs)

    def close(self) -> None:
        """No more jobs will be added: the stage ends once its queues are empty."""
        for queue in self._queues.values():
            queue.close()

    async def run(self) -> None:
        """Judge until closed and every queue is empty; the judgment files are closed at the end."""
        try:
            await asyncio.gather(
                *(
                    queue.run(workers_for(self._engine, self._engine.client(judge), 1 << 30))
                    for judge, queue in self._queues.items()
                )
            )
        finally:
            self._stack.close()


async def _judge_one(
    job: JudgeJob,
    client: ModelClient,
    out: JsonlAppender,
    kept: PartialGames,
    progress: StageProgress,
    bar: TaskID,
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


@dataclass(frozen=True)
class Judging:
    """What the judge stage of a run needs: its judges, its work (built by ``feed`` once the shipped
    answers are on disk), and the run directory its judgments and partial games go to."""

    judges: Sequence[str]
    feed: Callable[[], JudgeFeed]
    run_dir: RunDir


async def answer_and_judge(
    engine: Engine,
    answering: Mapping[str, Collection[AnswerJob]],
    answer_files: Mapping[str, Path],
    judging: Judging | None,
    shipped: Awaitable[None],
    failures: FailureLog,
    progress: StageProgress,
    *,
    overlap: bool = True,
    checked: AnswerChecked | None = None,
    answered: Callable[[], None] | None = None,
    all_asked: Callable[[], None] | None = None,
) -> None:
    """Both stages of a run: answer ``answering``, and judge what is missing, each answer as soon as it
    and its baseline's answer exist (``overlap``; else only once every answer is in); ``checked`` gets
    each answer record as it is written (a rule-checked run's checks: ``rule_checks_ahead``);
    ``answered`` is called once every answer, the shipped ones too, is written (however answering ended);
    ``all_asked`` once the last answer request has been taken (:func:`generate`).

    ``shipped``: the benchmark's own answers being written; the judge stage's work is read once they are
    on disk. When the budget stops the run, nothing more is started in either stage. A stage that fails
    cancels the other, and its error is raised as it is."""
    feed: JudgeFeed | None = None
    stage: JudgeStage | None = None
    held: list[tuple[str, str, int, WrittenLine]] | None = None  # written while the feed reads its work

    def written(alias: str, uid: str, sample: int, line: WrittenLine) -> None:
        if feed is None or stage is None:
            return  # written before the feed read the answer files: it finds them there
        if held is not None:
            held.append((alias, uid, sample, line))
        else:
            stage.add_all(feed.answered(alias, uid, sample, line))

    hand_over = overlap and judging is not None
    answers = asyncio.ensure_future(
        generate(
            engine,
            answering,
            answer_files,
            failures,
            progress,
            written if hand_over else None,
            checked,
            all_asked,
        )
    )
    running: list[asyncio.Future[None]] = [answers]
    try:
        await shipped  # before anything reads the answers it writes
        if answered is not None:
            answers.add_done_callback(lambda _: answered())
        if not hand_over:
            await answers
        if judging is None or engine.ledger.stopped:  # the budget stopped the answers: nothing to judge
            await answers
            return
        stage = JudgeStage(engine, judging.judges, judging.run_dir, failures, progress)
        feed, held = judging.feed(), []
        running.append(asyncio.ensure_future(stage.run()))
        for part in feed.todo_parts():  # a few questions at a time: requests go out in between
            stage.add_all(part)
            await asyncio.sleep(0)
        for alias, uid, sample, line in held:
            stage.add_all(feed.answered(alias, uid, sample, line))
        held = None
        answers.add_done_callback(lambda _: stage.close() if stage is not None else None)
        await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()  # a no-op for a task that is done
        await asyncio.gather(*running, return_exceptions=True)


__all__ = ["JobQueue", "JudgeStage", "Judging", "answer_and_judge"]
