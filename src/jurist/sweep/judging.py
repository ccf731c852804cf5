"""The judging phase of the sweep: each checkpoint's answers judged and scored, on the judges' own limit.

Each task of a generated checkpoint runs again in ``judge-only`` mode in the same run directory: judged
tasks send their judge requests, rule-checked tasks only score. All checkpoints' judging shares one root
engine, so ``--judge-concurrency`` bounds the judge requests of the whole sweep, a judge that jurist serves
(the embedded model) starts once, and judging a checkpoint overlaps the generation of the next ones.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack

from rich.console import Console

from jurist.errors import JuristError
from jurist.report.progress import StageProgress
from jurist.run.session import Session
from jurist.sweep.checkpoints import Checkpoint
from jurist.sweep.phases import (
    LiveEngines,
    PhaseOutcome,
    build_runs,
    close_phase,
    finish_all,
    one_line,
    phase_session,
    root_engine,
    run_stages,
)
from jurist.sweep.plan import SweepPlan, checkpoint_spec, judging_config


class JudgePhase:
    """Judges the checkpoints handed to it, any number at once, under one judge limit."""

    def __init__(
        self, plan: SweepPlan, console: Console, bars: StageProgress, live: LiveEngines | None = None
    ) -> None:
        self.plan = plan
        self.console = console
        self.bars = bars
        self.live = live

        def say(text: str) -> None:
            console.print(text, style="dim", markup=False, highlight=False)

        self.engine = root_engine(plan, plan.judge_concurrency, plan.out / "logs", say)
        if live is not None:
            live.add(self.engine)

    async def judge(self, checkpoint: Checkpoint, runs_console: Console) -> PhaseOutcome:
        """Judge and score every task of ``checkpoint`` from its answers on disk."""
        plan = self.plan
        configs = {task: judging_config(plan, checkpoint, task) for task in plan.tasks}
        # nothing is generated; run.json still says what was judged
        placed = {checkpoint.name: checkpoint_spec(plan, checkpoint)}
        runs, problems = await asyncio.to_thread(build_runs, configs, runs_console, placed)
        session = phase_session(runs, self.engine, f"{checkpoint.name} ", owns_root=False)
        plans = {task: run.plan for task, run in runs.items()}
        stopped: str | None = None
        with ExitStack() as stack:
            try:
                session.open(stack)
            except JuristError as exc:
                return PhaseOutcome("failed", one_line(exc))
            try:
                stopped = await run_stages(session, self.bars, f"{checkpoint.name} ")
            finally:
                await close_phase(session)  # the shared root stays open
            results = await asyncio.to_thread(finish_all, session, stopped)
        if stopped is not None:
            return PhaseOutcome("failed", stopped, plans=plans)
        error = "; ".join(f"{task}: {problem}" for task, problem in problems.items()) or None
        clean = not problems and all(result.exit_code == 0 for result in results.values())
        if not clean and error is None:
            failed = sum(result.failures for result in results.values())
            error = f"{failed} judge request(s) failed; run the sweep again to retry them"
            if not failed:
                error = "some task could not be scored (see its run directory)"
        return PhaseOutcome("done" if clean else "incomplete", error, results, plans)

    async def aclose(self) -> None:
        """Stop the judges' servers and write the cache back: the sweep is over."""
        try:
            await close_phase(Session({}, root=self.engine))
        finally:
            if self.live is not None:
                self.live.remove(self.engine)
