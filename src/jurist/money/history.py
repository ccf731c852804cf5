"""What the earlier runs of a run directory spent, rebuilt from its usage log (:mod:`jurist.store.usage`).

run.json is a summary for people, rewritten whole by every run; a crash or an editor can corrupt it. The
ledger of a directory is therefore the usage log's lines added up (one per request settled), and a corrupt
run.json is said in one line and written anew, never taken as "nothing spent". A directory from before the
log has only run.json: its ledger is read from there once, as the starting point, and becomes the first
lines of the log that the next run opens (:class:`jurist.run.budget.RunLedger`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.config import Price
from jurist.errors import JuristError
from jurist.money.rows import COUNTS, LABELS, add_rows, row_order, total_of
from jurist.store import add_usage, iter_usage_log, usage_log_path, usage_record_problem
from jurist.tokens import merge_labels

log = logging.getLogger("jurist.run.budget")


def add_ledgers(*ledgers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Several ledgers as one (the runs of one directory, or of a sweep): rows of the same phase and model
    add up; the budget kept is the last one's."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    budget: Any = None
    for ledger in ledgers:
        if not ledger:
            continue
        for row in ledger.get("rows") or []:
            key = (str(row.get("phase")), str(row.get("model")))
            rows[key] = add_rows(rows.get(key, {}), row)
        budget = ledger.get("budget", budget)
    ordered = [{"phase": p, "model": m, **row} for (p, m), row in sorted(rows.items(), key=row_order)]
    data: dict[str, Any] = {"rows": ordered, "total": total_of(ordered)}
    if budget is not None:
        data["budget"] = budget
    return data


def ledger_of_run(run: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ledger a run.json holds for its whole directory; for one written before the ledger existed,
    its usage counters as one row per model under phase "all" (no prices were known then). Rows that are
    not ledger rows (wrong types) make it None: :func:`run_json_problem` says so."""
    for name in ("ledger_total", "ledger"):
        ledger = run.get(name)
        if isinstance(ledger, dict) and isinstance(ledger.get("rows"), list):
            if any(usage_record_problem(_record_of(row)) for row in ledger["rows"]):
                return None
            return dict(ledger)
    usage = run.get("usage_total", run.get("usage"))
    if not isinstance(usage, dict) or not isinstance(usage.get("per_model"), dict):
        return None
    rows = []
    for model, counts in sorted(usage["per_model"].items()):
        if isinstance(counts, dict):
            names = ("requests", "cache_hits", "prompt_tokens", "completion_tokens")
            row = {name: counts.get(name, 0) for name in names}
            if usage_record_problem({"phase": "all", "model": str(model), **row}):
                return None
            rows.append({"phase": "all", "model": str(model), **add_rows({}, row)})
    return {"rows": rows, "total": total_of(rows)}


def _record_of(row: Any) -> Any:
    """A run.json ledger row as a usage-log record (what is checked and added up the same way)."""
    return {k: v for k, v in row.items() if k not in ("unpriced",)} if isinstance(row, dict) else row


