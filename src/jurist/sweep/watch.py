"""``jurist sweep --watch``: which checkpoints of a training run's folder are complete, as training writes.

A checkpoint is complete when a ``--ready-file`` exists inside it (training frameworks write one last), or,
without one, when its files have stopped changing: the same names, sizes and modification times on two
looks in a row, the newest of them at least ``--settle`` seconds old. Judging by the files' own times
rather than by how long jurist has watched them means checkpoints written long before the sweep started
are taken at once, and one still being copied (its sizes growing, or a temporary file beside it) is not.

Watching stops when a ``--stop-file`` appears, or once a checkpoint at or past ``--until-step`` is complete
(only steps up to that one are evaluated; one an earlier sweep already evaluated stops it at the first
look); Ctrl-C and SIGTERM stop it as they stop any sweep. A stop file does not drop the checkpoints that
are on disk when it appears (training writes its last checkpoint, then the stop file): each is still
looked at until it is complete — ``--settle`` more seconds at most, or two looks with ``--ready-file`` —
and handed out, or else named in :attr:`CheckpointWatcher.skipped` (the sweep records it as skipped
and exits :data:`SKIPPED_EXIT`), never left out in silence.
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
SKIPPED_EXIT = 4
"""Exit code of a watched sweep that evaluated what it could but skipped a checkpoint that was on disk
when the stop file appeared (0: every checkpoint complete, 1: some failed, 2: usage, 130: interrupted)."""


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
        self.skipped: dict[str, tuple[Path, str]] = {}  # on disk at the stop, never complete: path, why
        self._stop_seen: float | None = None  # when the stop file was first seen
        self._draining: dict[str, Path] = {}  # on disk then, not yet complete: looked at a while longer

    def look(self, now: float | None = None) -> list[Checkpoint]:
        """The checkpoints that became complete since the last look (none once watching has stopped)."""
        if self.stop_reason is not None:
            return []
        now = time.time() if now is None else now
        until = self.rules.until_step
        reached = sorted(n for n in self.known if until is not None and (step_of(n) or -1) >= until)
        if reached:  # a re-run past its --until-step: nothing to wait for
            self.stop_reason = f"--until-step {until} already reached ({reached[0]} was evaluated before)"
            return []
        candidates, present = [], {}
        for child in self._children():
            name = child.stem if child.suffix.lower() == ".gguf" else child.name
            if name in self.known:
                continue
            present[name] = child
            if self._complete(name, child, now):
                candidates.append(child)
        ready = sorted(named_checkpoints(candidates), key=lambda c: (c.step, c.name))
        handed: list[Checkpoint] = []
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
        self._check_stop_file(present, now)
        return handed

    def _check_stop_file(self, present: dict[str, Path], now: float) -> None:
        """Once the stop file is there: the checkpoints on disk then and not yet complete are looked at
        for a grace (``--settle`` and two looks; two looks with ``--ready-file``), then watching stops;
        any still not complete is named in :attr:`skipped`."""
        stop_file = self.rules.stop_file
        if self.stop_reason is not None or stop_file is None:
            return
        if self._stop_seen is None:
            if not stop_file.exists():
                return
            self._stop_seen = now
            self._draining = {n: p for n, p in present.items() if n not in self.known}
        self._draining = {n: p for n, p in self._draining.items() if n not in self.known}
        settle = 0.0 if self.rules.ready_file is not None else self.rules.settle_s
        grace = settle + 2 * self.rules.poll_s
        if self._draining and now - self._stop_seen < grace:
            return
        for name, path in sorted(self._draining.items()):
            why = f"not complete {grace:g}s after the stop file appeared"
            self.skipped[name] = (path, why)
        self.stop_reason = f"the stop file {stop_file} appeared"

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
