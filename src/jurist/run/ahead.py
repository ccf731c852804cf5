"""The modules a run's closing steps need, imported in a thread while the run waits on its last replies.

A judged Arena-Hard run imported ~130 modules after its last judgment came back (numpy, the family's
scoring, the report's tables): ~120 ms of the ~0.24 s between its last reply and its scores, when the
process had spent the seconds before mostly waiting on the network. Imported while it waits, they cost
that time no more. Which modules: the scoring family's ``scoring_modules`` (an optional attribute of a
:class:`jurist.families.Family`), the judge card's probes where a card is made, and the report's tables
(:data:`jurist.report.DRAWING_MODULES`).
An import that fails here is left alone: the step that needs the module imports it again and says why.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable

_log = logging.getLogger(__name__)


def import_ahead(modules: Callable[[], Iterable[str]]) -> threading.Thread:
    """Import what ``modules()`` names (worked out in the thread too: finding a family imports its
    module), those not imported yet, in order, in a daemon thread. A module the run's own thread reaches
    first is imported once: the import system's per-module lock makes the later import wait for it."""
    thread = threading.Thread(target=_import_all, args=(modules,), name="jurist-import-ahead", daemon=True)
    thread.start()
    return thread


def _import_all(modules: Callable[[], Iterable[str]]) -> None:
    try:
        names = [name for name in dict.fromkeys(modules()) if name not in sys.modules]
    except Exception as exc:  # the closing steps find the same fault and report it in the run's own words
        _log.debug("listing the modules to import ahead of the run's end failed: %s", exc)
        return
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # imported again where needed, which reports it in the run's own words
            _log.debug("importing %s ahead of the run's end failed: %s", name, exc)


__all__ = ["import_ahead"]
