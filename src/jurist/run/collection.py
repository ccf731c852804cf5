"""Python's cyclic garbage collector held off while a process starts.

Before a run's first request the interpreter imports some 560 modules and the run reads its plan: about
55,000 objects, nearly all of which live as long as the process. Each 700 allocations start a
collection, so the start paid ~130 collections (30-60 ms of Arena-Hard's 0.5 s to the first request)
that found nothing to free. The ``jurist`` command holds collection from its entry until the command
is under way (:func:`resume_collection`: a run's launch, any other command's first step), then freezes
what was made (later collections never scan it again) and turns collection back on. In-process callers
of :func:`jurist.cli.main` never hold it, so the collector stays as they set it.
"""

from __future__ import annotations

import gc

_held = False


def hold_collection() -> None:
    """Collection off until :func:`resume_collection` (only where it was on: the caller's choice stands)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def resume_collection() -> None:
    """What the start made moved out of later collections' way, and collection on again; nothing where
    :func:`hold_collection` did not turn it off."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


__all__ = ["hold_collection", "resume_collection"]
