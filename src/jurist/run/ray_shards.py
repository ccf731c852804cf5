"""``jurist run --ray ADDRESS --shards N``: the N shards of a run (:mod:`jurist.run.shards`) as Ray tasks,
each on the node Ray places it on (with the GPUs its served models need), each starting its own model
servers there, then joined by ``jurist merge``'s rules into one run directory.

A task works in a temporary directory of its node and sends its directory to a progress keeper on the
driver's node every few seconds, so a task lost with its node is retried elsewhere (``--ray-retries``,
Ray's own retry of a task whose worker or node died) from what the lost one had saved, not from nothing.
A task that fails for any other reason — a server that died, a worker out of memory, a bad input — ends
the run at once with its shard and the cause in one line, the other tasks cancelled and everything
received kept, instead of waiting on it.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console

from jurist.errors import JuristError
from jurist.run.config import RunConfig
from jurist.run.shards import ShardChoice
from jurist.store import pack, unpack

RAY_HINT = "pip install 'jurist[ray]'"
SAVE_EVERY_S = 5.0
"""How often a task sends its directory to the driver's node: what a lost node can cost at most."""
FORWARDED_ENV = ("JURIST_DATA_DIR", "JURIST_CACHE_DIR", "NLTK_DATA", "HF_HOME", "JURIST_ARENA_HARD_PROMPTS")
"""The driver's settings a task needs to find data and the cache the same way (keys are not sent: each
node reads its own, as a Slurm task would)."""


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise JuristError(f"--ray needs Ray, which is not installed: {RAY_HINT}") from None
    return ray


@dataclass(frozen=True)
class ShardJob:
    config: RunConfig
    """The run's config with this task's shard; ``out`` is replaced by a directory on the task's node."""
    archive: bytes | None
    """The shard's directory as the driver has it (a resumed run)."""


@dataclass(frozen=True)
class ShardOutcome:
    exit_code: int
    archive: bytes | None
    host: str


class ProgressKeeper:
    """A Ray actor on the driver's node: each shard's latest directory, so a retried task resumes it."""

    def __init__(self) -> None:
        self.saved: dict[int, bytes] = {}

    def put(self, index: int, archive: bytes) -> None:
        self.saved[index] = archive

    def get(self, index: int) -> bytes | None:
        return self.saved.get(index)


def run_shard_remotely(job: ShardJob, keeper: Any) -> ShardOutcome:
    """On a Ray worker: the shard's run in a directory of this node, saved to ``keeper`` as it goes."""
    import ray

    from jurist.run.pipeline import run_pipeline

    assert job.config.shard is not None
    index = job.config.shard.index
    with tempfile.TemporaryDirectory(prefix="jurist-shard-") as tmp:
        out = Path(tmp) / "run"
        latest = ray.get(keeper.get.remote(index)) or job.archive  # a retried task: the lost one's work
        if latest is not None:
            unpack(latest, out)
        stop = threading.Event()

        def save() -> None:
            while not stop.wait(SAVE_EVERY_S):
                data = pack(out)
                if data is not None:
                    keeper.put.remote(index, data)

        saver = threading.Thread(target=save, name=f"jurist-shard-{index}-save", daemon=True)
        saver.start()
        try:
            quiet = dataclasses.replace(job.config.engine, progress=False)
            result = run_pipeline(dataclasses.replace(job.config, out=out, engine=quiet))
        finally:
            stop.set()
            saver.join()
        return ShardOutcome(result.exit_code, pack(out), socket.gethostname())


def shard_gpus(specs: Sequence[Any]) -> int:
    """The GPUs one shard asks Ray for: those of the models it serves itself (``serve:`` with ``gpus``)."""
    total = 0
    for spec in specs:
        serve = getattr(spec, "serve", None)
        gpus = getattr(serve, "gpus", None) if serve is not None else None
        total += len(gpus) if isinstance(gpus, list) else int(gpus or 0)
    return total


def run_on_ray(
    config: RunConfig, address: str, count: int, retries: int, console: Console
) -> tuple[list[Path], Path]:
    """Every shard of ``config``'s run as a Ray task; returns the shards' directories on this machine
    (``OUT/shards/<I>-of-<N>``, each unpacked as its task returns) and OUT (``--out``, or
    ``runs/<bench>``), where they are to be merged."""
    from jurist.run.plan import default_run_dir, resolve

    first = resolve(dataclasses.replace(config, shard=ShardChoice(0, count, "ray")))  # every error, now
    out = config.out if config.out is not None else default_run_dir(first.bench.name, None)
    root = out / "shards"
    served = (*first.candidates, *first.judges, *first.baselines)
    gpus = shard_gpus([first.specs[alias] for alias in served if alias in first.specs])
    ray = import_ray()
    started = _connect(ray, address)
    try:
        node = ray.get_runtime_context().get_node_id()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        keeper = (
            ray.remote(ProgressKeeper)
            .options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False))
            .remote()
        )
        task = ray.remote(run_shard_remotely)
        pending: dict[Any, tuple[int, Path]] = {}
        for index in range(count):
            directory = root / f"{index}-of-{count}"
            shard = ShardChoice(index, count, "a Ray task")
            shipped = dataclasses.replace(  # no API key leaves this host: each node has its own
                config,
                shard=shard,
                out=None,
                engine=dataclasses.replace(config.engine, progress=False),
                model_strings=config.model_strings.without_key(),
            )
            job = ShardJob(shipped, pack(directory))
            ref = task.options(num_cpus=1, num_gpus=gpus, max_retries=retries).remote(job, keeper)
            pending[ref] = (index, directory)
        console.print(
            f"{count} shard(s) queued on Ray ({gpus} GPU each), saved every {SAVE_EVERY_S:g} s",
            style="dim", markup=False, highlight=False,
        )  # fmt: skip
        done_dirs = _collect(ray, pending, keeper, console)
    finally:
        if started:
            ray.shutdown()
    return done_dirs, out


def _collect(ray: Any, pending: dict[Any, tuple[int, Path]], keeper: Any, console: Console) -> list[Path]:
    """Each task's directory unpacked as it returns; a failed task ends everything at once, with what the
    others saved kept."""
    done: list[Path] = []
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        index, directory = pending.pop(ref)
        try:
            outcome: ShardOutcome = ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - the task raised, or its worker died for good
            for other, (other_index, other_dir) in pending.items():
                ray.cancel(other, force=True)
                saved = ray.get(keeper.get.remote(other_index))
                if saved is not None:
                    unpack(saved, other_dir)
            saved = ray.get(keeper.get.remote(index))
            if saved is not None:
                unpack(saved, directory)
            cause = " ".join(str(exc).split())[:400]
            raise JuristError(
                f"shard {index} failed on Ray: {cause}; what every shard saved is in {directory.parent} "
                "(run the same command again to resume)"
            ) from None
        if outcome.archive is not None:
            unpack(outcome.archive, directory)
        console.print(
            f"shard {index}: back from {outcome.host} (exit {outcome.exit_code})",
            style="dim", markup=False, highlight=False,
        )  # fmt: skip
        done.append(directory)
    return sorted(done)


def _connect(ray: Any, address: str) -> bool:
    """Join the cluster at ``address`` (``local``: a new instance on this machine); True when this call
    connected (and so disconnects at the end)."""
    if ray.is_initialized():
        return False
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    ray.init(
        address=address,  # "local": a new instance here, never a cluster a file left behind names
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": env} if env else None,
    )
    return True


__all__ = ["ProgressKeeper", "ShardJob", "ShardOutcome", "import_ray", "run_on_ray", "run_shard_remotely"]
