"""Ctrl-C and SIGTERM: a clean stop when the run can stop, a forced one when something never returns."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.run.interrupts import GracefulInterrupt


def send_soon(signum: int, after: float = 0.2) -> None:
    threading.Timer(after, os.kill, (os.getpid(), signum)).start()


def test_a_run_that_can_stop_is_cancelled_cleanly() -> None:
    forced: list[str] = []
    codes: list[int] = []
    interrupt = GracefulInterrupt(lambda: forced.append("forced"), grace_s=5.0, exit=codes.append)
    cleaned: list[str] = []

    async def main() -> None:
        interrupt.attach()
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append("closed")

    send_soon(signal.SIGINT)
    with interrupt, pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert interrupt.interrupted and cleaned == ["closed"]
    time.sleep(0.1)
    assert forced == [] and codes == []  # the grace timer was cancelled on exit


def test_a_run_stuck_after_the_interrupt_is_forced_after_the_grace_period() -> None:
    released = threading.Event()
    forced: list[str] = []
    codes: list[int] = []

    def record_exit(code: int) -> None:
        codes.append(code)
        released.set()  # in real life the process ends here; the test lets the stuck close return

    interrupt = GracefulInterrupt(lambda: forced.append("forced"), grace_s=0.3, exit=record_exit)

    async def main() -> None:
        interrupt.attach()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.to_thread(released.wait, 10)  # a close that would never return

    send_soon(signal.SIGTERM)
    started = time.monotonic()
    with interrupt:
        asyncio.run(main())
    assert forced == ["forced"] and codes == [130]
    assert 0.3 <= time.monotonic() - started < 5


def test_a_second_ctrl_c_forces_at_once() -> None:
    released = threading.Event()
    codes: list[int] = []

    def record_exit(code: int) -> None:
        codes.append(code)
        released.set()

    interrupt = GracefulInterrupt(lambda: None, grace_s=60.0, exit=record_exit)

    async def main() -> None:
        interrupt.attach()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.to_thread(released.wait, 10)

    send_soon(signal.SIGINT, 0.2)
    send_soon(signal.SIGINT, 0.5)
    started = time.monotonic()
    with interrupt:
        asyncio.run(main())
    assert codes == [130] and time.monotonic() - started < 5


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_real_run_exits_130_and_keeps_what_was_answered(
    tmp_path: Path, mock_server: Any, signum: int
) -> None:
    server = mock_server(delay=0.5)
    write_models_file(tmp_path / "m.yaml", server.base_url, {"slow": {"parallel": 2}, "judge-good": {}})
    process = subprocess.Popen(
        [sys.executable, "-m", "jurist", "run", "--models-file", "m.yaml", "--model", "slow"]
        + ["--judge", "judge-good", "--no-progress", "--no-check", "--out", "run"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    answers = tmp_path / "run" / "answers" / "slow.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (answers.exists() and answers.stat().st_size):
        time.sleep(0.05)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "interrupted"
    saved = answers.read_text().splitlines()
    assert 1 <= len(saved) < 24  # what was answered is kept; the rest is for the next run
