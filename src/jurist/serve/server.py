"""Running the reward server: in the foreground for ``jurist serve reward``, or in a thread of this
process (tests, benchmarks, the in-process ``compute_score``).

The service is built inside the server's event loop, so the engine's sessions, limits and cache belong
to that loop; a signal (Ctrl-C, SIGTERM) stops the site, then closes the engine (the cache written back,
servers jurist started stopped by their process group), the usage log and the directory's lock.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from jurist.errors import JuristError
from jurist.redact import register_secret
from jurist.run import stop_loop_on_signals
from jurist.serve.app import LOOPBACK, Access, Bounds, reward_app
from jurist.serve.metrics import ServeMetrics
from jurist.serve.service import RewardService, ServeSettings


def read_token(path: Path) -> str:
    """The bearer token in ``path`` (one line), registered as a secret so nothing prints it."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise JuristError(
            f"--token-file {path}: cannot be read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    if not token or "\n" in token or len(token) < 16:
        raise JuristError(f"--token-file {path}: must hold one token of at least 16 characters on one line")
    register_secret(token)
    return token


@dataclass(frozen=True)
class Listen:
    """Where and for whom the server listens."""

    host: str = "127.0.0.1"
    port: int = 8431
    token_file: Path | None = None

    def access(self) -> Access:
        """A token from the file; any address beyond loopback without one is refused: anyone on the
        network could spend the judge's budget."""
        token = read_token(self.token_file) if self.token_file is not None else None
        if self.host not in LOOPBACK and token is None:
            raise JuristError(f"--host {self.host}: binding beyond 127.0.0.1 needs --token-file")
        return Access(token)

    def hosts(self, port: int) -> frozenset[str] | None:
        """The Host headers a loopback bind answers (None elsewhere: the token guards it)."""
        if self.host not in LOOPBACK:
            return None
        names = ["127.0.0.1", "localhost", "[::1]"]
        return frozenset(f"{name}:{port}" for name in names) | frozenset(names)


class RewardServer:
    """One service behind one site; :meth:`start` and :meth:`stop` run in the server's event loop."""

    def __init__(self, settings: ServeSettings, listen: Listen, bounds: Bounds | None = None) -> None:
        self.settings, self.listen, self.bounds = settings, listen, bounds or Bounds()
        self.port = listen.port
        self.service: RewardService | None = None
        self._runner: web.AppRunner | None = None
        self._metrics: ServeMetrics | None = None

    async def start(self) -> int:
        """Build the service, bind, and return the port (the one asked, or a free one for 0)."""
        access = self.listen.access()  # refused before anything is built
        service = self.service = RewardService.build(self.settings)
        try:
            self._metrics = ServeMetrics(service.root / "steps.jsonl")
            app = reward_app(service, access, self.bounds, self._metrics)
            runner = self._runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, self.listen.host, self.listen.port)
            try:
                await site.start()
            except OSError as exc:
                raise JuristError(
                    f"cannot listen on {self.listen.host}:{self.listen.port} ({exc.strerror or exc})"
                ) from None
            sockets = getattr(site._server, "sockets", None) or []
            self.port = int(sockets[0].getsockname()[1]) if sockets else self.listen.port
            access.hosts = self.listen.hosts(self.port)  # no request is read before this line runs
        except BaseException:
            await self.stop()
            raise
        return self.port

    async def stop(self) -> None:
        try:
            if self._runner is not None:
                await self._runner.cleanup()
        finally:
            self._runner = None
            if self._metrics is not None:
                self._metrics.close()
            if self.service is not None:
                service, self.service = self.service, None
                await service.aclose()

    @property
    def url(self) -> str:
        host = self.listen.host if ":" not in self.listen.host else f"[{self.listen.host}]"
        return f"http://{host}:{self.port}"


def serve_forever(server: RewardServer, ready: Callable[[str], None] | None = None) -> None:
    """Run ``server`` until SIGINT or SIGTERM; ``ready(url)`` is called once it listens."""

    async def main() -> None:
        await server.start()
        stop = asyncio.Event()
        stop_loop_on_signals(asyncio.get_running_loop(), stop.set)
        try:
            if ready is not None:
                ready(server.url)
            await stop.wait()
        finally:
            await server.stop()

    asyncio.run(main())


class ThreadedServer:
    """A reward server in a thread of this process, with its own event loop."""

    def __init__(self, server: RewardServer) -> None:
        self.server = server
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="jurist-reward")

    def start(self, timeout: float = 120.0) -> str:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(timeout)
        return self.server.url

    def stop(self, timeout: float = 60.0) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            self._loop.close()

    def run(self, coroutine: object, timeout: float | None = None) -> object:
        """Run a coroutine in the server's loop (the in-process compute_score) and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)  # type: ignore[arg-type]


__all__ = ["Listen", "RewardServer", "ThreadedServer", "read_token", "serve_forever"]
