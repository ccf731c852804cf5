"""Managed servers of one engine: started on first use, once per alias, and stopped for sure.

A spec with a ``serve`` block has no endpoints until :meth:`ServerPool.ensure` has started its server;
it then returns the spec with one endpoint on that server. Many first requests may arrive at once: a lock
per alias lets one of them start the server (in a worker thread, so the event loop keeps running) while
the others wait for it. A server that fails to start fails every later ``ensure`` of its alias at once,
with the same message, instead of being started again. :meth:`ServerPool.stop_all` is synchronous and
idempotent, so a runner can call it in a ``finally`` outside the event loop (Ctrl-C, an exception).

GPUs: a spec that asks for a count gets ids no other server of this pool holds (:func:`placed`); an
explicit list is taken as given (two servers may share a GPU on purpose, with small memory fractions).

Warm swaps: a pool given a :class:`KeptServer` (a sweep slot's, ``--warm-swap``) first asks the server kept
from the slot's previous checkpoint to load the new weights, and starts cold only where it cannot (said in
one line); a server it starts is kept for the next checkpoint when its kind can swap (vLLM), and when the
pool closes a kept server that still runs is left running for the slot, which stops it when it ends.
:attr:`ServerPool.served_by` says how each alias was served.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path

from jurist.config import Endpoint, ModelSpec
from jurist.engine.servers import ManagedServer, SwapFailed, placed, server_for
from jurist.errors import JuristError

log = logging.getLogger("jurist.pool")

ServerFactory = Callable[[ModelSpec, Path | None], ManagedServer]


def starting_message(spec: ModelSpec) -> str:
    """What a runner shows while a server starts."""
    from jurist.engine.local.embedded import EMBEDDED_ALIAS

    assert spec.serve is not None
    if spec.alias == EMBEDDED_ALIAS:
        return f"starting the embedded {spec.serve.kind} server (SmolLM2-135M-Instruct)..."
    return f"starting a {spec.serve.kind} server for {spec.alias} ({spec.serve.model})..."


def log_stem(alias: str) -> str:
    """A server log's file name for ``alias``: the alias itself where it is a plain short name, else its
    plain characters (at most 80) and 16 hex digits of its sha256, so an alias with ``/`` or of any length
    never fails to start its server for want of a log file."""
    if _PLAIN.fullmatch(alias):
        return alias
    digest = hashlib.sha256(alias.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{re.sub(r'[^A-Za-z0-9_-]+', '_', alias)[:80]}-{digest}"


_PLAIN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")
# A warm-swap start that vLLM refused because of sleep mode itself (an older vLLM's argument parser, or a
# platform without it): started again without, and this slot swaps no more.
_SLEEP_MODE_REFUSED = re.compile(
    r"unrecognized arguments:.*--enable-sleep-mode|sleep mode is not supported", re.IGNORECASE
)

COLD_START = "cold start"
WARM_SWAP = "warm swap"


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0] if len(lines) <= 1 else f"{lines[0]} ... {lines[-1]}"
    return line if len(line) <= 300 else line[:297] + "..."


class KeptServer:
    """The server one sweep slot keeps from one checkpoint to the next, to move it to the next weights
    without a restart. Thread-safe; :meth:`stop` is idempotent and also runs at exit."""

    def __init__(self) -> None:
        self.server: ManagedServer | None = None
        self.spec: ModelSpec | None = None  # the (placed) spec whose weights it holds now
        self.swaps = True  # False once this slot's vLLM refused sleep mode: cold starts only
        self._closed = False
        self._guard = threading.Lock()
        self._at_exit = False

    def swap(
        self, spec: ModelSpec, notify: Callable[[str], None] | None = None
    ) -> tuple[ManagedServer | None, str]:
        """Blocking: the kept server moved to ``spec``'s weights and ``"warm swap"``; or None and why not
        (the kept server is then stopped), "" when nothing was kept."""
        with self._guard:
            server, kept = self.server, self.spec
        if server is None or kept is None:
            return None, ""
        assert spec.serve is not None and kept.serve is not None
        why = _swap_blocker(server, kept, spec)
        if why is not None:
            self.drop(server)
            return None, f"warm swap skipped: {why}"
        if notify is not None:
            notify(f"moving the {server.name} to {spec.alias} ({spec.serve.model}) without a restart...")
        try:
            server.swap_to(spec.serve.model)
        except SwapFailed as exc:
            self.drop(server)
            return None, f"warm swap failed: {_one_line(str(exc))}"
        with self._guard:
            if self.server is server:
                self.spec = spec
                return server, WARM_SWAP
        server.stop()  # stopped (Ctrl-C) while it swapped
        return None, "warm swap failed: the slot was stopped"

    def hold(self, server: ManagedServer, spec: ModelSpec) -> None:
        """Keep ``server`` (serving ``spec``) for the slot's next checkpoint; once stopped, stop it."""
        with self._guard:
            previous, closed = self.server, self._closed
            if not closed:
                self.server, self.spec = server, spec
                if not self._at_exit:
                    atexit.register(self.stop)
                    self._at_exit = True
        if previous is not None and previous is not server:
            previous.stop()
        if closed:
            server.stop()

    def holds(self, server: ManagedServer) -> bool:
        with self._guard:
            return self.server is server

    def drop(self, server: ManagedServer) -> None:
        """Stop ``server`` and keep nothing (it died, or could not swap)."""
        with self._guard:
            if self.server is server:
                self.server, self.spec = None, None
        server.stop()

    def stop(self) -> None:
        """Stop the kept server and keep nothing more (the slot ended); from any thread, again safely."""
        with self._guard:
            server, self.server, self.spec = self.server, None, None
            self._closed = True
            if self._at_exit:
                atexit.unregister(self.stop)
                self._at_exit = False
        if server is not None:
            server.stop()


