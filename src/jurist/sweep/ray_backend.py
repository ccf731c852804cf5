"""``jurist sweep --ray``: each checkpoint's generation as a Ray task that asks for the GPUs it needs.

Ray places every task on a node with room (``num_gpus``: the checkpoint server's width; Ray sets the
task's ``CUDA_VISIBLE_DEVICES`` and :func:`ray.get_gpu_ids` says which) and starts the next as soon as one
ends, so the queue is Ray's own, not a scheduler of jurist's. A task starts the checkpoint's server on its
node, writes the runs into a node-local temporary directory (resuming from the partial run directory the
driver ships with it) and sends the directory back as an archive; the driver unpacks it into
``SWEEP_DIR/<checkpoint>/``, so the driver's directory is complete and resumable, and judges there.
With ``--watch`` the checkpoints arrive one by one as training completes them, each submitted at once;
a task says when its first request left (the node's clock), for sweep.json's ``ready_to_first_request_s``.
Ray is optional (``pip install 'jurist[ray]'``) and imported only here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console

from jurist.engine import ServerFactory
from jurist.errors import JuristError
from jurist.store import RunDirLock, pack, unpack
from jurist.sweep.checkpoints import Checkpoint
from jurist.sweep.phases import PhaseOutcome, Status, one_line
from jurist.sweep.plan import SweepPlan

RAY_HINT = "pip install 'jurist[ray]'"
CANCEL_GRACE_S = 15.0  # how long a cancelled task has to stop its server before the driver goes on:
# under the interrupt handler's grace (run/interrupts.py GRACE_S, 20 s), which then stops everything
# The driver's settings that a task on its node needs to find data and the cache the same way.
_FORWARDED_ENV = ("JURIST_DATA_DIR", "JURIST_CACHE_DIR", "NLTK_DATA", "HF_HOME")


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise JuristError(f"--ray needs Ray, which is not installed: {RAY_HINT}") from None
    return ray


# -- the task, on a Ray worker ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RemoteJob:
    plan: SweepPlan
    checkpoint: Checkpoint
    archive: bytes | None  # the driver's partial run directories of the checkpoint (a resumed sweep)
    gpus: int  # how many GPUs the task asked Ray for (0: a CPU server)
    factory: ServerFactory | None = None  # tests: a stand-in server (must be importable on the node)


@dataclass(frozen=True)
class RemoteOutcome:
    status: Status
    error: str | None
    exit_code: int
    archive: bytes | None
    host: str
    first_request_at: float | None = None  # the node's clock (epoch seconds): its first request sent
    served_by: str | None = None  # how the checkpoint's server came up on the node


def generate_remotely(job: RemoteJob) -> RemoteOutcome:
    """Runs on a Ray worker: the checkpoint's generation phase in a temporary directory of this node."""
    import ray

    from jurist.report import StageProgress
    from jurist.sweep.generation import generate_checkpoint
    from jurist.sweep.plan import MODELS_FILE, write_models_file

    checkpoint = job.checkpoint
    plan = dataclasses.replace(job.plan, progress=False)
    gpus = tuple(int(gpu) for gpu in ray.get_gpu_ids()) if job.gpus else None
    with tempfile.TemporaryDirectory(prefix="jurist-sweep-") as temp:
        root = Path(temp)
        target = root / checkpoint.name
        if job.archive is not None:
            unpack(job.archive, target)
        write_models_file(plan, root / MODELS_FILE)
        target.mkdir(parents=True, exist_ok=True)
        with (target / "sweep.log").open("a", encoding="utf-8") as log:
            console = Console(file=log, width=160, force_terminal=False, color_system=None)
            outcome = asyncio.run(
                generate_checkpoint(
                    plan,
                    checkpoint,
                    gpus,
                    console=console,
                    bars=StageProgress(console, enabled=False),
                    root=root,
                    factory=job.factory,
                )
            )
        return RemoteOutcome(
            outcome.status,
            outcome.error,
            outcome.exit_code,
            pack(target),
            socket.gethostname(),
            outcome.first_request_at,
            outcome.served_by,
        )


# -- the driver ---------------------------------------------------------------------------------------------
def gpus_per_checkpoint(plan: SweepPlan, checkpoint: Checkpoint) -> int:
    """What a checkpoint's task asks Ray for: its vLLM server's width, none for a llama.cpp server."""
    kind = plan.serve_kind
    if kind is None and plan.settings is not None and plan.settings.serve is not None:
        kind = plan.settings.serve.kind
    if (kind or checkpoint.default_kind) != "vllm":
        return 0
    return plan.tensor_parallel or 1


def node_gpus(nodes: list[dict[str, Any]]) -> list[float]:
    """The GPUs of each live node, from ``ray.nodes()``'s entries (``Alive``, ``Resources``)."""
    return [float((node.get("Resources") or {}).get("GPU", 0)) for node in nodes if node.get("Alive", True)]


def placement_problem(width: int, gpus_per_node: list[float]) -> str | None:
    """Why Ray cannot place a checkpoint that asks ``width`` GPUs on one node (None: some node can): a task
    that asks for more than any node has waits forever, so the sweep says so at once instead."""
    if width == 0 or any(gpus >= width for gpus in gpus_per_node):
        return None
    if not any(gpus_per_node):
        found = "no GPU"
    else:
        found = f"at most {max(gpus_per_node):g} GPU(s) on one node"
    return (
        f"the Ray cluster has {found} ({len(gpus_per_node)} node(s)); the checkpoint's vLLM server needs "
        f"{width}: start Ray on GPU nodes (ray start --num-gpus N), lower --tensor-parallel, or give a "
        ".gguf checkpoint (llama.cpp on CPU)"
    )


