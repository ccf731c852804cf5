"""The ledger is append-only: what a run directory spent is rebuilt from its usage log (usage.jsonl), so
a corrupt run.json (truncated, garbage, wrong types) or a torn last line after kill -9 never resets the
budget."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jurist.errors import JuristError
from jurist.money import directory_usage
from jurist.run.budget import BUDGET_STOPPED
from jurist.store.jsonl import read_jsonl
from test_ledger import priced_models, run_json

COMMON = {"models": ["strong"], "judges": ["judge-good"], "cache": False}


def spend_some(tmp_path: Path, server: Any, run_quiet: Any) -> tuple[Path, Path, float]:
    """A priced run of 4 questions: its models file, its directory, what it spent."""
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    out = tmp_path / "run"
    assert run_quiet(models_file=models, out=out, limit=4, **COMMON).exit_code == 0
    spent = run_json(out)["ledger_total"]["total"]["cost_usd"]
    assert spent > 0
    return models, out, spent


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def wrong_types(path: Path) -> None:
    data = json.loads(path.read_text())
    for row in data["ledger_total"]["rows"]:
        row["cost_usd"], row["prompt_tokens"] = "lots", None
    path.write_text(json.dumps(data))


CORRUPTIONS: dict[str, Callable[[Path], Any]] = {
    "truncated": truncate,
    "garbage": lambda path: path.write_bytes(b"\x00\xffnot json at all"),
    "wrong types": wrong_types,
    "a list": lambda path: path.write_text("[1, 2]"),
    "empty": lambda path: path.write_text(""),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_run_json_does_not_reset_the_budget(
    tmp_path: Path,
    mock_server: Any,
    run_quiet: Any,
    corrupt: Callable[[Path], Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = mock_server()
    models, out, spent = spend_some(tmp_path, server, run_quiet)
    corrupt(out / "run.json")
    requests = server.stats.requests
    with caplog.at_level(logging.WARNING):  # four more questions, and no money left for them
        result = run_quiet(models_file=models, out=out, limit=8, max_cost=spent, **COMMON)
    assert result.exit_code == BUDGET_STOPPED and server.stats.requests == requests
    said = [r.getMessage() for r in caplog.records if "run.json" in r.getMessage()]
    assert len(said) == 1 and "rebuilt from usage.jsonl" in said[0]
    data = run_json(out)  # written anew, with every dollar
    assert data["ledger"]["budget"]["spent_cost_usd"] == pytest.approx(spent)
    assert data["ledger_total"]["total"]["cost_usd"] == pytest.approx(spent)


def test_the_log_adds_up_to_what_run_json_says(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    server = mock_server(faults={"": ["500", "500"]})  # retries and failures are in the log too
    models, out, _ = spend_some(tmp_path, server, run_quiet)
    run_quiet(models_file=models, out=out, limit=6, **COMMON)  # a second run into the same directory
    rebuilt = directory_usage(out).ledger
    assert rebuilt is not None
    total = run_json(out)["ledger_total"]
    for ours, theirs in zip(rebuilt["rows"], total["rows"], strict=True):
        for name, value in theirs.items():
            assert ours[name] == pytest.approx(value, abs=0.01), name
    assert run_json(out)["usage_total"]["requests"] == total["total"]["requests"] == server.stats.requests


def test_a_torn_last_line_is_dropped_with_a_warning(
    tmp_path: Path, mock_server: Any, run_quiet: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """kill -9 in the middle of an append: the fragment is cut, every whole line still counts."""
    server = mock_server()
    models, out, spent = spend_some(tmp_path, server, run_quiet)
    with open(out / "usage.jsonl", "ab") as log:
        log.write(b'{"run": "x", "phase": "generate", "model": "strong", "cost_u')
    requests = server.stats.requests
    with caplog.at_level(logging.WARNING):
        result = run_quiet(models_file=models, out=out, limit=8, max_cost=spent, **COMMON)
    assert result.exit_code == BUDGET_STOPPED and server.stats.requests == requests
    assert "dropped a torn last line" in caplog.text
    assert all(isinstance(record, dict) for record in read_jsonl(out / "usage.jsonl"))
    assert run_json(out)["ledger"]["budget"]["spent_cost_usd"] == pytest.approx(spent)


def test_a_directory_from_before_the_log_starts_from_its_run_json(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    """Its run.json is read once; from then on the log carries it, so corrupting run.json later is safe."""
    server = mock_server()
    models, out, spent = spend_some(tmp_path, server, run_quiet)
    (out / "usage.jsonl").unlink()  # as an older jurist left it
    requests = server.stats.requests
    result = run_quiet(models_file=models, out=out, limit=8, max_cost=spent, **COMMON)
    assert result.exit_code == BUDGET_STOPPED and server.stats.requests == requests
    carried = [record for record in read_jsonl(out / "usage.jsonl") if record.get("carried") == "run.json"]
    assert sum(record["cost_usd"] for record in carried) == pytest.approx(spent)
    (out / "run.json").write_text("{")
    result = run_quiet(models_file=models, out=out, limit=8, max_cost=spent, **COMMON)
    assert result.exit_code == BUDGET_STOPPED and server.stats.requests == requests
    assert run_json(out)["ledger_total"]["total"]["cost_usd"] == pytest.approx(spent)


def test_no_log_and_a_corrupt_run_json_is_never_taken_as_nothing_spent(
    tmp_path: Path, mock_server: Any, run_quiet: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = mock_server()
    models, out, spent = spend_some(tmp_path, server, run_quiet)
    (out / "usage.jsonl").unlink()
    (out / "run.json").write_text("garbage")
    with pytest.raises(JuristError, match="what earlier runs here spent is unknown"):
        run_quiet(models_file=models, out=out, limit=8, max_cost=spent * 10, **COMMON)
    with caplog.at_level(logging.WARNING):  # without a budget the run goes on, and says so
        assert run_quiet(models_file=models, out=out, limit=4, **COMMON).exit_code == 0
    assert "spent is unknown" in caplog.text


def test_an_unreadable_line_inside_the_log_refuses_a_budget(
    tmp_path: Path, mock_server: Any, run_quiet: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = mock_server()
    models, out, spent = spend_some(tmp_path, server, run_quiet)
    lines = (out / "usage.jsonl").read_text().splitlines()
    lines[1] = json.dumps({"phase": "generate", "model": "strong", "cost_usd": "lots"})
    (out / "usage.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(JuristError, match=r"usage\.jsonl:2: cost_usd is not a number"):
        run_quiet(models_file=models, out=out, limit=8, max_cost=spent * 10, **COMMON)
    with caplog.at_level(logging.WARNING):
        assert run_quiet(models_file=models, out=out, limit=4, **COMMON).exit_code == 0
    assert "usage.jsonl:2" in caplog.text
