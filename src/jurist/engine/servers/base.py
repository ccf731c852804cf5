"""A model server that jurist starts, watches and stops: the part every kind of server shares.

A :class:`ManagedServer` reserves a free port on 127.0.0.1, starts its command in a process group of its
own (``start_new_session``), streams the output to a log file, and waits until ``GET /v1/models`` answers.
If the process exits first (a crash, a bad argument, the out-of-memory killer) the error carries the tail of
its log at once, rather than after the readiness timeout. Stopping signals only the server's own process
group: SIGTERM, then SIGKILL for what did not exit in time. Nothing is ever found or stopped by name.
Once ready, the server is asked how long a context it serves (:attr:`ManagedServer.context_length`).

A kind of server that can load other weights without a restart says so (:meth:`ManagedServer.keep_for_swaps`
before it starts, :meth:`ManagedServer.swap_to` once running); the others are restarted instead.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from jurist.config import ModelSpec
from jurist.errors import JuristError

log = logging.getLogger("jurist.servers")

HOST = "127.0.0.1"
_POLL_S = 0.1
_TERM_GRACE_S = 10.0
_TAIL_CHARS = 2000


def free_port() -> int:
    """A port nobody listens on right now (the OS picks it; the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class SwapFailed(JuristError):
    """A running server could not be moved to other weights (it is then stopped and the next one started
    cold); the message says why, in one line."""


class ManagedServer:
    """One server process; subclasses say how to start it (:meth:`command`) and what it needs first."""

    name = "model server"  # how messages call it
    ready_path = "/v1/models"
    requires_gpus = False  # True: gpus are checked against the visible ones (a CPU server ignores a count)

    def __init__(
        self,
        *,
        startup_timeout: float = 300.0,
        log_path: Path | None = None,
        gpu_ids: list[int] | None = None,
    ) -> None:
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.gpu_ids = gpu_ids  # the server's CUDA_VISIBLE_DEVICES (None: this process's)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.context_length: int | None = None  # tokens of prompt and reply together, once ready
        self.models_listing: list[dict[str, Any]] = []  # what GET /v1/models answered when ready
        self._log_offset = 0  # where this start's output begins in the (appended) log
        self._log: IO[bytes] | None = None
        self._temp_log = False
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    # -- what a kind of server says ----------------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec: ModelSpec, log_path: Path | None = None) -> ManagedServer:
        """The server of a models-file entry whose ``serve.kind`` is this kind (``gpus`` placed as ids)."""
        raise NotImplementedError

    def command(self) -> list[str]:
        """The command line; ``self.port`` is set when it is called."""
        raise NotImplementedError

    def check_installed(self) -> None:
        """Raise :class:`JuristError` with an install hint when the server cannot be run here."""

    def environment(self) -> dict[str, str] | None:
        """The server's environment: this process's, with ``CUDA_VISIBLE_DEVICES`` set to its GPUs."""
        if self.gpu_ids is None:
            return None
        return {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(str(gpu) for gpu in self.gpu_ids)}

    def served_context_length(self) -> int | None:
        """The context the running server serves, in tokens (None: it does not say)."""
        return None

    @property
    def answers_to(self) -> str | None:
        """The model name requests must carry to be answered (None: any name, or the spec's)."""
        return None

    def keep_for_swaps(self) -> bool:
        """Before :meth:`start`: start so that :meth:`swap_to` can work later; False where this kind of
        server cannot load other weights while running (it is restarted instead)."""
        return False

    def swaps_unavailable(self) -> str | None:
        """Why this server can never swap here, known before it starts (None: it may try), so that a slot
        stops asking for swaps at once, says why once, and starts nothing in vain."""
        return None

    def swap_blocker(self, model: str) -> str | None:
        """Why the running server should not be moved to ``model`` (None: it may try)."""
        return f"a {self.name} restarts to serve other weights"

    def swap_to(self, model: str) -> None:
        """Load the weights of ``model`` into the running server, keeping its process, port and GPUs;
        :class:`SwapFailed` where it cannot (the server may then be in any state: stop it)."""
        raise SwapFailed(f"a {self.name} restarts to serve other weights")

    # -- lifecycle -----------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def pgid(self) -> int | None:
        """The server's process group (its leader's pid), while it runs."""
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        """Start and wait until ready; on any failure the process group is stopped before raising."""
        self.check_installed()
        with self._lock:
            if self._stopping.is_set():
                raise JuristError(f"the {self.name} was stopped before it started")
            self.port = free_port()
            self._open_log()
            assert self._log is not None
            self._log_offset = self._log.tell()
            log.info("starting %s on %s: %s", self.name, self.base_url, " ".join(self.command()))
            try:
                self.process = subprocess.Popen(
                    self.command(),
                    stdout=self._log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=self.environment(),
                    start_new_session=True,  # its own process group: stop() signals the group, nothing else
                )
            finally:
                # The server writes through its own copy of the descriptor; ours would only stay open
                # for the server's whole life (log_tail reads the file by its path).
                self._log.close()
                self._log = None
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def _open_log(self) -> None:
        if self.log_path is None:
            handle = tempfile.NamedTemporaryFile(prefix="jurist-server-", suffix=".log", delete=False)
            self.log_path, self._temp_log = Path(handle.name), True
            self._log = handle
        else:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = self.log_path.open("ab")
            self._log.seek(0, os.SEEK_END)  # tell() is the end at once, not after the first write

    def log_tail(self, limit: int = _TAIL_CHARS) -> str:
        """The end of the server's log (empty when there is none)."""
        if self.log_path is None:
            return ""
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - limit))
                return fh.read().decode("utf-8", errors="replace").strip()
        except OSError:
            return ""

    def _exit_problem(self, code: int) -> str:
        if code < 0:
            how = f"was killed by signal {-code}"
            if -code == signal.SIGKILL:
                how += " (out of memory?)"
        else:
            how = f"exited with code {code}"
        tail = self.log_tail()
        return f"the {self.name} {how} before it was ready" + (f"; its log ends:\n{tail}" if tail else "")

    def log_since_start(self, limit: int = 4_000_000) -> str:
        """What this start of the server has written to its log so far (at most ``limit`` bytes)."""
        if self.log_path is None:
            return ""
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(self._log_offset)
                return fh.read(limit).decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _ready(self) -> bool:
        url = f"http://{HOST}:{self.port}{self.ready_path}"
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (loopback only)
                listing = json.loads(resp.read()).get("data") if resp.status == 200 else None
        except (urllib.error.URLError, OSError, ValueError, AttributeError):
            return False
        if not isinstance(listing, list):
            return False
        self.models_listing = [entry for entry in listing if isinstance(entry, dict)]
        return True

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        process = self.process
        assert process is not None
        while not self._stopping.is_set():
            code = process.poll()
            if code is not None:
                raise JuristError(self._exit_problem(code))
            if self._ready():
                self.context_length = self.served_context_length()
                log.info("%s ready on %s (context: %s tokens)", self.name, self.base_url, self.context_length)
                return
            if time.monotonic() >= deadline:
                tail = self.log_tail()
                raise JuristError(
                    f"the {self.name} did not answer on {self.base_url} within {self.startup_timeout:g} s"
                    + (f"; its log ends:\n{tail}" if tail else "")
                )
            self._stopping.wait(_POLL_S)
        raise JuristError(f"the {self.name} was stopped while it was starting")

    def stop(self) -> None:
        """Stop the server's process group (SIGTERM, then SIGKILL); idempotent, safe from any thread."""
        self._stopping.set()
        with self._lock:
            process, self.process = self.process, None
            log_handle, self._log = self._log, None
            temp_log, self._temp_log = self._temp_log, False
        if process is not None:
            _stop_group(process)
        if log_handle is not None:
            log_handle.close()
        if temp_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> ManagedServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group; SIGKILL to whatever of it outlives the grace period or the leader."""
    pgid = process.pid  # start_new_session: the leader's pid is the group id
    if process.poll() is None:
        _signal_group(pgid, signal.SIGTERM)
        try:
            process.wait(timeout=_TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(pgid, signal.SIGKILL)  # children that ignored SIGTERM, or a leader that did
    try:
        process.wait(timeout=_TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        log.warning("process group %d did not exit after SIGKILL", pgid)
