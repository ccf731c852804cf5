"""``jurist sweep``: many checkpoints of a training run x many tasks x N samples, in one command.

``checkpoints`` finds them, ``build`` checks the command into a ``plan``, ``schedule`` runs it (local GPU
or CPU slots from a shared queue, or ``ray_backend`` on a Ray cluster): ``generation`` answers each
checkpoint's tasks on its own server, ``judging`` judges and scores them on the judges' limit, ``results``
writes sweep.json and sweep.csv, ``report`` the table and the plots.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurist.sweep.build import build_plan
    from jurist.sweep.schedule import run_sweep

# Each name is imported from its module on first use, so that importing one module of the package (or
# ``jurist --help``) does not load the rest.
_HOMES = {
    "build_plan": "build",
    "run_sweep": "schedule",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "build_plan",
    "run_sweep",
]
