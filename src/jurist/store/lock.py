"""One writer per run directory: an exclusive ``flock`` on ``RUN/.lock`` held for the whole run.

Two ``jurist run`` processes appending to the same answers and judgments files would interleave duplicate
lines and race on ``run.json``. The lock makes the second one stop at once with a message naming the first.

Why ``flock`` on an open descriptor rather than a pid file: the kernel drops the lock when the descriptor
is closed, which happens on normal exit, on an exception and on ``SIGKILL`` alike, so a lock can never be
left behind by a dead process and there is no staleness check to get wrong (pids are reused; hosts share
NFS). The file itself is never deleted (deleting it would let two processes lock two different inodes);
its content (pid, host, start time, command line) is only there to make the message useful.

The descriptor is opened close-on-exec (Python's default), so managed model servers started with
``subprocess`` do not inherit the lock and cannot keep it alive after jurist dies. A ``fork`` without
``exec`` does share it, as POSIX says.

POSIX only: where ``fcntl`` does not exist (Windows), the lock degrades to nothing with a logged warning.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from jurist.errors import JuristError
from jurist.redact import mask

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

LOCK_NAME = ".lock"
_COMMAND_CHARS = 200


def _command_line() -> str:
    """This process's command line as the user typed it (``jurist run ...``), secrets masked, shortened."""
    argv = list(sys.argv) or ["python"]
    if Path(argv[0]).name in ("jurist", "__main__.py", "-m"):
        argv[0] = "jurist"
    text = mask(" ".join(shlex.quote(arg) for arg in argv))
    return text if len(text) <= _COMMAND_CHARS else text[: _COMMAND_CHARS - 3] + "..."


def _describe(root: Path, raw: str) -> str:
    """The one-line message for a run directory held by the process described by ``raw`` (the lock file)."""
    try:
        info: dict[str, Any] = json.loads(raw) if raw.strip() else {}
    except ValueError:
        info = {}
    if not isinstance(info, dict):
        info = {}
    holder = "another jurist process"
    if info.get("pid") is not None:
        holder = f"jurist pid {info['pid']}"
    if info.get("host"):
        holder += f" on host {info['host']}"
    since = info.get("since")
    if isinstance(since, (int, float)):
        started = time.localtime(since)
        same_day = started[:3] == time.localtime()[:3]
        holder += " since " + time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M:%S", started)
    if info.get("command"):
        holder += f" ({info['command']})"
    return f"run directory {root} is in use by {holder}; wait for it or use another --out"


def is_held(root: str | Path) -> bool | None:
    """Whether a live process holds ``root``'s lock now: a reader's question, asked without creating
    anything (``jurist show``, ``jurist view``, a run telling a crashed run from a running one).

    True or False where it can tell; None where it cannot (no lock file: a run from before locks, or a
    directory that was never run; no ``fcntl``). The lock is tried shared and dropped at once, so a run
    starting in that instant is not refused (:meth:`RunDirLock.acquire` tries again a moment later)."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(Path(root) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # closing the descriptor drops the shared lock if it was taken
    return False


_TRIES = 5
_PAUSE_S = 0.02


def _lock_exclusive(fd: int) -> None:
    """The exclusive lock, or ``BlockingIOError`` when another process holds it: tried a few times over
    ~0.1 s, so a reader's momentary shared lock (:func:`is_held`) never refuses a run."""
    assert fcntl is not None
    for attempt in range(_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if attempt == _TRIES - 1:
                raise
            time.sleep(_PAUSE_S)


class RunDirLock:
    """Exclusive ownership of a run directory for the life of a ``with`` block.

    ``with RunDirLock(root): ...`` creates ``root`` if missing, takes the lock without waiting, and raises
    :class:`JuristError` (one line, naming the holder's pid, host, start time and command) when another
    process holds it. The lock is released when the block ends, however it ends, or when the process dies.
    Not re-entrant: a second lock on the same directory in the same process fails too.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = self.root / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now (False on platforms without ``fcntl``)."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`JuristError` naming the process that has it."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: lock already held by this object")
        self.root.mkdir(parents=True, exist_ok=True)
        if fcntl is None:  # pragma: no cover - Windows
            log.warning("no file locking on this platform: nothing stops two runs writing to %s", self.root)
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock_exclusive(fd)
        except BlockingIOError:
            raw = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            os.close(fd)
            raise JuristError(_describe(self.root, raw)) from None
        except BaseException:
            os.close(fd)
            raise
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.time(),
            "command": _command_line(),
        }
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
            os.fsync(fd)
        except OSError as exc:  # the lock holds even if the note cannot be written (full disk)
            log.warning("%s: could not record the lock holder: %s", self.path, exc)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (idempotent); the file stays, emptied, for the next run."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing the only descriptor releases the flock

    def __enter__(self) -> RunDirLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
