"""One life cycle for every way jurist runs: open -> stages -> finish, interrupts, the engines closed.

``jurist run`` (one run), ``jurist run --tasks`` (several side by side) and each phase of a sweep's
checkpoint (its tasks) are each a :class:`Session`: runs (:class:`Run`, a pipeline's steps) that
share one root engine (its limits, connections, request cache and managed servers), each with a sibling
engine of its own (its usage counts, so each run.json says what its run cost). A session opens its runs
(each run directory locked, run.json written as running), runs their stages at once in one event loop (one
failing cancels the others), and finishes each (scored, run.json written as finished) or, when stopped,
writes each as interrupted so that a re-run resumes it. :func:`run_session` drives a session from a plain
call; a sweep drives its phases' sessions from its own event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Protocol

from jurist.engine import Engine
from jurist.report import PrefixedProgress, StageProgress
from jurist.run.config import RunResult
from jurist.run.interrupts import FORCED_STOP, GracefulInterrupt, run_interruptibly
from jurist.run.plan import RunPlan
from jurist.run.record import RunRecord
from jurist.store import RunDirLock

if TYPE_CHECKING:
    from rich.console import Console


class Run(Protocol):
    """What a session drives: one run's plan, its record and its steps (a
    :class:`jurist.run.pipeline.Pipeline`). A stopped or crashed run is written, and its logs closed,
    through its record alone."""

    plan: RunPlan
    record: RunRecord

    def open_run(self, lock: RunDirLock) -> None: ...
    def new_engine(self, shares: Engine | None = None) -> Engine: ...
    async def stages(self, engine: Engine, progress: StageProgress) -> None: ...
    def finish(self, engine: Engine) -> RunResult: ...


async def all_or_none(coroutines: Sequence[Awaitable[Any]]) -> None:
    """Await them together; when one raises, cancel the others, wait for them, and raise its error."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class Session:
    """Runs that share one root engine, from their locks to their run.json written as finished.

    ``runs``: by key (a task's name; results come back under the same keys, in the same order).
    ``root``: the engine whose limits, connections, cache and servers the runs share; None: the first
    run's own engine is the root. ``owns_root``: a given root is closed with the session (a sweep's
    judging phase shares one root across checkpoints and keeps it open). ``labels``: the prefix of each
    run's progress bars (several runs draw into one display); None: the bars carry no prefix.
    """

    def __init__(
        self,
        runs: Mapping[str, Run],
        *,
        root: Engine | None = None,
        owns_root: bool = True,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.runs = dict(runs)
        self.engines: dict[str, Engine] = {}
        self._root = root
        self._owns_root = owns_root
        self._labels = labels

    def open(self, stack: ExitStack) -> None:
        """Each run directory locked (released when ``stack`` closes) and its run opened (endpoints probed,
        run.json written as running); then each run's engine made."""
        for run in self.runs.values():
            folder = run.plan.run_dir.root
            lock = RunDirLock(folder)
            stack.callback(lock.release)
            if folder.is_dir():
                lock.acquire()  # before anything is read for work or written
            run.open_run(lock)
        root = self._root
        for key, run in self.runs.items():
            engine = self.engines[key] = run.new_engine(shares=root)
            if root is None:
                root = engine

    def _bars(self, key: str, bars: StageProgress) -> StageProgress:
        return bars if self._labels is None else PrefixedProgress(bars, self._labels[key])

    async def stages(self, bars: StageProgress, watch: Awaitable[str] | None = None) -> str | None:
        """Every run's stages at once; one that raises cancels the others and its error is raised. With
        ``watch`` (it returns when the server the runs use died, saying why), the stages are stopped as
        soon as it returns, and its reason is returned; else None."""
        work = all_or_none(
            [run.stages(self.engines[key], self._bars(key, bars)) for key, run in self.runs.items()]
        )
        if watch is None:
            await work
            return None
        running = asyncio.ensure_future(work)
        watcher = asyncio.ensure_future(watch)
        try:
            done, _ = await asyncio.wait({running, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if watcher in done and running not in done:
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)
                return watcher.result()
            running.result()
            return None
        finally:
            for task in (running, watcher):
                if not task.done():
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)

    def interrupted(self) -> None:
        """Each opened run's run.json written as interrupted: a re-run resumes it."""
        for key, engine in self.engines.items():
            self.runs[key].record.interrupted(engine)

    def crashed(self, error: BaseException) -> None:
        """Each opened run's run.json written as crashed, with the error in one line, so no reader has
        to infer it (a kill -9 or a power cut still leaves ``running``, which readers tell by the lock).
        Best effort: the error may be the full disk that this write meets too."""
        for key, engine in self.engines.items():
            try:
                self.runs[key].record.crashed(engine, error)
            except OSError:
                pass

    async def aclose(self) -> None:
        """The engines' sessions closed (siblings first, the root last), the cache written back, and the
        root's servers stopped when the session owns it."""
        for engine in reversed(list(self.engines.values())):
            await engine.aclose()
        if self._root is not None and self._owns_root:
            await self._root.aclose()

    def close(self) -> None:
        """Outside the event loop: failure logs closed, the shared servers stopped and the cache closed
        (by the engine that owns them), however the stages ended."""
        for key in reversed(list(self.engines)):  # the first run's engine, the root when none was given, last
            self.runs[key].record.close()
            engine = self.engines[key]
            engine.close_servers()  # a sibling's are its root's: it stops none
            if engine.cache is not None and engine.owns_shared():
                engine.cache.close()
        if self._root is not None and self._owns_root:
            self._root.close_servers()
            if self._root.cache is not None:
                self._root.cache.close()

    def force_stop(self) -> None:
        """What a forced stop (a second Ctrl-C, or a run that would not stop) must not leave behind: the
        servers jurist started, and what the cache holds."""
        root = self._root or next(iter(self.engines.values()), None)
        if root is not None:
            root.close_servers()
            if root.cache is not None:
                root.cache.close()

    def finish(self) -> dict[str, RunResult]:
        """Each run scored and its run.json written as finished."""
        return {key: run.finish(self.engines[key]) for key, run in self.runs.items()}


def run_session(session: Session, console: Callable[[], Console], progress: bool) -> dict[str, RunResult]:
    """``session`` from open to finish in an event loop of its own, under Ctrl-C / SIGTERM handling: an
    interrupt marks every run interrupted (KeyboardInterrupt, once all is saved), a run that will not
    stop is stopped at once (:mod:`jurist.run.interrupts`). ``console`` gives the runs' console, asked
    for once the runs are open and only when something is shown (bars, a note)."""
    with ExitStack() as stack:
        session.open(stack)

        def force_stop() -> None:
            session.force_stop()
            console().print(FORCED_STOP, style="yellow", markup=False, highlight=False)

        async def main(interrupt: GracefulInterrupt) -> None:
            interrupt.attach()
            try:
                # without bars no console is made here: rich is imported when a line is first said
                # (often at the end, while the last replies are awaited), not before the first request
                with StageProgress(console() if progress else None, enabled=progress) as bars:
                    await session.stages(bars)
            finally:
                await session.aclose()

        try:
            run_interruptibly(main, force_stop)
        except KeyboardInterrupt:
            session.interrupted()
            raise
        except Exception as exc:
            session.crashed(exc)
            raise
        finally:
            session.close()
        return session.finish()


__all__ = ["Run", "Session", "all_or_none", "run_session"]
