"""One writer per run directory: a second process is refused at once, naming the first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurist.errors import JuristError
from jurist.store.lock import LOCK_NAME, RunDirLock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX only")

_HOLDER = """
import sys, time
from jurist.store.lock import RunDirLock
with RunDirLock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock on ``tmp_path / 'run'`` (killed at the end if still alive)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "run")], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    proc.stdout.close()


def test_a_second_process_is_refused_naming_the_holder(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    with pytest.raises(JuristError) as info:
        with RunDirLock(tmp_path / "run"):
            pytest.fail("took a lock another process holds")
    message = str(info.value)
    assert f"jurist pid {holder.pid} on host " in message
    assert message.startswith(f"run directory {tmp_path / 'run'} is in use by")
    assert message.endswith("; wait for it or use another --out") and "\n" not in message
    assert " since " in message and "-c" in message


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(10)
    assert (tmp_path / "run" / LOCK_NAME).exists()  # the file stays; the lock died with the process
    with RunDirLock(tmp_path / "run") as lock:
        assert lock.held
        info = json.loads((tmp_path / "run" / LOCK_NAME).read_text())
        assert info["pid"] == os.getpid() and info["since"] <= time.time()


def test_the_lock_is_released_on_normal_exit_and_on_exception(tmp_path: Path) -> None:
    root = tmp_path / "new" / "run"
    with RunDirLock(root) as lock:
        assert root.is_dir() and lock.held
        with pytest.raises(JuristError, match=f"jurist pid {os.getpid()} "):
            RunDirLock(root).acquire()  # not re-entrant, even within one process
    assert not lock.held
    with pytest.raises(RuntimeError, match="boom"):
        with RunDirLock(root):
            raise RuntimeError("boom")
    with RunDirLock(root):
        pass
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom jurist.store.lock import RunDirLock\nRunDirLock(sys.argv[1]).acquire()",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, check.stderr


def test_an_unreadable_note_still_gives_a_one_line_message(tmp_path: Path) -> None:
    root = tmp_path / "run"
    with RunDirLock(root):
        (root / LOCK_NAME).write_text("not json")
        with pytest.raises(JuristError, match="in use by another jurist process; wait for it"):
            RunDirLock(root).acquire()
