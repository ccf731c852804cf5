"""A checkpoint's generation phase: its server up on its slot's GPUs, every task's answers, server down.

Each task is a normal run in ``inference-only`` mode, in ``SWEEP_DIR/<checkpoint>/<task>``, so what is on
disk is exactly what ``jurist run`` would have written and a re-run sends only what is missing. The tasks
share one root engine whose pool starts the checkpoint's server on the first request (with its GPU ids as
``CUDA_VISIBLE_DEVICES``) and stops it when the phase ends, however it ends. A server that dies while
answering ends the phase at once with its exit code and the last line of its log, instead of every
request failing through its retries.

With ``--warm-swap`` a slot passes its :class:`~jurist.engine.KeptServer`: the server of the slot's
previous checkpoint is moved to this checkpoint's weights instead of a new one being started (vLLM's sleep
mode; a cold start where it cannot), and left running at the end of the phase for the next checkpoint.
The outcome says how the checkpoint was served (``served_by``).
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console

from jurist.engine import KeptServer, ServerFactory, ServerPool
from jurist.errors import JuristError
from jurist.report import StageProgress
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
from jurist.sweep.plan import GpuSlot, SweepPlan, checkpoint_spec, generation_config

_WATCH_S = 0.5


def dead_server(pool: ServerPool) -> str | None:
    """Why a server of ``pool`` is no longer running (None while every one runs)."""
    for alias, server in pool.servers.items():
        process = server.process
        code = process.poll() if process is not None else None
        if code is None:
            continue
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = [line for line in server.log_tail().splitlines() if line.strip()]
        last = f"; its log ends: {tail[-1].strip()}" if tail else ""
        return f"the {server.name} of {alias} {how} while answering{last}"
    return None


async def watch_servers(pool: ServerPool) -> str:
    """Return (with why) as soon as a server of ``pool`` has exited; run until cancelled otherwise."""
    while True:
        await asyncio.sleep(_WATCH_S)
        found = dead_server(pool)
        if found is not None:
            return found


def served_by(pool: ServerPool | None, alias: str) -> str | None:
    """How the checkpoint's server came up in this phase (None: it runs in-process, ``--local``)."""
    if pool is None:
        return None
    return pool.served_by.get(alias, "no server started: nothing left to send")


def slot_words(gpus: GpuSlot) -> str:
    if gpus is None:
        return "on CPU"
    return f"on GPU {gpus[0]}" if len(gpus) == 1 else f"on GPUs {','.join(str(g) for g in gpus)}"


async def generate_checkpoint(
    plan: SweepPlan,
    checkpoint: Checkpoint,
    gpus: GpuSlot,
    *,
    console: Console,
    bars: StageProgress,
    live: LiveEngines | None = None,
    root: Path | None = None,
    factory: ServerFactory | None = None,
    notify: Console | None = None,
    keep: KeptServer | None = None,
) -> PhaseOutcome:
    """Every task's missing answers for ``checkpoint`` on a server placed on ``gpus``.

    ``root``: where the run directories are (default: the sweep's directory; a Ray worker passes its
    node-local copy). ``console`` takes the runs' own messages and tables; ``notify`` (default
    ``console``) the lines worth showing while the sweep runs. ``keep``: the slot's server kept between
    checkpoints (``--warm-swap``).
    """
    shown = notify or console
    try:
        spec = checkpoint_spec(plan, checkpoint, gpus)
    except JuristError as exc:
        return PhaseOutcome("failed", one_line(exc))
    configs = {task: generation_config(plan, checkpoint, task, root) for task in plan.tasks}
    # the models file's entry of the checkpoint, placed on this slot's GPUs
    runs, problems = await asyncio.to_thread(build_runs, configs, console, {checkpoint.name: spec})
    if problems:
        task, problem = next(iter(problems.items()))
        return PhaseOutcome("failed", f"{task}: {problem}")

    def say(text: str) -> None:
        shown.print(f"{checkpoint.name}: {text}", style="dim", markup=False, highlight=False)

    base = root or plan.out
    engine = root_engine(plan, plan.max_concurrency, base / checkpoint.name / "logs", say, factory, keep)
    session = phase_session(runs, engine, f"{checkpoint.name} ", owns_root=True)
    plans = {task: run.plan for task, run in runs.items()}
    stopped: str | None = None
    with ExitStack() as stack:
        try:
            session.open(stack)
        except JuristError as exc:  # a run directory in use by another jurist
            await close_phase(session)
            return PhaseOutcome("failed", one_line(exc))
        if live is not None:
            live.add(engine)
        try:
            pool = engine.pool
            watch = watch_servers(pool) if pool is not None else None
            stopped = await run_stages(session, bars, f"{checkpoint.name} ", watch)
            if stopped is None and pool is not None:  # it died after the last requests failed fast
                stopped = dead_server(pool)
        finally:
            await close_phase(session)
            if live is not None:
                live.remove(engine)
        results = await asyncio.to_thread(finish_all, session, stopped)
    sent = [e.ledger.first_sent for e in session.engines.values() if e.ledger.first_sent is not None]
    first = min(sent, default=None)
    served = None if plan.local else served_by(engine.pool, checkpoint.name)
    if stopped is not None:
        say(f"failed: {stopped}")
        return PhaseOutcome("failed", stopped, plans=plans, first_request_at=first, served_by=served)
    outcome = PhaseOutcome(
        "done" if all(r.exit_code == 0 for r in results.values()) else "incomplete",
        results=results,
        plans=plans,
        first_request_at=first,
        served_by=served,
    )
    if outcome.status == "incomplete":
        failed = sum(r.failures for r in results.values())
        outcome.error = f"{failed} answer request(s) failed; run the sweep again to retry them"
    return outcome
