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
from jurist.report import StageProgress
from jurist.run import Session
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
from jurist.sweep.plan import BASELINES_DIR, SweepPlan, baseline_config, checkpoint_spec, judging_config


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
        self._baselines: asyncio.Future[str | None] | None = None

    async def baselines_ready(self) -> str | None:
        """The ``--baseline`` models' answers, generated once for every checkpoint (the first caller
        starts it, the others wait for it): None once they are in, else in one line why not."""
        if self._baselines is None:
            self._baselines = asyncio.ensure_future(self._generate_baselines())
        return await asyncio.shield(self._baselines)

    async def _generate_baselines(self) -> str | None:
        plan = self.plan
        configs = {task: baseline_config(plan, task) for task in plan.tasks if plan.generated_baseline(task)}
        if not configs:
            return None
        log = plan.out / BASELINES_DIR / "sweep.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as handle:
            console = Console(file=handle, width=160, force_terminal=False, color_system=None)
            runs, problems = await asyncio.to_thread(build_runs, configs, console)
            session = phase_session(runs, self.engine, "baseline ", owns_root=False)
            with ExitStack() as stack:
                try:
                    session.open(stack)
                except JuristError as exc:
                    return one_line(exc)
                try:
                    stopped = await run_stages(session, self.bars, "baseline ")
                finally:
                    await close_phase(session)
                results = await asyncio.to_thread(finish_all, session, stopped)
        if stopped is not None:
            return stopped
        if problems:
            return "; ".join(f"{task}: {problem}" for task, problem in problems.items())
        failed = sum(result.failures for result in results.values())
        if failed:
            return f"{failed} baseline answer request(s) failed; run the sweep again to retry them"
        return None

    async def judge(self, checkpoint: Checkpoint, runs_console: Console) -> PhaseOutcome:
        """Judge and score every task of ``checkpoint`` from its answers on disk."""
        plan = self.plan
        missing = await self.baselines_ready()
        if missing is not None:
            return PhaseOutcome("incomplete", f"the --baseline answers: {missing}")
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
        if self._baselines is not None and not self._baselines.done():
            self._baselines.cancel()
            await asyncio.gather(self._baselines, return_exceptions=True)
        try:
            await close_phase(Session({}, root=self.engine))
        finally:
            if self.live is not None:
                self.live.remove(self.engine)