def _connect(ray: Any, address: str) -> bool:
    """Join the cluster at ``address`` (``auto``: the one running on this machine; "" starts a new local
    instance); True when this call connected (and so disconnects at the end)."""
    if ray.is_initialized():
        return False
    env = {name: os.environ[name] for name in _FORWARDED_ENV if name in os.environ}
    ray.init(
        address=address or "local",
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": env} if env else None,
    )
    return True


async def ray_generation(
    plan: SweepPlan,
    address: str,
    generated: Any,
    console: Console,
    factory: ServerFactory | None = None,
    checkpoints: AsyncIterator[Checkpoint] | None = None,
) -> None:
    """Every checkpoint's generation as a Ray task; ``generated(checkpoint, outcome)`` as each returns,
    with its run directories already unpacked under the sweep directory. ``checkpoints``: where they come
    from, each submitted as soon as it arrives (``--watch``: a queue the watcher feeds while earlier ones
    run); default: ``plan.checkpoints``, all at once."""
    ray = import_ray()
    started = _connect(ray, address)
    on_cpu = ray.remote(generate_remotely)
    on_gpu = ray.remote(max_calls=1)(generate_remotely)  # a fresh worker per checkpoint: GPU memory freed
    source = checkpoints if checkpoints is not None else _listed(plan.checkpoints)
    arriving: asyncio.Future[Checkpoint] | None = asyncio.ensure_future(anext(source))
    pending: dict[asyncio.Future[Any], tuple[Any, Checkpoint]] = {}
    locks: dict[str, list[RunDirLock]] = {}

    def submit(checkpoint: Checkpoint, stack: ExitStack) -> None:
        width = gpus_per_checkpoint(plan, checkpoint)
        # the cluster as it is now (a watched sweep runs for as long as training does; nodes come and go)
        problem = placement_problem(width, node_gpus(ray.nodes())) if width else None
        if problem is not None:
            generated(checkpoint, PhaseOutcome("failed", problem))
            return
        try:
            locks[checkpoint.name] = _lock_runs(plan, checkpoint, stack)
        except JuristError as exc:
            generated(checkpoint, PhaseOutcome("failed", one_line(exc)))
            return
        # the task's own checkpoint only (its node's models file), and no API key leaves this host
        shipped = dataclasses.replace(
            plan, checkpoints=(checkpoint,), model_strings=plan.model_strings.without_key()
        )
        job = RemoteJob(shipped, checkpoint, pack(plan.out / checkpoint.name), width, factory)
        remote = on_gpu if width else on_cpu
        ref = remote.options(num_gpus=width, num_cpus=1, max_retries=0).remote(job)
        pending[asyncio.wrap_future(ref.future())] = (ref, checkpoint)
        console.print(
            f"{checkpoint.name}: queued on Ray ({width} GPU)" if width else
            f"{checkpoint.name}: queued on Ray (CPU)",
            style="dim", markup=False, highlight=False,
        )  # fmt: skip

    try:
        with ExitStack() as stack:
            while pending or arriving is not None:
                waiting = set(pending) if arriving is None else {*pending, arriving}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if arriving is not None and arriving in done:
                    try:
                        checkpoint = arriving.result()
                    except StopAsyncIteration:  # no more checkpoints: wait for the tasks out
                        arriving = None
                    else:
                        arriving = asyncio.ensure_future(anext(source))
                        submit(checkpoint, stack)
                for future in done & pending.keys():
                    _, checkpoint = pending.pop(future)
                    outcome = _received(plan, checkpoint, future, console)
                    for lock in locks.pop(checkpoint.name, []):
                        lock.release()
                    generated(checkpoint, outcome)
    except BaseException:  # Ctrl-C / SIGTERM (cancelled), or an error here: no task goes on without us
        if arriving is not None:
            arriving.cancel()
        for ref, _ in pending.values():
            ray.cancel(ref)  # KeyboardInterrupt in the task: it stops its server on the way out
        if pending:
            await asyncio.wait(list(pending), timeout=CANCEL_GRACE_S)
        for future in pending:  # their TaskCancelledError is expected: not logged as never retrieved
            if future.done() and not future.cancelled():
                future.exception()
        raise
    finally:
        if started:
            ray.shutdown()


async def _listed(checkpoints: Sequence[Checkpoint]) -> AsyncIterator[Checkpoint]:
    """A fixed list of checkpoints as a source that has them all at once."""
    for checkpoint in checkpoints:
        yield checkpoint


def _lock_runs(plan: SweepPlan, checkpoint: Checkpoint, stack: ExitStack) -> list[RunDirLock]:
    """The driver holds the checkpoint's run directories while a Ray task works on its copy of them."""
    held = []
    for task in plan.tasks:
        lock = RunDirLock(plan.run_dir(checkpoint, task))
        lock.acquire()
        stack.callback(lock.release)
        held.append(lock)
    return held


def _received(
    plan: SweepPlan, checkpoint: Checkpoint, future: asyncio.Future[Any], console: Console
) -> PhaseOutcome:
    try:
        result: RemoteOutcome = future.result()
    except Exception as exc:  # noqa: BLE001 - the task raised, or its worker or node died
        return PhaseOutcome("failed", f"the Ray task failed: {one_line(exc)}")
    if result.archive is not None:
        unpack(result.archive, plan.out / checkpoint.name)
    console.print(f"{checkpoint.name}: answers back from {result.host}", style="dim", markup=False)
    return PhaseOutcome(
        result.status,
        result.error,
        first_request_at=result.first_request_at,
        served_by=result.served_by,
    )