def run_json_problem(run_dir: Path) -> str | None:
    """What is wrong with ``run_dir/run.json`` (None: nothing, or there is none): not JSON, not an
    object, or a ledger or usage of the wrong types."""
    try:
        data = json.loads((run_dir / "run.json").read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except ValueError as exc:
        return f"is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return f"is a JSON {type(data).__name__}, not an object"
    kept = [name for name in ("ledger_total", "ledger", "usage_total", "usage") if name in data]
    if kept and ledger_of_run(data) is None:
        return f"has a {kept[0]} of the wrong types"
    return None


def read_run_json(run_dir: Path) -> dict[str, Any]:
    """``run_dir/run.json`` as a dict; {} when it is missing or unreadable (a fresh directory)."""
    try:
        data = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class DirectoryUsage:
    """What the earlier runs of a directory spent: the usage log's records added up as a ledger (or, for a
    directory from before the log, its run.json's ledger rows, ``carried`` into the log when the next run
    opens it)."""

    spent: list[dict[str, Any]]
    """The records added up per (phase, model, whether their dollars were known when they were sent):
    what :func:`spent_by` prices, with the same result as record by record (a price is linear)."""
    ledger: dict[str, Any] | None
    carried: list[dict[str, Any]] = field(default_factory=list)
    unknown: str | None = None
    """Why what earlier runs spent cannot be known (run.json corrupt and no usage log), else None."""
    problems: list[str] = field(default_factory=list)
    """Lines of the usage log left out (not records), as ``usage.jsonl:LINE: why``."""


def directory_usage(run_dir: Path) -> DirectoryUsage:
    """The usage of every earlier run of ``run_dir``, from its usage log, read a line at a time; run.json
    only where there is no log yet (read once: the run that opens the log writes its rows in as the log's
    first lines). A corrupt run.json is said in one line, and never taken as "nothing spent"."""
    problems: list[str] = []
    cells = _cells(iter_usage_log(usage_log_path(run_dir), problems))
    problem = run_json_problem(run_dir)
    run_json = run_dir / "run.json"
    for line in problems[:3]:
        log.warning("%s (the line is left out of the ledger)", line)
    if cells:
        if problem is not None:
            log.warning("%s %s: the ledger is rebuilt from %s, and run.json written anew", run_json, problem,
                        usage_log_path(run_dir).name)  # fmt: skip
        return DirectoryUsage(cells, add_ledgers({"rows": cells}), problems=problems)
    if problem is not None:
        unknown = f"{run_json} {problem}, and the directory has no usage log ({usage_log_path(run_dir).name})"
        log.warning("%s: what earlier runs here spent is unknown; run.json is written anew", unknown)
        return DirectoryUsage([], None, unknown=unknown, problems=problems)
    ledger = ledger_of_run(read_run_json(run_dir))
    carried = [{**_record_of(row), "carried": "run.json"} for row in (ledger or {}).get("rows") or []]
    return DirectoryUsage(carried, ledger, carried=carried, problems=problems)


def _cells(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The records added up by (phase, model, dollars known or not), as ledger rows. Summed field by field
    and made rows once at the end: a 50k-question run's log of 200k lines is added up in ~1 s, against
    ~4 s with a row built per line (:func:`add_rows`)."""
    sums: dict[tuple[str, str, bool], dict[str, Any]] = {}
    for record in records:
        known = isinstance(record.get("cost_usd"), (int, float))
        key = (str(record["phase"]), str(record["model"]), known)
        cell = sums.get(key)
        if cell is None:
            cell = sums[key] = {}
        for name, value in record.items():
            if name in _COUNTED or (name == "cost_usd" and known):
                cell[name] = cell.get(name, 0) + value
            elif name in LABELS:
                cell[name] = merge_labels(cell.get(name), value)
    return [
        {"phase": phase, "model": model, **add_rows({}, cell)} for (phase, model, _), cell in sums.items()
    ]


_COUNTED = frozenset(COUNTS)


def usage_of_ledger(ledger: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """run.json's ``usage`` totals (requests, cache hits, retries, tokens; per model) of a ledger, probes
    (phase ``check``) left out as :class:`~jurist.money.stats.EngineStats` leaves them."""
    if not ledger:
        return None
    usage: dict[str, Any] = {"per_model": {}}
    for row in ledger.get("rows") or []:
        if row.get("phase") == "check":
            continue
        counts = {name: int(row.get(name) or 0) for name in _USAGE_COUNTS}
        usage = add_usage(usage, {**counts, "per_model": {str(row.get("model")): _per_model(counts)}})
    return usage


_USAGE_COUNTS = ("requests", "cache_hits", "retries", "prompt_tokens", "completion_tokens")


def _per_model(counts: Mapping[str, int]) -> dict[str, int]:
    return {name: counts[name] for name in ("requests", "cache_hits", "prompt_tokens", "completion_tokens")}


def usage_of_runs(run_dirs: Sequence[Path]) -> dict[str, Any]:
    """The ledger of each run directory added up (``jurist show --usage RUN...``: a sweep's cost)."""
    ledgers = []
    for run_dir in run_dirs:
        ledger = directory_usage(run_dir).ledger
        if ledger is None:
            raise JuristError(
                f"{run_dir}: no usage log or run.json with usage (is it a jurist run directory?)"
            )
        budget = (ledger_of_run(read_run_json(run_dir)) or {}).get("budget")
        ledgers.append({**ledger, "budget": budget} if budget is not None else ledger)
    total = add_ledgers(*ledgers)
    if len(run_dirs) > 1:
        total.pop("budget", None)  # each directory had its own
    return total


def spent(ledger: Mapping[str, Any] | None, prices: Mapping[str, Price]) -> tuple[float, int]:
    """Dollars and tokens that ``ledger``'s requests cost (:func:`spent_by`, its rows as the records)."""
    return spent_by((ledger or {}).get("rows") or [], prices)


def spent_by(records: Iterable[Mapping[str, Any]], prices: Mapping[str, Price]) -> tuple[float, int]:
    """Dollars and tokens that the usage records (or ledger rows) cost; those recorded before their model
    had a price are charged at today's price, so a budget never forgets what was spent."""
    cost, tokens = 0.0, 0
    for row in records:
        prompt, completion = int(row.get("prompt_tokens") or 0), int(row.get("completion_tokens") or 0)
        tokens += prompt + completion
        if isinstance(row.get("cost_usd"), (int, float)):
            cost += float(row["cost_usd"])
        elif str(row.get("model")) in prices:
            cached, written = int(row.get("cached_tokens") or 0), int(row.get("cache_write_tokens") or 0)
            cost += prices[str(row["model"])].cost(prompt, completion, cached, written)
    return cost, tokens
