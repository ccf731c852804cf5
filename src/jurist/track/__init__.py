"""Evaluation points into the experiment trackers researchers already use (TensorBoard, MLflow, W&B), at the
training step of each checkpoint (``jurist sweep --track``, ``jurist run --track --step``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.track.clients import Tracker, check_target, open_tracker
    from jurist.track.ledger import LEDGER_FILE, Trackers
    from jurist.track.points import Point, row_points, series_name, sweep_points

_HOMES = {
    "Tracker": "clients",
    "check_target": "clients",
    "open_tracker": "clients",
    "LEDGER_FILE": "ledger",
    "Trackers": "ledger",
    "Point": "points",
    "row_points": "points",
    "series_name": "points",
    "sweep_points": "points",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "LEDGER_FILE",
    "Point",
    "Tracker",
    "Trackers",
    "check_target",
    "open_tracker",
    "row_points",
    "series_name",
    "sweep_points",
]
