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

from jurist.engine.client import Engine
from jurist.errors import JuristError
from jurist.report.progress import StageProgress
from jurist.run.pipeline import Pipeline
from jurist.run.tasks import open_runs
from jurist.sweep.checkpoints import Checkpoint
from jurist.sweep.phases import (
    LiveEngines,
    PhaseOutcome,
    build_pipelines,
    close_phase,
    finish_all,
    one_line,
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
        pipelines, problems = await asyncio.to_thread(build_pipelines, configs, runs_console, placed)
        plans = {task: pipeline.plan for task, pipeline in pipelines.items()}
        engines: dict[str, Engine] = {}
        stopped: str | None = None
        with ExitStack() as stack:
            try:
                open_runs(pipelines.values(), stack)
            except JuristError as exc:
                return PhaseOutcome("failed", one_line(exc))
            engines = {task: p.new_engine(shares=self.engine) for task, p in pipelines.items()}
            try:
                stopped = await run_stages(pipelines, engines, self.bars, f"{checkpoint.name} ")
            finally:
                await self._close(pipelines, engines)
            results = await asyncio.to_thread(finish_all, pipelines, engines, stopped)
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

    async def _close(self, pipelines: dict[str, Pipeline], engines: dict[str, Engine]) -> None:
        """The sibling engines' sessions closed and failure logs closed; the shared root stays open."""
        for engine in engines.values():
            await engine.aclose()
        for task, pipeline in pipelines.items():
            if task in engines:
                pipeline.close_engine(engines[task])

    async def aclose(self) -> None:
        """Stop the judges' servers and write the cache back: the sweep is over."""
        try:
            await close_phase({}, {}, self.engine)
        finally:
            if self.live is not None:
                self.live.remove(self.engine)
