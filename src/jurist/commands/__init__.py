"""Subcommands of the ``jurist`` CLI beyond ``run``, one module each (typer wrappers only; each exposes
``register(app)``). Nothing but :mod:`jurist.cli` imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.commands.list import bench_help

_HOMES = {"bench_help": "list"}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = ["bench_help"]
