"""Pin BLAS to one thread while fitting.

The fits here are many tiny linear-algebra calls; OpenBLAS's default thread pool only adds wake-up and
contention cost to them (a 1 ms fit measured at 88 ms under CPU load). ``threadpoolctl`` is optional: it
usually arrives with scipy/scikit-learn installs, and without it the context manager does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Limit BLAS libraries to one thread inside the ``with`` block (a no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - depends on the environment
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
