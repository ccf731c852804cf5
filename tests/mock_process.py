"""Driving jurist against the mock server from other processes (descriptor, memory and fault benchmarks
and tests): the mock in a process of its own, and a child process watched for its descriptors and RSS."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MOCK_SCRIPT = Path(__file__).resolve().parent / "mock_openai.py"


def free_port() -> int:
    """A port nobody listens on right now on 127.0.0.1."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports nobody listens on right now on 127.0.0.1 (all held open while chosen, so
    the kernel cannot hand out one twice)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def spawn_mock(
    ports: int = 1, options: Sequence[str] = (), script: Path = MOCK_SCRIPT
) -> tuple[subprocess.Popen[bytes], list[str]]:
    """This mock (or ``script``, a variant taking the same ``--port`` option) in a process of its own (own
    descriptor limit, own CPU) on ``ports`` ports; returns the process, once it answers, and one base URL
    per port. Stop it with :func:`stop_process`.

    A port free when chosen can be taken before the mock binds it (the suite's own client connections
    use the same range): the mock then exits at once, and it is started again on other ports."""
    for _ in range(5):
        numbers = free_ports(ports)
        command = [sys.executable, str(script), "--port", str(numbers[0])]
        command += [arg for port in numbers[1:] for arg in ("--extra-port", str(port))] + list(options)
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        urls = [f"http://127.0.0.1:{port}/v1" for port in numbers]
        for _ in range(400):
            try:
                for url in urls:
                    urllib.request.urlopen(f"{url}/models", timeout=1).read()  # noqa: S310 (loopback)
                return process, urls
            except OSError:
                if process.poll() is not None:
                    break
                time.sleep(0.05)
        if process.poll() is None:  # alive but not answering in 20 s: not a port race
            stop_process(process)
            break
    raise RuntimeError("the mock server did not start")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to this one process (by its pid), SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def mock_stats(base_url: str) -> dict[str, Any]:
    """The counters of a mock in another process (``GET /v1/_stats``)."""
    with urllib.request.urlopen(f"{base_url}/_stats", timeout=10) as resp:  # noqa: S310 (loopback)
        data: dict[str, Any] = json.loads(resp.read())
    return data


@dataclass
class Watched:
    """How a watched process ended and what it held at most."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_fds: int  # open descriptors, polled from /proc every few milliseconds
    peak_rss_mb: float  # the kernel's ru_maxrss of the process itself (wait4), exact


def run_watched(
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    nofile: int | None = None,
    timeout: float = 600.0,
    poll_s: float = 0.005,
) -> Watched:
    """Run ``args`` (under ``RLIMIT_NOFILE`` = ``nofile`` when given) and watch its descriptors and RSS."""

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    out, err = cwd / ".watched.out", cwd / ".watched.err"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            list(args), cwd=cwd, env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
            preexec_fn=limit,  # only setrlimit, before exec
        )  # fmt: skip
    fd_dir = f"/proc/{process.pid}/fd"
    peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        try:
            peak = max(peak, len(os.listdir(fd_dir)))
        except OSError:
            pass  # exiting
        if time.monotonic() - started > timeout:
            process.kill()
        time.sleep(poll_s)
    process.returncode = os.waitstatus_to_exitcode(status)
    text = out.read_text(errors="replace"), err.read_text(errors="replace")
    out.unlink()
    err.unlink()
    return Watched(
        process.returncode, text[0], text[1], time.monotonic() - started, peak, usage.ru_maxrss / 1024
    )
