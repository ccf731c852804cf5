"""Where jurist finds files outside a run directory: the user's data folders and its own cache.

Benchmarks read their pinned data from these folders and judge kinds read upstream prompts from them, so
both ask here rather than one asking the other.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "JURIST_DATA_DIR"
CACHE_DIR_ENV = "JURIST_CACHE_DIR"


def data_dirs() -> list[Path]:
    """The folders of ``$JURIST_DATA_DIR`` (``--data-dir``) in order, several joined by ``os.pathsep``."""
    value = os.environ.get(DATA_DIR_ENV, "")
    return [Path(part).expanduser() for part in value.split(os.pathsep) if part]


def cache_root() -> Path:
    """``$JURIST_CACHE_DIR``, else ``$XDG_CACHE_HOME/jurist`` (``~/.cache/jurist``)."""
    directory = os.environ.get(CACHE_DIR_ENV)
    if not directory:
        directory = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jurist")
    return Path(directory).expanduser()
