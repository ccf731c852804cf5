"""What one run keeps of itself while it runs: its id, run.json's fields, its failure log and its ledger's
usage log. run.json is written through it at every change of status, so a session
(:mod:`jurist.run.session`) marks a stopped or crashed run, and closes its logs, without the run's steps.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from jurist.engine import Engine
from jurist.redact import mask
from jurist.run.budget import RunLedger
from jurist.run.generate import FailureLog
from jurist.store import CRASHED, RunDir, RunJson


class RunRecord:
    """One run's run.json, failure log and usage log, in ``run_dir``; ``accounts``: its prices, budget and
    ledger (the usage log is the ledger's)."""

    def __init__(self, run_dir: RunDir, accounts: RunLedger) -> None:
        self.run_dir = run_dir
        self.accounts = accounts
        self.run_id = uuid.uuid4().hex[:12]

    failures: FailureLog
    """This run's failed requests (failures.jsonl), opened by :meth:`open_logs`."""
    fields: dict[str, Any]
    """run.json's fields of the plan and of this run, as written at open (:meth:`write_opened`)."""
    opened: RunJson
    """run.json as written at open and read back: what the end of the run scores by."""

    def open_logs(self) -> None:
        """The failure log and the usage log opened (the lock is held: this run is the directory's writer)."""
        self.failures = FailureLog(self.run_dir.failures, self.run_id)
        self.accounts.open_log(self.run_dir.root, self.run_id)  # the probes' usage, then every request's

    def write_opened(self, fields: dict[str, Any]) -> None:
        """run.json written as running, with ``fields`` and the directory's ledger so far (so that a run
        killed now does not lose what earlier runs spent)."""
        self.fields = fields
        self.opened = self.run_dir.write_run_json(
            self.run_id, "running", {**fields, **self.accounts.fields()}
        )

    def _progress(self, engine: Engine) -> dict[str, Any]:
        return {"failures": self.failures.count, "usage": engine.stats.summary(), **self.accounts.fields()}

    def interrupted(self, engine: Engine) -> None:
        """run.json written as interrupted: what is on disk stays, a re-run resumes it."""
        self.run_dir.write_run_json(self.run_id, "interrupted", {**self.fields, **self._progress(engine)})

    def crashed(self, engine: Engine, error: BaseException) -> None:
        """run.json written as crashed, saying why in one line (secrets masked); a re-run resumes it."""
        why = mask(f"{type(error).__name__}: {error}".splitlines()[0][:500])
        fields = {**self.fields, **self._progress(engine), "error": why}
        self.run_dir.write_run_json(self.run_id, CRASHED, fields)

    def ended(self, status: str, summary: Mapping[str, Any]) -> None:
        """run.json written as ``status`` (finished, stopped-by-budget) with the run's ``summary`` (its
        ledger, exit code, usage...)."""
        self.run_dir.write_run_json(self.run_id, status, {**self.fields, **summary})

    def close(self) -> None:
        """The failure log and the usage log closed, however the run ended."""
        self.failures.close()
        self.accounts.close_log()


__all__ = ["RunRecord"]
