"""The three trackers researchers already read curves in, each through its own client library.

Each is an optional extra, imported only when named, with the install hint when missing; each works
offline: TensorBoard writes event files, MLflow a file store (or talks to a tracking server), W&B honours
``WANDB_MODE=offline``. Every client logs :class:`~jurist.track.points.Point` lists at their training step
and keeps, in ``state``, what it must find again after a restart (the MLflow or W&B run it logs into).
"""

from __future__ import annotations

import importlib
import os
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from jurist.errors import JuristError
from jurist.track.points import PREFIX, Point

_EXTRAS = {"tensorboard": "tensorboard", "mlflow": "mlflow-skinny", "wandb": "wandb"}


class Tracker(Protocol):
    """Where a run's or a sweep's points go."""

    target: str
    """The ``--track`` value, as given (``tensorboard:DIR``): the tracker's identity in the ledger."""

    def log(self, points: list[Point]) -> None: ...
    def close(self) -> None: ...


def _client(module: str, kind: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise JuristError(
            f"--track {kind}: needs the {_EXTRAS[kind]} package: pip install 'jurist[{kind}]'"
        ) from None


class TensorBoardTracker:
    """Scalars in TensorBoard event files under DIR (``tensorboard --logdir DIR`` shows them)."""

    def __init__(self, target: str, directory: str, state: dict[str, str], name: str) -> None:
        self.target = target
        _client("tensorboard", "tensorboard")
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        path = Path(directory).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        self._writer = EventFileWriter(str(path))

    def log(self, points: list[Point]) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary

        now = time.time()
        for point in points:
            summary = Summary(value=[Summary.Value(tag=point.key, simple_value=point.value)])
            self._writer.add_event(Event(wall_time=now, step=point.step, summary=summary))
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class MlflowTracker:
    """Metrics of one MLflow run (found again by its id after a restart), in experiment NAME.

    URI: a tracking server (``http://…``), a database (``sqlite:///…``), or a folder: MLflow's file
    store, which MLflow 3 keeps in maintenance mode behind ``MLFLOW_ALLOW_FILE_STORE``; naming a folder
    asks for it, so jurist sets that for its own process."""

    def __init__(self, target: str, uri: str, state: dict[str, str], name: str) -> None:
        self.target = target
        _client("mlflow", "mlflow")
        from mlflow.tracking import MlflowClient

        if "://" not in uri and not uri.startswith(("databricks", "sqlite:")):
            path = Path(uri).expanduser().resolve()
            path.mkdir(parents=True, exist_ok=True)
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            uri = path.as_uri()
        self._client = MlflowClient(tracking_uri=uri)
        run_id = state.get("run_id")
        if run_id is None:
            experiment = self._client.get_experiment_by_name(name)
            experiment_id = (
                experiment.experiment_id if experiment is not None else self._client.create_experiment(name)
            )
            run_id = self._client.create_run(experiment_id, run_name=name).info.run_id
            state["run_id"] = run_id
        self._run_id = run_id

    def log(self, points: list[Point]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(p.key, p.value, now, p.step) for p in points]
        for start in range(0, len(metrics), 1000):  # MLflow takes at most 1000 metrics per batch
            self._client.log_batch(self._run_id, metrics=metrics[start : start + 1000])

    def close(self) -> None:
        """The run stays open: a watched sweep adds to it when it runs again."""


class WandbTracker:
    """Points in a W&B run: ENTITY/PROJECT (a run of jurist's, found again by its id) or
    ENTITY/PROJECT/RUN_ID (the training run itself, resumed, so evaluation sits beside its curves).
    jurist's series are plotted against ``jurist/step``, the checkpoint's training step, whatever step
    W&B's own counter is at."""

    def __init__(self, target: str, where: str, state: dict[str, str], name: str) -> None:
        self.target = target
        parts = [part for part in where.split("/") if part]
        if len(parts) not in (2, 3):
            raise JuristError(f"--track {target}: give wandb:ENTITY/PROJECT or wandb:ENTITY/PROJECT/RUN_ID")
        wandb = _client("wandb", "wandb")
        run_id = parts[2] if len(parts) == 3 else state.get("run_id")
        if run_id is None:
            run_id = state["run_id"] = wandb.util.generate_id()
        self._run = wandb.init(
            entity=parts[0],
            project=parts[1],
            id=run_id,
            resume="allow",
            name=None if len(parts) == 3 else name,
            reinit="create_new",
        )
        self._run.define_metric(f"{PREFIX}/step", hidden=True)
        self._run.define_metric(f"{PREFIX}/*", step_metric=f"{PREFIX}/step")

    def log(self, points: list[Point]) -> None:
        by_step: dict[int, dict[str, Any]] = defaultdict(dict)
        for point in points:
            by_step[point.step][point.key] = point.value
        for step in sorted(by_step):
            self._run.log({**by_step[step], f"{PREFIX}/step": step})

    def close(self) -> None:
        self._run.finish()


_KINDS: dict[str, type[TensorBoardTracker] | type[MlflowTracker] | type[WandbTracker]] = {
    "tensorboard": TensorBoardTracker,
    "mlflow": MlflowTracker,
    "wandb": WandbTracker,
}


def check_target(target: str) -> tuple[str, str]:
    """``KIND:WHERE`` split and checked (a usage error names the three kinds)."""
    kind, sep, where = target.partition(":")
    if not sep or kind not in _KINDS or not where.strip():
        raise JuristError(
            f"--track {target!r}: give tensorboard:DIR, mlflow:URI (a folder or a tracking server) or "
            "wandb:ENTITY/PROJECT[/RUN_ID]"
        )
    return kind, where.strip()


def open_tracker(target: str, state: dict[str, str], name: str) -> Tracker:
    """The client for one ``--track`` value (``name``: the sweep's or run's, for a new run/experiment)."""
    kind, where = check_target(target)
    tracker: Tracker = _KINDS[kind](target, where, state, name)
    return tracker
