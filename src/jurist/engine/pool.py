"""Managed servers of one engine: started on first use, once per alias, and stopped for sure.

A spec with a ``serve`` block has no endpoints until :meth:`ServerPool.ensure` has started its server;
it then returns the spec with one endpoint on that server. Many first requests may arrive at once: a lock
per alias lets one of them start the server (in a worker thread, so the event loop keeps running) while
the others wait for it. A server that fails to start fails every later ``ensure`` of its alias at once,
with the same message, instead of being started again. :meth:`ServerPool.stop_all` is synchronous and
idempotent, so a runner can call it in a ``finally`` outside the event loop (Ctrl-C, an exception).

GPUs: a spec that asks for a count gets ids no other server of this pool holds (:func:`placed`); an
explicit list is taken as given (two servers may share a GPU on purpose, with small memory fractions).
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
from jurist.engine.servers import ManagedServer, placed, server_for
from jurist.errors import JuristError

log = logging.getLogger("jurist.pool")

ServerFactory = Callable[[ModelSpec, Path | None], ManagedServer]


def starting_message(spec: ModelSpec) -> str:
    """What a runner shows while a server starts."""
    from jurist.engine.embedded import EMBEDDED_ALIAS

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


class ServerPool:
    """The managed servers of one engine, by alias."""

    def __init__(
        self,
        *,
        notify: Callable[[str], None] | None = None,
        log_dir: Path | None = None,
        factory: ServerFactory | None = None,
    ) -> None:
        self.notify = notify
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
        log_path = self.log_dir / f"{log_stem(spec.alias)}.log" if self.log_dir is not None else None
        try:
            spec = await asyncio.to_thread(self._place, spec)  # may ask nvidia-smi: not on the loop
            server = (self._factory or server_for)(spec, log_path)
        except JuristError as exc:  # not enough GPUs, a bad argument: nothing was started
            self._failed[spec.alias] = f"model {spec.alias!r}: {exc}"
            raise JuristError(self._failed[spec.alias]) from None
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
        self._context[spec.alias] = server.context_length
        endpoint = Endpoint(api_base=server.base_url, model_name=spec.model)
        return spec.model_copy(update={"endpoints": [endpoint]})

    def stop_all(self) -> None:
        """Stop every server this pool started; safe to call again, from any thread, with no loop."""
        with self._guard:
            servers = list(self._servers.values())
            self._servers.clear()
            self._gpus.clear()
            if self._at_exit:
                atexit.unregister(self.stop_all)
                self._at_exit = False
        self._started.clear()
        for server in servers:
            try:
                server.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                log.exception("could not stop %s", server.name)

    async def aclose(self) -> None:
        """:meth:`stop_all` without blocking the event loop."""
        if self._servers:
            await asyncio.to_thread(self.stop_all)