def _swap_blocker(server: ManagedServer, kept: ModelSpec, spec: ModelSpec) -> str | None:
    """Why the kept server must not serve ``spec``: a different kind, other serve settings (GPUs, sizes,
    arguments: only the checkpoint may differ), or weights the server says it cannot swap to."""
    assert kept.serve is not None and spec.serve is not None
    process = server.process
    if process is None or process.poll() is not None:
        return "the kept server is no longer running"
    if kept.serve.model_dump(exclude={"model"}) != spec.serve.model_dump(exclude={"model"}):
        return f"{spec.alias}'s serve settings differ from {kept.alias}'s"
    return server.swap_blocker(spec.serve.model)


class ServerPool:
    """The managed servers of one engine, by alias."""

    def __init__(
        self,
        *,
        notify: Callable[[str], None] | None = None,
        log_dir: Path | None = None,
        factory: ServerFactory | None = None,
        keep: KeptServer | None = None,
    ) -> None:
        self.notify = notify
        self.keep = keep  # a sweep slot's server, kept between checkpoints (--warm-swap)
        self.served_by: dict[str, str] = {}  # alias -> cold start | warm swap | why not warm; cold start
        self.log_dir = log_dir  # server logs go to <log_dir>/<alias>.log; temp files (removed) without it
        self._factory = factory  # default: jurist.engine.servers.server_for, by the spec's serve.kind
        self._locks: dict[str, asyncio.Lock] = {}
        self._started: dict[str, ModelSpec] = {}
        self._failed: dict[str, str] = {}
        self._servers: dict[str, ManagedServer] = {}
        self._gpus: dict[str, list[int]] = {}  # the GPUs each started (or starting) server holds
        self._context: dict[str, int | None] = {}  # the context each server said it serves, in tokens
        self._guard = threading.Lock()  # stop_all may run in another thread than ensure
        self._at_exit = False

    @property
    def servers(self) -> dict[str, ManagedServer]:
        """The servers started (or starting) so far, by alias."""
        with self._guard:
            return dict(self._servers)

    def context_length(self, alias: str) -> int | None:
        """The context (prompt and reply, in tokens) the alias's server said it serves; None: unknown."""
        return self._context.get(alias)

    async def ensure(self, spec: ModelSpec) -> ModelSpec:
        """The spec with endpoints on its running server, started now if this is the first call."""
        if spec.serve is None:
            return spec
        alias = spec.alias
        started = self._started.get(alias)
        if started is not None:
            return started
        lock = self._locks.setdefault(alias, asyncio.Lock())
        async with lock:
            started = self._started.get(alias)
            if started is not None:
                return started
            if alias in self._failed:
                raise JuristError(self._failed[alias])
            started = await self._start(spec)
            self._started[alias] = started
            return started

    def _place(self, spec: ModelSpec) -> ModelSpec:
        """The spec on GPUs of its own: a count never takes ids another server of this pool holds."""
        with self._guard:
            busy = {gpu for ids in self._gpus.values() for gpu in ids}
            spec = placed(spec, busy)
            assert spec.serve is not None
            if isinstance(spec.serve.gpus, list):
                self._gpus[spec.alias] = list(spec.serve.gpus)
            return spec

    async def _start(self, spec: ModelSpec) -> ModelSpec:
        try:
            spec = await asyncio.to_thread(self._place, spec)  # may ask nvidia-smi: not on the loop
        except JuristError as exc:  # not enough GPUs: nothing was started
            self._failed[spec.alias] = f"model {spec.alias!r}: {exc}"
            raise JuristError(self._failed[spec.alias]) from None
        why_cold = ""
        if self.keep is not None:
            swapped, why_cold = await asyncio.to_thread(self.keep.swap, spec, self.notify)
            if swapped is not None:
                with self._guard:
                    self._servers[spec.alias] = swapped
                return self._served(spec, swapped, WARM_SWAP)
            if why_cold and self.notify is not None:
                self.notify(f"{why_cold}; starting {spec.alias} cold")
        try:
            server = await self._start_cold(spec, swaps=self.keep is not None and self.keep.swaps)
            unavailable = server.swaps_unavailable() if self.keep is not None and self.keep.swaps else None
            if unavailable is not None and self.keep is not None:  # said once; this slot swaps no more
                self.keep.swaps = False
                why_cold = f"warm swap off: {unavailable}"
                if self.notify is not None:
                    self.notify(f"{why_cold}; each checkpoint of this slot starts cold")
        except JuristError as exc:
            if self.keep is None or not self.keep.swaps or not _SLEEP_MODE_REFUSED.search(str(exc)):
                raise
            self.keep.swaps = False  # this vLLM will not run in sleep mode: plain starts from now on
            self._failed.pop(spec.alias, None)
            why_cold = "warm swap failed: this vLLM does not start with --enable-sleep-mode"
            if self.notify is not None:
                self.notify(f"{why_cold} ({_one_line(str(exc))}); starting {spec.alias} without it")
            server = await self._start_cold(spec, swaps=False)
        return self._served(spec, server, f"{why_cold}; {COLD_START}" if why_cold else COLD_START)

    def _served(self, spec: ModelSpec, server: ManagedServer, how: str) -> ModelSpec:
        """The spec with one endpoint on ``server``, under the name the server answers to."""
        self.served_by[spec.alias] = how
        self._context[spec.alias] = server.context_length
        endpoint = Endpoint(api_base=server.base_url, model_name=server.answers_to or spec.model)
        return spec.model_copy(update={"endpoints": [endpoint]})

    async def _start_cold(self, spec: ModelSpec, *, swaps: bool) -> ManagedServer:
        """A new server for ``spec``, started and ready (kept for swaps when ``swaps`` and its kind can)."""
        log_path = self.log_dir / f"{log_stem(spec.alias)}.log" if self.log_dir is not None else None
        try:
            server = (self._factory or server_for)(spec, log_path)
        except JuristError as exc:  # a bad argument: nothing was started
            self._failed[spec.alias] = f"model {spec.alias!r}: {exc}"
            raise JuristError(self._failed[spec.alias]) from None
        kept = swaps and server.keep_for_swaps()
        with self._guard:
            self._servers[spec.alias] = server
            if not self._at_exit:  # a last resort for runners that forget stop_all()
                atexit.register(self.stop_all)
                self._at_exit = True
        if self.notify is not None:
            self.notify(starting_message(spec))
        try:
            await asyncio.to_thread(server.start)
        except BaseException as exc:
            with self._guard:
                self._gpus.pop(spec.alias, None)  # stopped: its GPUs are free for the others
            if not isinstance(exc, Exception):  # cancelled (Ctrl-C)
                server.stop()  # ends the starting thread's wait, and the process group
                raise
            self._failed[spec.alias] = f"model {spec.alias!r}: {exc}"
            raise JuristError(self._failed[spec.alias]) from None
        if kept and self.keep is not None:
            self.keep.hold(server, spec)
        return server

    def stop_all(self) -> None:
        """Stop every server this pool started, but leave a kept server that still runs to its slot (which
        stops it); safe to call again, from any thread, with no loop."""
        with self._guard:
            servers = list(self._servers.values())
            self._servers.clear()
            self._gpus.clear()
            if self._at_exit:
                atexit.unregister(self.stop_all)
                self._at_exit = False
        self._started.clear()
        for server in servers:
            if self.keep is not None and self.keep.holds(server):
                process = server.process
                if process is not None and process.poll() is None:
                    continue  # running: the slot's next checkpoint swaps it
                self.keep.drop(server)
                continue
            try:
                server.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                log.exception("could not stop %s", server.name)

    async def aclose(self) -> None:
        """:meth:`stop_all` without blocking the event loop."""
        if self._servers:
            await asyncio.to_thread(self.stop_all)
