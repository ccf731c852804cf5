"""Every ``--track`` of a sweep or run, and what each has already received: ``DIR/tracked.json``.

A tracker that fails (a server down, a full disk, a missing client) never costs an evaluation: the
points are in sweep.json (or the run's results) whatever happens, the failure is one warning line, and
the next run logs every point the ledger does not list as received, so a tracker is back-filled instead
of holding anything up. A point is recorded as received only once its client took it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.redact import mask
from jurist.track.clients import Tracker, check_target, open_tracker
from jurist.track.points import Point, sweep_points

log = logging.getLogger("jurist.track")
LEDGER_FILE = "tracked.json"


class Trackers:
    """The trackers of one sweep (or run), opened lazily, and their ledger in ``directory``."""

    def __init__(self, targets: Sequence[str], directory: Path, name: str) -> None:
        for target in targets:
            check_target(target)  # a malformed --track is a usage error before anything runs
        self.targets = list(dict.fromkeys(targets))
        self.path = directory / LEDGER_FILE
        self.name = name
        self._open: dict[str, Tracker] = {}
        self._state = self._read()

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s is unreadable (%s): every point is logged again", self.path, exc)
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._state, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(self.path)

    def log_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """sweep.json's rows: each tracker gets the points it has not received yet."""
        self.log(sweep_points(rows))

    def log(self, points: Sequence[Point]) -> None:
        """``points`` to every tracker, less what each already has; a failure warns and is retried later."""
        for target in self.targets:
            entry = self._state.setdefault(target, {})
            done = set(entry.get("logged") or [])
            missing = [p for p in points if p.ident not in done]
            if not missing:
                continue
            try:
                tracker = self._tracker(target, entry)
                tracker.log(missing)
            except JuristError:
                raise
            except Exception as exc:  # noqa: BLE001 - any client error: the points wait for the next run
                why = mask(f"{type(exc).__name__}: {exc}").splitlines()[0][:300]
                log.warning(
                    "--track %s failed (%s); its %d point(s) are kept and logged by the next run",
                    mask(target), why, len(missing),
                )  # fmt: skip
                self._open.pop(target, None)
                continue
            entry["logged"] = sorted(done | {p.ident for p in missing})
            self._write()

    def _tracker(self, target: str, entry: dict[str, Any]) -> Tracker:
        tracker = self._open.get(target)
        if tracker is None:
            state = entry.setdefault("state", {})
            tracker = self._open[target] = open_tracker(target, state, self.name)
            self._write()  # the run it opened (MLflow, W&B) is found again after a crash
        return tracker

    def close(self) -> None:
        for target, tracker in list(self._open.items()):
            try:
                tracker.close()
            except Exception as exc:  # noqa: BLE001 - closing a client never fails the run
                log.warning("--track %s: closing failed (%s)", mask(target), type(exc).__name__)
        self._open.clear()
