"""Cross-process request throttle: a minimum spacing between request starts, shared through a file.

Every jurist process on the machine that names the same state file books its request starts in it: under
an exclusive ``flock`` it reads the next free start time, takes ``max(now, next free)`` and writes back that
time plus its ``min_interval``. The lock is held for a read and a write only; the wait until the booked
time happens outside it, in ``asyncio.sleep``, so one slow request never blocks the others' bookings.

Times are wall-clock (``time.time``) so they compare across processes and reboots; a booking implausibly
far ahead (the clock was set back, or the file is from elsewhere) is treated as stale and overwritten.
POSIX only (``fcntl``), like eval_framework's ``MIN_INTERVAL_S`` throttle that this follows in spirit.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from jurist.errors import JuristError

# A booking more than this far ahead of now cannot come from live processes (bookings are made only by
# requests about to start, so the queue is at most total concurrency x interval): it is stale.
_STALE_AFTER_S = 3600.0
_MAX_REBOOKINGS = 4


def default_throttle_file() -> Path:
    """``$XDG_CACHE_HOME/jurist/throttle.lock`` (``~/.cache/jurist/throttle.lock``): one per user."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "jurist" / "throttle.lock"


class Throttle:
    """Spaces request starts at least ``min_interval`` seconds apart across every user of ``path``."""

    def __init__(self, min_interval: float, path: str | Path | None = None) -> None:
        if min_interval < 0:
            raise JuristError("--min-interval must not be negative")
        try:
            import fcntl  # noqa: F401  (POSIX only; checked here so the error comes before any request)
        except ImportError:
            raise JuristError("--min-interval needs a POSIX system (fcntl file locks)") from None
        self.min_interval = float(min_interval)
        self.path = Path(path) if path is not None else default_throttle_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JuristError(f"--throttle-file {self.path}: cannot create its folder ({exc})") from None
        self.waited_s = 0.0
        self.rebooked = 0

    def book(self, now: float | None = None) -> float:
        """Reserve the next start time (wall clock) and return it; blocks briefly on the file lock."""
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by close(), also if this process dies
            raw = os.pread(fd, 64, 0)
            now = time.time() if now is None else now
            try:
                next_free = float(raw.decode("ascii").strip() or 0.0)
            except (UnicodeDecodeError, ValueError):
                next_free = 0.0  # an unreadable state file only costs one unspaced start
            if next_free > now + max(_STALE_AFTER_S, 1000 * self.min_interval):
                next_free = now
            slot = max(now, next_free)
            data = f"{slot + self.min_interval:.9f}\n".encode("ascii")
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            return slot
        finally:
            os.close(fd)

    async def wait(self) -> None:
        """Return at a booked start time; the locking runs in a worker thread.

        A request that resumes late (its event loop was busy, e.g. loading a tokenizer) gives up its stale
        slot and books again, so the next booking is spaced from when it really starts.
        """
        if self.min_interval <= 0:
            return
        late_after = max(0.002, 0.1 * self.min_interval)
        for _ in range(_MAX_REBOOKINGS):
            slot = await asyncio.to_thread(self.book)
            delay = slot - time.time()
            if delay > 0:
                self.waited_s += delay
                await asyncio.sleep(delay)
            if time.time() - slot <= late_after:
                return
            self.rebooked += 1
        # Late again and again: the loop is starved, and spacing cannot be kept better than this.


def make_throttle(min_interval: float, path: str | Path | None = None) -> Throttle | None:
    """The throttle a run asked for, or None (no file touched) when ``min_interval`` is 0."""
    return Throttle(min_interval, path) if min_interval > 0 else None
