"""Ctrl-C and SIGTERM during a run: save and stop cleanly, and never hang.

The first signal cancels the run's main task, so every stage closes its files, the engine closes its
sessions and the servers jurist started are stopped, and the run exits 130. Should that not finish within a
grace period (a library that never returns from a close, a cancelled wait that is never woken), or on a
second Ctrl-C, the forced path stops the managed servers, flushes what is held in memory and exits at once:
results already appended are on disk either way (every line is written whole).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

GRACE_S = 20.0
FORCED_STOP = (
    "interrupted: the run did not stop in time, so it was stopped at once; everything appended so far is "
    "saved; run again to resume"
)


class GracefulInterrupt:
    """Signal handling around one event loop run (install in the main thread, with ``with``)."""

    def __init__(
        self,
        on_force: Callable[[], None],
        *,
        grace_s: float = GRACE_S,
        exit: Callable[[int], Any] = os._exit,  # noqa: A002 - tests pass a recorder instead
    ) -> None:
        self._on_force = on_force
        self._grace_s = grace_s
        self._exit = exit
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: threading.Timer | None = None
        self._previous: dict[int, Any] = {}
        self._forced = threading.Lock()
        self.count = 0

    @property
    def interrupted(self) -> bool:
        return self.count > 0

    def attach(self) -> None:
        """Call first thing inside the main task: the task a signal cancels."""
        import asyncio

        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        task, loop = self._task, self._loop
        if self.count == 1 and task is not None and loop is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)
            self._timer = threading.Timer(self._grace_s, self.force)
            self._timer.daemon = True
            self._timer.start()
            return
        if self.count == 1:  # before or after the loop: the ordinary KeyboardInterrupt path saves all
            raise KeyboardInterrupt
        self.force()

    def force(self) -> None:
        """Stop what jurist started, flush, and exit 130 now (from the timer thread or a second signal)."""
        if not self._forced.acquire(blocking=False):
            return
        try:
            self._on_force()
        finally:
            self._exit(130)

    def __enter__(self) -> GracefulInterrupt:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)


def run_interruptibly(
    main: Callable[[GracefulInterrupt], Coroutine[Any, Any, None]], on_force: Callable[[], None]
) -> None:
    """``asyncio.run(main(interrupt))`` under :class:`GracefulInterrupt`; a signal ends it with
    KeyboardInterrupt (exit 130 in the CLI) once everything has been saved."""
    import asyncio  # here, not at the top: the command line installs its signals before any import

    interrupt = GracefulInterrupt(on_force)
    try:
        with interrupt:
            asyncio.run(main(interrupt))
    except asyncio.CancelledError:
        if interrupt.interrupted:
            raise KeyboardInterrupt from None
        raise


def _as_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def interrupt_on_signals() -> None:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt (the command line says so in one line and exits 130);
    installed first thing, since importing the commands takes a moment. A run installs its own."""
    signal.signal(signal.SIGINT, _as_keyboard_interrupt)
    signal.signal(signal.SIGTERM, _as_keyboard_interrupt)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM as Ctrl-C for the block: the same clean shutdown (servers stopped, files closed), for run and
    sweep; the handler before is put back after."""
    previous = signal.signal(signal.SIGTERM, _as_keyboard_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_loop_on_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
    """Ctrl-C and SIGTERM call ``stop`` on ``loop``: how a long-lived server (``jurist serve``) ends, its
    site stopped and its engine closed by the code waiting on ``stop``, never mid-request."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
