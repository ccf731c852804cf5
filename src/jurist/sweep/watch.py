"""``jurist sweep --watch``: which checkpoints of a training run's folder are complete, as training writes.

A checkpoint is complete when a ``--ready-file`` exists inside it (training frameworks write one last), or,
without one, when its files have stopped changing: the same names, sizes and modification times on two
looks in a row, the newest of them at least ``--settle`` seconds old. Judging by the files' own times
rather than by how long jurist has watched them means checkpoints written long before the sweep started
are taken at once, and one still being copied (its sizes growing, or a temporary file beside it) is not.

Watching stops when a ``--stop-file`` appears, or once a checkpoint at or past ``--until-step`` is complete
(only steps up to that one are evaluated); Ctrl-C and SIGTERM stop it as they stop any sweep.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jurist.errors import JuristError
from jurist.sweep.checkpoints import STEP_CHILD, Checkpoint, named_checkpoints, step_of

Fingerprint = tuple[tuple[str, int, int], ...]
"""Every file of a checkpoint: its path inside the checkpoint, its size, its modification time (ns)."""

_MAX_FILES = 10_000  # a checkpoint is a handful of shards and configs; past this, stop listing


@dataclass(frozen=True)
class WatchRules:
    """What ``--watch`` was asked: the folder, when a checkpoint counts as complete, when to stop."""

    directory: Path
    settle_s: float = 120.0
    ready_file: str | None = None
    until_step: int | None = None
    stop_file: Path | None = None
    poll_s: float = 2.0

    def __post_init__(self) -> None:
        if not self.directory.is_dir():
            raise JuristError(
                f"--watch: --checkpoints {self.directory} is not a folder (a folder is watched)"
            )
        if self.ready_file is not None and (not self.ready_file or "/" in self.ready_file):
            raise JuristError(
                f"--ready-file {self.ready_file!r}: give a file name (found inside a checkpoint)"
            )


def fingerprint(path: Path) -> Fingerprint:
    """The files of ``path`` (itself, when it is a file), sorted; empty when it cannot be read."""
    if path.is_file():
        stat = path.stat()
        return (("", stat.st_size, stat.st_mtime_ns),)
    found: list[tuple[str, int, int]] = []
    try:
        for folder, _, files in os.walk(path):
            for name in files:
                file = Path(folder) / name
                try:
                    stat = file.stat()
                except OSError:  # removed between the listing and the look: still changing
                    return ()
                found.append((str(file.relative_to(path)), stat.st_size, stat.st_mtime_ns))
                if len(found) > _MAX_FILES:
                    break
    except OSError:
        return ()
    return tuple(sorted(found))


class CheckpointWatcher:
    """Hands out each complete checkpoint of the folder once, in step order. ``known``: names not to hand
    out (an earlier sweep of the same folder finished them)."""

    def __init__(self, rules: WatchRules, known: Iterable[str] = ()) -> None:
        self.rules = rules
        self.known = set(known)
        self._last: dict[str, Fingerprint] = {}
        self.ready_at: dict[str, float] = {}  # name -> when it was found complete (seconds since the epoch)
        self.stop_reason: str | None = None  # why watching stopped; None while it goes on

    def look(self, now: float | None = None) -> list[Checkpoint]:
        """The checkpoints that became complete since the last look (none once watching has stopped)."""
        if self.stop_reason is not None:
            return []
        now = time.time() if now is None else now
        candidates = []
        for child in self._children():
            name = child.stem if child.suffix.lower() == ".gguf" else child.name
            if name in self.known:
                continue
            if self._complete(name, child, now):
                candidates.append(child)
        ready = sorted(named_checkpoints(candidates), key=lambda c: (c.step, c.name))
        handed: list[Checkpoint] = []
        until = self.rules.until_step
        for checkpoint in ready:
            self.known.add(checkpoint.name)
            if until is not None and checkpoint.step > until:
                self.stop_reason = self.stop_reason or (
                    f"a checkpoint past --until-step {until} is complete ({checkpoint.name})"
                )
                continue
            self.ready_at[checkpoint.name] = now
            handed.append(checkpoint)
            if until is not None and checkpoint.step == until:
                self.stop_reason = f"--until-step {until} reached ({checkpoint.name})"
        stop_file = self.rules.stop_file
        if self.stop_reason is None and stop_file is not None and stop_file.exists():
            self.stop_reason = f"the stop file {stop_file} appeared"
        return handed

    def _children(self) -> list[Path]:
        try:
            children = list(self.rules.directory.iterdir())
        except OSError:
            return []
        return [c for c in children if STEP_CHILD.match(c.name) and step_of(c.name) is not None]

    def _complete(self, name: str, path: Path, now: float) -> bool:
        ready_file = self.rules.ready_file
        if ready_file is not None and path.is_dir():
            return (path / ready_file).is_file()
        files = fingerprint(path)
        before, self._last[name] = self._last.get(name), files
        if not files or files != before:
            return False
        newest = max(mtime for _, _, mtime in files) / 1e9
        return now - newest >= self.rules.settle_s
