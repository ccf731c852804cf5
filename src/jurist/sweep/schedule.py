"""The sweep: checkpoints from one shared queue onto GPU slots, judging beside the next generation.

Each slot (a group of ``--tensor-parallel`` GPUs, or a CPU slot) takes the next checkpoint from the
queue, generates every task's answers on its own server, stops the server and takes the next, so a slot
that finishes early never waits for a fixed shard and more checkpoints than slots run in rounds. With
``--warm-swap`` a slot keeps its vLLM server and moves it to each next checkpoint's weights instead
(:class:`~jurist.engine.servers.pool.KeptServer`), stopping it when the slot ends, however it ends. With
``--ray`` Ray places each checkpoint's generation on a free node instead (:mod:`jurist.sweep.ray_backend`).
As each checkpoint's answers are in, its judging starts under the judges' own limit while generation goes
on. One checkpoint failing is recorded and skipped. Ctrl-C / SIGTERM cancel everything: each phase stops
its servers and marks its runs interrupted, and sweep.json is written with what is done.

With ``--watch`` (:mod:`jurist.sweep.watch`) the queue (or Ray, with ``--ray``) is fed as training writes
checkpoints: each one is queued once it is complete on disk, sweep.json, the plots and the trackers
(:mod:`jurist.track`) are brought up to date after each, and checkpoints an earlier sweep of the same
folder finished are kept as they are instead of being evaluated again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rich.console import Console

from jurist.engine import EMBEDDED_ALIAS, KeptServer, ServerFactory
from jurist.errors import JuristError
from jurist.report import StageProgress
from jurist.run import FORCED_STOP, GracefulInterrupt, all_or_none, new_progress, run_interruptibly
from jurist.sweep.checkpoints import Checkpoint, step_of
from jurist.sweep.generation import generate_checkpoint, slot_words
from jurist.sweep.judging import JudgePhase
from jurist.sweep.phases import LiveEngines, PhaseOutcome, one_line
from jurist.sweep.plan import SweepPlan, write_models_file
from jurist.sweep.results import SWEEP_JSON, card_entries, result_rows, sweep_document, write_sweep_files
from jurist.sweep.watch import SKIPPED_EXIT, CheckpointWatcher
from jurist.track import Trackers

log = logging.getLogger("jurist.sweep")

Generated = Callable[[Checkpoint, PhaseOutcome], None]
"""Told each checkpoint's generation outcome as soon as it has one."""


@dataclass
class CheckpointState:
    """Where one checkpoint stands: its status for sweep.json, its rows, its exit code."""

    status: str = "incomplete"  # complete | incomplete | failed
    error: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    cards: list[dict[str, Any]] = field(default_factory=list)  # sweep.json's judge_card entries
    exit_code: int = 1
    timing: dict[str, Any] = field(default_factory=dict)  # ready_at, ready_to_first_request_s, served_by


@dataclass
class SweepResult:
    exit_code: int
    document: dict[str, Any]


