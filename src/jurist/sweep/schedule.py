"""The sweep: checkpoints from one shared queue onto GPU slots, judging beside the next generation.

Each slot (a group of ``--tensor-parallel`` GPUs, or a CPU slot) takes the next checkpoint from the
queue, generates every task's answers on its own server, stops the server and takes the next, so a slot
that finishes early never waits for a fixed shard and more checkpoints than slots run in rounds. With
``--ray`` Ray places each checkpoint's generation on a free node instead (:mod:`jurist.sweep.ray_backend`).
As each checkpoint's answers are in, its judging starts under the judges' own limit while generation goes
on. One checkpoint failing is recorded and skipped. Ctrl-C / SIGTERM cancel everything: each phase stops
its servers and marks its runs interrupted, and sweep.json is written with what is done.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from rich.console import Console

from jurist.engine.embedded import EMBEDDED_ALIAS
from jurist.engine.pool import ServerFactory
from jurist.report.progress import StageProgress
from jurist.run.generate import new_progress
from jurist.run.interrupts import FORCED_STOP, GracefulInterrupt, run_interruptibly
from jurist.run.session import all_or_none
from jurist.sweep.checkpoints import Checkpoint
from jurist.sweep.generation import generate_checkpoint, slot_words
from jurist.sweep.judging import JudgePhase
from jurist.sweep.phases import LiveEngines, PhaseOutcome, one_line
from jurist.sweep.plan import SweepPlan, write_models_file
from jurist.sweep.results import result_rows, sweep_document, write_sweep_files

log = logging.getLogger("jurist.sweep")

Generated = Callable[[Checkpoint, PhaseOutcome], None]
"""Told each checkpoint's generation outcome as soon as it has one."""


@dataclass
class CheckpointState:
    """Where one checkpoint stands: its status for sweep.json, its rows, its exit code."""

    status: str = "incomplete"  # complete | incomplete | failed
    error: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int = 1


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
    ) -> None:
        self.plan = plan
        self.console = console or Console(stderr=True)
        self.factory = server_factory  # None: each serve kind's own server (tests pass a stand-in)
        self.ray_address = ray_address  # None: local slots; "" a local Ray instance; else its address
        self.states = {c.name: CheckpointState() for c in plan.checkpoints}
        self.live = LiveEngines()
        self._logs: dict[str, IO[str]] = {}
        self._judging: list[asyncio.Task[None]] = []

    # -- the whole sweep -------------------------------------------------------------------------------------
    def run(self) -> SweepResult:
        """Run (or resume) the sweep; sweep.json is written however it ends."""
        self.plan.out.mkdir(parents=True, exist_ok=True)
        write_models_file(self.plan)
        self._write()
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
        self.console.print(FORCED_STOP, style="yellow", markup=False, highlight=False)

    async def _main(self, interrupt: GracefulInterrupt) -> None:
        interrupt.attach()
        with new_progress(self.console, self.plan.progress) as bars:
            judging = JudgePhase(self.plan, self.console, bars, self.live)
            try:
                if self.ray_address is not None:
                    from jurist.sweep.ray_backend import ray_generation

                    await ray_generation(
                        self.plan, self.ray_address, self._generated(judging), self.console, self.factory
                    )
                else:
                    await self._local_generation(bars, self._generated(judging))
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
            while queue:
                checkpoint = queue.popleft()
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
                )
                generated(checkpoint, outcome)

        await all_or_none([slot(gpus) for gpus in self.plan.slots])

    # -- judging as checkpoints come in ---------------------------------------------------------------------
    def _generated(self, judging: JudgePhase) -> Generated:
        def generated(checkpoint: Checkpoint, outcome: PhaseOutcome) -> None:
            state = self.states[checkpoint.name]
            state.error = outcome.error
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
        rows = []
        for task, result in outcome.results.items():
            try:
                rows.extend(result_rows(self.plan, checkpoint, task, outcome.plans[task], result))
            except (OSError, ValueError, KeyError, TypeError) as exc:  # a run directory it cannot read
                log.exception("%s: the results of %s", checkpoint.name, task)
                outcome.status, outcome.error = "incomplete", f"{task}: results not read: {one_line(exc)}"
        state.rows = rows
        errors = [e for e in (generated.error, outcome.error) if e]
        state.error = "; ".join(errors) or None
        both_done = generated.status == "done" and outcome.status == "done"
        state.status = "complete" if both_done else "incomplete"
        state.exit_code = max(generated.exit_code, outcome.exit_code)
        words = ", ".join(f"{r['task']} {r['metric']} {_shown(r['value'])}" for r in rows)
        self._say(f"{checkpoint.name}: {state.status}" + (f": {words}" if words else ""))
        self._write()

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

    def _document(self) -> dict[str, Any]:
        states = {name: (state.status, state.error) for name, state in self.states.items()}
        rows = [row for c in self.plan.checkpoints for row in self.states[c.name].rows]
        return sweep_document(self.plan, states, rows, self._judges())

    def _write(self) -> None:
        write_sweep_files(self.plan, self._document())


def _shown(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, (int, float)) else "-"


def run_sweep(
    plan: SweepPlan,
    console: Console | None = None,
    *,
    server_factory: ServerFactory | None = None,
    ray_address: str | None = None,
    plots: bool = True,
) -> SweepResult:
    """The sweep, then its table and plots; KeyboardInterrupt (after sweep.json is written) when stopped."""
    console = console or Console(stderr=True)
    result = Sweep(plan, console, server_factory=server_factory, ray_address=ray_address).run()
    from jurist.sweep.report import print_summary, write_plots

    print_summary(plan, result.document)
    if plots:
        write_plots(plan, console)
    return result
