"""Answers checked while the run's other answers are still on the wire.

A rule-checked run used to check every answer after the last reply: a second or more of CPU at the end of
an IFEval run, while the generation before it sat 70-93% idle waiting on the server. The generate stage
hands each answer here as it is written (:func:`check_ahead`); one worker thread checks them in arrival
order, and :func:`jurist.rules.check_response` takes the result when the run's end asks for the same
check, waiting for it if it is still running. Nothing is approximated: a result is used only for the very
same inputs (checkers, text, instruction ids, arguments, prompt), checkers are pure functions of those,
and only one thread runs a checker at a time (:data:`RUNNING`: NLTK's lazy corpus loaders are not
thread-safe). A check never asked for again is dropped by :func:`forget_checked_ahead`.
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from jurist.rules.base import Checker

Key = tuple[int, str, str, str, str]
Results = list[Any]  # list[InstructionResult]; typed loosely so this module needs no evaluate import
Job = tuple[Future[Results], Callable[[], Results]]

RUNNING = threading.Lock()
"""Held while a checker runs, on any thread: checks never run two at a time."""

_lock = threading.Lock()
_pending: dict[Key, tuple[Future[Results], Mapping[str, Checker]]] = {}
_queue: deque[Job] = deque()
_worker: threading.Thread | None = None


def check_key(
    checkers: Mapping[str, Checker],
    response: str,
    instruction_ids: Sequence[str],
    kwargs_list: Sequence[Mapping[str, Any] | None],
    prompt: str,
) -> Key:
    """What identifies one check: the checker table by identity, the rest by value (``repr`` tells
    apart what JSON values a checker could tell apart: 1 and 1.0, a list and a tuple)."""
    return (id(checkers), response, repr(list(instruction_ids)), repr(list(kwargs_list)), prompt)


def check_ahead(key: Key, checkers: Mapping[str, Checker], run: Callable[[], Results]) -> None:
    """Start ``run`` (the check ``key`` names) on the worker thread, unless it is already there."""
    global _worker
    with _lock:
        if key in _pending:
            return
        future: Future[Results] = Future()
        _pending[key] = (future, checkers)  # the table kept alive: its id stays its own
        _queue.append((future, run))
        if _worker is None:
            _worker = threading.Thread(target=_work, name="jurist-rule-checks", daemon=True)
            _worker.start()


def checked_ahead(key: Key) -> Future[Results] | None:
    """The check ``key`` names if it was started ahead (taken: a second ask checks again), else None."""
    with _lock:
        entry = _pending.pop(key, None)
    return entry[0] if entry is not None else None


def forget_checked_ahead() -> None:
    """Drop the checks nobody took (their answers' points were kept from an earlier run...): those still
    queued are not run. A check already taken is left alone: whoever took it gets its result."""
    with _lock:
        for future, _ in _pending.values():
            future.cancel()
        _pending.clear()


SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the GIL while another waits for it, while checks run (Python's default: 5 ms).
The event loop sending the requests wakes for every reply; behind a check (or nltk's import, 1.5 s of
bytecode at the first one) it would wait up to the whole default interval at each wake-up, and keep
fewer requests in flight."""


def _work() -> None:
    """Run the queued checks in order; the thread ends when the queue is empty (a later answer starts
    another), so none is left waiting at exit."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
    try:
        _run_queued()
    finally:
        sys.setswitchinterval(interval)


def _run_queued() -> None:
    global _worker
    while True:
        with _lock:
            if not _queue:
                _worker = None
                return
            future, run = _queue.popleft()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            with RUNNING:
                result = run()
        except BaseException as exc:  # noqa: BLE001 - raised again where the result is taken
            future.set_exception(exc)
        else:
            future.set_result(result)
