"""What the two phases of a checkpoint share: its runs' plans resolved, their session (one per phase)
driven from the sweep's event loop, and a problem told in one line.

A phase is a :class:`~jurist.run.session.Session` of one run per task, with sibling engines under one
root engine that the sweep makes: the root holds the limits, connections, request cache and servers that
the tasks share, and only the root stops those servers. Nothing here changes how a run works: a phase
goes through the same life cycle as ``jurist run --tasks``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from jurist.config import ModelSpec
from jurist.engine import Engine, KeptServer, ServerFactory, ServerPool, open_cache
from jurist.errors import JuristError, StorageError
from jurist.report import StageProgress
from jurist.run import Pipeline, RunConfig, RunPlan, RunResult, Session, resolve
from jurist.sweep.plan import SweepPlan

log = logging.getLogger("jurist.sweep")

Status = Literal["done", "incomplete", "failed"]


@dataclass
class PhaseOutcome:
    """How one phase of one checkpoint ended: done (every task exited 0), incomplete (some requests
    failed or some task could not run: re-running retries them), failed (nothing more can be done now)."""

    status: Status
    error: str | None = None
    results: dict[str, RunResult] = field(default_factory=dict)
    plans: dict[str, RunPlan] = field(default_factory=dict)
    """Each task's plan, for reading its results (the runs themselves are let go)."""
    first_request_at: float | None = None
    """When the phase's first request went on the wire (epoch seconds; None: it sent none)."""
    served_by: str | None = None
    """Generation: how the checkpoint's server came up (cold start, warm swap, why not warm; cold start)."""

    @property
    def exit_code(self) -> int:
        codes = [result.exit_code for result in self.results.values()]
        worst = max(codes, default=0)
        return worst if self.status == "done" else max(worst, 1)


class LiveEngines:
    """The root engines running now, so that a forced stop (a second Ctrl-C) stops every server."""

    def __init__(self) -> None:
        self._engines: list[Engine] = []

    def add(self, engine: Engine) -> None:
        self._engines.append(engine)

    def remove(self, engine: Engine) -> None:
        if engine in self._engines:
            self._engines.remove(engine)

    def stop_all(self) -> None:
        for engine in list(self._engines):
            engine.close_servers()
            if engine.cache is not None:
                engine.cache.close()


def one_line(exc: BaseException) -> str:
    """An error as one line for sweep.json: its first line, and the last line of a server log tail."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    text = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
    return text if len(text) <= 400 else text[:397] + "..."


def root_engine(
    plan: SweepPlan,
    max_concurrency: int,
    log_dir: Path,
    notify: Callable[[str], None],
    factory: ServerFactory | None = None,
    keep: KeptServer | None = None,
) -> Engine:
    """The engine a phase's tasks share (as siblings): limits, connections, cache, servers (``keep``: the
    slot's server kept between checkpoints, for warm swaps)."""
    extra: dict[str, Any] = {}
    if plan.local:  # served models load in this process (jurist.engine.local), no server starts
        from jurist.engine import LocalModels

        extra["local"] = LocalModels(notify=notify)
    return Engine(
        {},
        max_concurrency=max_concurrency,
        policy=plan.retry,
        cache=open_cache(plan.cache_path, enabled=plan.cache),
        pool=ServerPool(notify=notify, log_dir=log_dir, factory=factory, keep=keep),
        **extra,
    )


def build_runs(
    configs: dict[str, RunConfig], console: Console, placed: Mapping[str, ModelSpec] | None = None
) -> tuple[dict[str, Pipeline], dict[str, str]]:
    """One run per task, its plan resolved (``placed``: the checkpoint's spec, replacing the models
    file's); a task whose plan cannot be made (say, no answers to judge) is left out with its one-line
    reason."""
    runs: dict[str, Pipeline] = {}
    problems: dict[str, str] = {}
    for task, config in configs.items():
        try:
            runs[task] = Pipeline(resolve(config, placed=placed), console)
        except JuristError as exc:
            problems[task] = one_line(exc)
    return runs, problems


def phase_session(runs: dict[str, Pipeline], root: Engine, prefix: str, *, owns_root: bool) -> Session:
    """The session of one phase: its tasks' runs as siblings of ``root``, their bars named
    ``<prefix><task>: ``."""
    labels = {task: f"{prefix}{task}: " for task in runs}
    return Session(runs, root=root, owns_root=owns_root, labels=labels)


async def run_stages(
    session: Session, bars: StageProgress, prefix: str, watch: Awaitable[str] | None = None
) -> str | None:
    """Every task's stages at once; None when they ended, else in one line why they were stopped: an
    error (one checkpoint's failure must not stop the sweep), or ``watch``'s reason (it ends when the
    server they use dies). When cancelled, each run is marked interrupted."""
    try:
        return await session.stages(bars, watch)
    except asyncio.CancelledError:
        session.interrupted()
        raise
    except StorageError:  # the disk is full: every other checkpoint would fail the same way
        raise
    except Exception as exc:  # noqa: BLE001
        if not isinstance(exc, JuristError):
            log.exception("%s: stopped by an unexpected error", prefix.strip())
        return one_line(exc)


async def close_phase(session: Session) -> None:
    """Sessions closed, the root's servers stopped and its cache written back (when the phase owns it),
    failure logs closed."""
    try:
        await session.aclose()
    finally:
        session.close()


def finish_all(session: Session, stopped: str | None) -> dict[str, RunResult]:
    """Each run scored and run.json written as finished; or, when the phase was stopped, written as
    interrupted (nothing to score), so a re-run resumes it."""
    if stopped is not None:
        session.interrupted()
        return {}
    return session.finish()