class Sweep:
    """One ``jurist sweep``: the scheduling, the two phases of each checkpoint, the files at the end."""

    def __init__(
        self,
        plan: SweepPlan,
        console: Console | None = None,
        *,
        server_factory: ServerFactory | None = None,
        ray_address: str | None = None,
        watcher: CheckpointWatcher | None = None,
        trackers: Trackers | None = None,
        plots: bool = False,
        warm_swap: bool = False,
    ) -> None:
        self.plan = plan
        self.console = console or Console(stderr=True)
        self.factory = server_factory  # None: each serve kind's own server (tests pass a stand-in)
        self.ray_address = ray_address  # None: local slots; "" a local Ray instance; else its address
        self.states = {c.name: CheckpointState() for c in plan.checkpoints}
        self.live = LiveEngines()
        self._logs: dict[str, IO[str]] = {}
        self._judging: list[asyncio.Task[None]] = []
        self.watcher = watcher  # --watch: checkpoints join the queue as training completes them
        self.trackers = trackers  # --track: each checkpoint's points logged as soon as it is scored
        self.plots = plots  # --watch: the curves redrawn after each checkpoint (else once, at the end)
        self._plot_lock = threading.Lock()  # one writer of the plot files (their partial names collide)
        if warm_swap and (plan.local or ray_address is not None):
            raise JuristError("--warm-swap moves a vLLM server on local slots: not with --local or --ray")
        self.warm_swap = warm_swap  # a slot keeps its vLLM server and swaps in each next checkpoint
        self._kept: list[KeptServer] = []  # the slots' kept servers, for a forced stop
        if watcher is not None:
            self._keep_finished(watcher)

    # -- the whole sweep -------------------------------------------------------------------------------------
    def run(self) -> SweepResult:
        """Run (or resume) the sweep; sweep.json is written however it ends."""
        self.plan.out.mkdir(parents=True, exist_ok=True)
        write_models_file(self.plan)
        self._write()
        if self.trackers is not None:  # points a failed tracker missed last time, before any new one
            self.trackers.log_rows(self._rows())
        try:
            run_interruptibly(self._main, self._force_stop)
        finally:
            for handle in self._logs.values():
                handle.close()
            self._write()
        codes = [state.exit_code for state in self.states.values()]
        complete = all(state.status == "complete" for state in self.states.values())
        return SweepResult(0 if complete else max([1, *codes]), self._document())

    def _force_stop(self) -> None:
        self.live.stop_all()
        for kept in self._kept:
            kept.stop()
        self.console.print(FORCED_STOP, style="yellow", markup=False, highlight=False)

    async def _main(self, interrupt: GracefulInterrupt) -> None:
        interrupt.attach()
        with new_progress(self.console, self.plan.progress) as bars:
            judging = JudgePhase(self.plan, self.console, bars, self.live)
            generated = self._generated(judging)
            try:
                if self.ray_address is not None:
                    from jurist.sweep.ray_backend import ray_generation

                    watched = self._arrivals(self.watcher) if self.watcher is not None else None
                    address, factory = self.ray_address, self.factory
                    await ray_generation(self.plan, address, generated, self.console, factory, watched)
                elif self.watcher is not None:
                    await self._watched_generation(self.watcher, bars, generated)
                else:
                    await self._local_generation(bars, generated)
                await all_or_none(list(self._judging))
            finally:
                for task in self._judging:
                    task.cancel()
                await asyncio.gather(*self._judging, return_exceptions=True)
                await judging.aclose()

    # -- generation on local slots ---------------------------------------------------------------------------
    async def _local_generation(self, bars: StageProgress, generated: Generated) -> None:
        queue = deque(self.plan.checkpoints)

        async def slot(gpus: tuple[int, ...] | None) -> None:
            keep = self._slot_server()
            try:
                while queue:
                    await self._generate(queue.popleft(), gpus, bars, generated, keep)
            finally:
                await _stop_kept(keep)

        await all_or_none([slot(gpus) for gpus in self.plan.slots])

    def _slot_server(self) -> KeptServer | None:
        """The server a slot keeps between checkpoints (``--warm-swap``); None: one per checkpoint."""
        if not self.warm_swap:
            return None
        keep = KeptServer()
        self._kept.append(keep)
        return keep

    async def _generate(
        self,
        checkpoint: Checkpoint,
        gpus: tuple[int, ...] | None,
        bars: StageProgress,
        generated: Generated,
        keep: KeptServer | None = None,
    ) -> None:
        self._say(f"{checkpoint.name}: generating {slot_words(gpus)}")
        outcome = await generate_checkpoint(
            self.plan,
            checkpoint,
            gpus,
            console=self.runs_console(checkpoint),
            bars=bars,
            live=self.live,
            factory=self.factory,
            notify=self.console,
            keep=keep,
        )
        generated(checkpoint, outcome)

    # -- generation as training writes checkpoints (--watch) ----------------------------------------------
    async def _watched_generation(
        self, watcher: CheckpointWatcher, bars: StageProgress, generated: Generated
    ) -> None:
        """Slots take checkpoints from a queue that the watcher's arrivals feed; once watching stops (stop
        file, --until-step), the slots finish what is queued and the sweep ends."""
        queue: asyncio.Queue[Checkpoint | None] = asyncio.Queue()

        async def feed() -> None:
            async for checkpoint in self._arrivals(watcher):
                queue.put_nowait(checkpoint)
            for _ in self.plan.slots:
                queue.put_nowait(None)

        async def slot(gpus: tuple[int, ...] | None) -> None:
            keep = self._slot_server()
            try:
                while (checkpoint := await queue.get()) is not None:
                    await self._generate(checkpoint, gpus, bars, generated, keep)
            finally:
                await _stop_kept(keep)

        await all_or_none([feed(), *(slot(gpus) for gpus in self.plan.slots)])

    async def _arrivals(self, watcher: CheckpointWatcher) -> AsyncIterator[Checkpoint]:
        """Each checkpoint as training completes it (a look at the folder every ``poll_s``), joined to
        the plan and sweep.json, until watching stops; the slots' queue or Ray (``--ray``) takes them."""
        self._say(f"watching {watcher.rules.directory} for complete checkpoints")
        while True:
            for checkpoint in await asyncio.to_thread(watcher.look):
                self._add(checkpoint)
                yield checkpoint
            if watcher.stop_reason is not None:
                self._say(f"watching stopped: {watcher.stop_reason}; finishing what is queued")
                for name, (path, why) in sorted(watcher.skipped.items()):
                    self._skip(Checkpoint(name, step_of(name) or 0, path), why)
                return
            await asyncio.sleep(watcher.rules.poll_s)

    def _add(self, checkpoint: Checkpoint) -> None:
        """A checkpoint training just completed joins the plan, the models file and sweep.json."""
        self.plan = dataclasses.replace(self.plan, checkpoints=(*self.plan.checkpoints, checkpoint))
        state = self.states[checkpoint.name] = CheckpointState()
        ready = self.watcher.ready_at.get(checkpoint.name) if self.watcher is not None else None
        if ready is not None:
            state.timing["ready_at"] = _utc(ready)
        write_models_file(self.plan)
        self._say(f"{checkpoint.name}: complete on disk (step {checkpoint.step}); queued")
        self._write()

    def _skip(self, checkpoint: Checkpoint, why: str) -> None:
        """A checkpoint on disk when watching stopped that never became complete: in sweep.json as
        skipped (the exit code says so; a re-run evaluates it)."""
        self.plan = dataclasses.replace(self.plan, checkpoints=(*self.plan.checkpoints, checkpoint))
        self.states[checkpoint.name] = CheckpointState("skipped", error=why, exit_code=SKIPPED_EXIT)
        self._say(f"{checkpoint.name}: skipped: {why} (run the same command again to evaluate it)", "yellow")
        self._write()

    def _keep_finished(self, watcher: CheckpointWatcher) -> None:
        """Checkpoints an earlier sweep of this folder finished, kept with their rows (a re-run of
        ``--watch`` evaluates only what is new); the others are watched for like new ones."""
        try:
            earlier = json.loads((self.plan.out / SWEEP_JSON).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(earlier, dict):
            return
        rows = [r for r in earlier.get("results") or [] if isinstance(r, dict)]
        cards = [e for e in earlier.get("judge_card") or [] if isinstance(e, dict)]
        kept = []
        for entry in earlier.get("checkpoints") or []:
            if not isinstance(entry, dict) or entry.get("status") != "complete":
                continue
            name, step, path = entry.get("name"), entry.get("step"), entry.get("path")
            if not isinstance(name, str) or not isinstance(step, int) or not isinstance(path, str):
                continue
            state = self.states[name] = CheckpointState("complete", exit_code=0)
            state.rows = [row for row in rows if row.get("checkpoint") == name]
            state.cards = [entry for entry in cards if entry.get("checkpoint") == name]
            state.timing = {k: entry[k] for k in _TIMING if k in entry}
            kept.append(Checkpoint(name, step, Path(path)))
            watcher.known.add(name)
        if kept:
            self.plan = dataclasses.replace(self.plan, checkpoints=(*self.plan.checkpoints, *kept))

    # -- judging as checkpoints come in ---------------------------------------------------------------------
    def _generated(self, judging: JudgePhase) -> Generated:
        def generated(checkpoint: Checkpoint, outcome: PhaseOutcome) -> None:
            state = self.states[checkpoint.name]
            state.error = outcome.error
            ready = self.watcher.ready_at.get(checkpoint.name) if self.watcher is not None else None
            if ready is not None and outcome.first_request_at is not None:
                state.timing["ready_to_first_request_s"] = round(outcome.first_request_at - ready, 3)
            if outcome.served_by is not None:
                state.timing["served_by"] = outcome.served_by
            if outcome.status == "failed":
                state.status, state.exit_code = "failed", max(1, outcome.exit_code)
                self._say(f"{checkpoint.name}: failed: {outcome.error}", style="yellow")
                self._write()
                return
            self._say(f"{checkpoint.name}: answers done; judging and scoring")
            task = asyncio.ensure_future(self._judge(judging, checkpoint, outcome))
            self._judging.append(task)

        return generated

    async def _judge(self, judging: JudgePhase, checkpoint: Checkpoint, generated: PhaseOutcome) -> None:
        outcome = await judging.judge(checkpoint, self.runs_console(checkpoint))
        state = self.states[checkpoint.name]
        rows, cards = [], []
        for task, result in outcome.results.items():
            try:
                rows.extend(result_rows(self.plan, checkpoint, task, outcome.plans[task], result))
            except (OSError, ValueError, KeyError, TypeError) as exc:  # a run directory it cannot read
                log.exception("%s: the results of %s", checkpoint.name, task)
                outcome.status, outcome.error = "incomplete", f"{task}: results not read: {one_line(exc)}"
            cards.extend(card_entries(self.plan, checkpoint, task, outcome.plans[task], self._say))
        state.rows, state.cards = rows, cards
        errors = [e for e in (generated.error, outcome.error) if e]
        state.error = "; ".join(errors) or None
        both_done = generated.status == "done" and outcome.status == "done"
        state.status = "complete" if both_done else "incomplete"
        state.exit_code = max(generated.exit_code, outcome.exit_code)
        words = ", ".join(f"{r['task']} {r['metric']} {_shown(r['value'])}" for r in rows)
        self._say(f"{checkpoint.name}: {state.status}" + (f": {words}" if words else ""))
        self._write()
        if self.trackers is not None:
            await asyncio.to_thread(self.trackers.log_rows, self._rows())
        if self.plots:
            await asyncio.to_thread(self.write_plots)

    def write_plots(self) -> None:
        """The curves drawn by one writer at a time: a checkpoint's redraw and the end's never overlap."""
        from jurist.sweep.report import write_plots

        with self._plot_lock:
            write_plots(self.plan, self.console)

    # -- output ---------------------------------------------------------------------------------------------
    def runs_console(self, checkpoint: Checkpoint) -> Console:
        """Where a checkpoint's runs print their notes and tables: ``SWEEP_DIR/<checkpoint>/sweep.log``."""
        handle = self._logs.get(checkpoint.name)
        if handle is None:
            path = self.plan.out / checkpoint.name / "sweep.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._logs[checkpoint.name] = path.open("a", encoding="utf-8")
        return Console(file=handle, width=160, force_terminal=False, color_system=None)

    def _say(self, text: str, style: str = "dim") -> None:
        self.console.print(text, style=style, markup=False, highlight=False)

    def _judges(self) -> list[str]:
        named = {str(row["judge"]) for s in self.states.values() for row in s.rows if row.get("judge")}
        if named or not self.plan.judged_tasks:
            return sorted(named)
        return list(self.plan.judges) or [EMBEDDED_ALIAS]

    def _rows(self) -> list[dict[str, Any]]:
        return [row for c in self.plan.checkpoints for row in self.states[c.name].rows]

    def _document(self) -> dict[str, Any]:
        states = {name: (state.status, state.error) for name, state in self.states.items()}
        timings = {name: state.timing for name, state in self.states.items() if state.timing}
        cards = [entry for c in self.plan.checkpoints for entry in self.states[c.name].cards]
        return sweep_document(self.plan, states, self._rows(), self._judges(), timings, cards)

    def _write(self) -> None:
        write_sweep_files(self.plan, self._document())


_TIMING = ("ready_at", "ready_to_first_request_s", "served_by")  # kept from an earlier --watch sweep


async def _stop_kept(keep: KeptServer | None) -> None:
    """A slot's kept server stopped as the slot ends, however it ends (cancelled: stopped all the same)."""
    if keep is None:
        return
    stopping = asyncio.ensure_future(asyncio.to_thread(keep.stop))
    try:
        await asyncio.shield(stopping)
    except asyncio.CancelledError:
        keep.stop()  # the thread stops the process group; this only makes sure it was asked
        raise


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _shown(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, (int, float)) else "-"
