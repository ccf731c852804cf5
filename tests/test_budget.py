"""--max-cost and --max-tokens: the run stops before the budget could be exceeded, saves everything, exits
3, and a larger budget resumes it to exactly what an unbudgeted run writes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.errors import JuristError
from jurist.money import Budget
from jurist.run.budget import BUDGET_STOPPED
from jurist.store.jsonl import read_jsonl
from test_ledger import priced_models, run_json

COMMON = {"models": ["strong"], "judges": ["judge-good"], "limit": 6, "cache": False}


def artifacts(out: Path, judge: str = "judge-good") -> dict[str, Any]:
    """What a run leaves that does not depend on timing: answers, judgments, battles, the leaderboard."""
    answers = {(r["uid"], r["sample"]): r["answer"] for r in read_jsonl(out / "answers" / "strong.jsonl")}
    judgments = {
        r["key"]: [(g["game"], g["a"], g["b"], g["label"], g["raw"]) for g in r["games"]]
        for r in read_jsonl(out / "judgments" / judge / "strong.jsonl")
    }
    battles = sorted(json.dumps(b, sort_keys=True) for b in read_jsonl(out / "battles.jsonl"))
    board = json.loads((out / "leaderboard.json").read_text())
    return {"answers": answers, "judgments": judgments, "battles": battles, "leaderboard": board}


def test_a_budget_stop_resumes_to_the_unbudgeted_run(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    free = run_quiet(models_file=models, out=tmp_path / "free", **COMMON)
    assert free.exit_code == 0
    cost = run_json(tmp_path / "free")["ledger"]["total"]["cost_usd"]
    unbudgeted_requests = server.stats.requests
    out = tmp_path / "budgeted"
    codes = []
    for budget in (cost / 2, cost * 0.8, cost * 10):
        result = run_quiet(models_file=models, out=out, max_cost=budget, **COMMON)
        codes.append(result.exit_code)
        data = run_json(out)
        spent = data["ledger"]["budget"]["spent_cost_usd"]
        assert spent <= budget  # never overshot, though requests ran concurrently
        assert data["ledger_total"]["total"]["cost_usd"] == pytest.approx(spent)
        if result.exit_code == BUDGET_STOPPED:
            assert data["status"] == "stopped-by-budget" and data["ledger"]["budget"]["stopped"]
            assert data["still_failing"] == [] and not (out / "failures.jsonl").exists()
    assert codes[0] == BUDGET_STOPPED and codes[-1] == 0
    # resumed exactly where it stopped: not one request sent twice, and the same files in the end
    assert server.stats.requests - unbudgeted_requests == unbudgeted_requests
    assert artifacts(out) == artifacts(tmp_path / "free")
    assert run_json(out)["ledger_total"]["total"]["cost_usd"] == pytest.approx(cost)


def test_a_spent_budget_sends_nothing_not_even_the_probes(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    out = tmp_path / "run"
    run_quiet(models_file=models, out=out, **COMMON)
    spent = run_json(out)["ledger_total"]["total"]["cost_usd"]
    requests, probes = server.stats.requests, server.stats.probes
    more = {**COMMON, "limit": 8}  # two more questions, and no money left for them
    result = run_quiet(models_file=models, out=out, max_cost=spent, check=True, **more)
    assert result.exit_code == BUDGET_STOPPED
    assert (server.stats.requests, server.stats.probes) == (requests, probes)
    assert run_json(out)["ledger"]["budget"]["remaining_cost_usd"] == 0.0
    assert len(read_jsonl(out / "answers" / "strong.jsonl")) == 6


def test_a_token_budget_holds_prompt_and_completion_tokens(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    run_quiet(models_file=models, out=tmp_path / "free", **COMMON)
    total = run_json(tmp_path / "free")["ledger"]["total"]
    limit = (total["prompt_tokens"] + total["completion_tokens"]) // 2
    before = server.stats.requests
    out = tmp_path / "run"
    result = run_quiet(models_file=models, out=out, max_tokens=limit, **COMMON)
    assert result.exit_code == BUDGET_STOPPED
    ledger = run_json(out)["ledger"]
    used = ledger["total"]["prompt_tokens"] + ledger["total"]["completion_tokens"]
    assert used == ledger["budget"]["spent_tokens"] <= limit and ledger["total"]["requests"] > 0
    assert ledger["total"]["requests"] == server.stats.requests - before


def test_max_cost_needs_a_price_for_every_model_it_bounds(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["other", "judge-good"])  # other: no price
    common = {"models_file": models, "out": tmp_path / "r", "models": ["other"], "limit": 2}
    with pytest.raises(JuristError, match="none for other"):
        run_quiet(**common, judges=["judge-good"], max_cost=1.0)
    assert server.stats.requests == 0 and not (tmp_path / "r").exists()
    run_quiet(**common, mode="inference-only")
    # --judge-only sends nothing for the candidates: only the judge needs a price
    result = run_quiet(**common, judges=["judge-good"], mode="judge-only", max_cost=1.0)
    assert result.exit_code == 0 and server.stats.requests_by_model["judge-good"] == 4


def test_concurrent_reservations_never_overshoot() -> None:
    """60 requests at once, each reserving a worst case of 1.0 and costing 0.3: the budget admits one only
    while its worst case fits beside everything in flight, and stops when none fits any more."""
    budget = Budget(max_cost=10.0)
    admitted: list[int] = []

    async def request(number: int) -> None:
        if await budget.reserve(1.0, 0):
            admitted.append(number)
            await asyncio.sleep(0.001 * (number % 5))
            budget.settle(1.0, 0, 0.3, 0)

    async def main() -> None:
        await asyncio.gather(*(request(n) for n in range(60)))

    asyncio.run(main())
    assert budget.stopped and budget.outstanding == 0 and budget.reserved_cost == 0.0
    assert budget.spent_cost == pytest.approx(0.3 * len(admitted))
    assert 10.0 - 1.0 < budget.spent_cost <= 10.0  # stopped only when the next worst case could not fit
    assert budget.refused == 60 - len(admitted)


def test_the_command_line_exits_3_and_says_what_is_left(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good", "judge-broken"])
    args = ["--models-file", "m.yaml", "--model", "strong", "--judge", "judge-good", "--limit", "4"]
    stopped = subprocess.run(
        [sys.executable, "-m", "jurist", "run", *args, "--no-progress", "--no-cache", "--max-cost", "0.002"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stopped.returncode == 3, stopped.stderr
    assert "The budget stopped the run" in stopped.stderr and "left" in stopped.stderr
    assert "usage of this run" in stopped.stderr and "Traceback" not in stopped.stderr
    refused = subprocess.run(
        [sys.executable, "-m", "jurist", "run", *args, "--judge", "judge-broken", "--max-cost", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "--max-cost needs a price" in refused.stderr


def test_with_the_cache_a_refused_re_ask_costs_nothing_twice(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    """A game whose re-ask the budget refused is asked again next run; its first reply, paid already,
    comes back from the request cache (the default), so the resumed run pays each request once."""
    server = mock_server()
    price = {"price": {"input": 3.0, "output": 15.0}}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": price, "judge-reask": price})
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-reask"], "limit": 6}
    run_quiet(**common, out=tmp_path / "free", cache_path=tmp_path / "cache-free")
    unbudgeted = server.stats.requests
    cost = run_json(tmp_path / "free")["ledger"]["total"]["cost_usd"]
    out, cache = tmp_path / "budgeted", tmp_path / "cache-budgeted"
    codes = [
        run_quiet(**common, out=out, cache_path=cache, max_cost=cost * f).exit_code for f in (0.4, 0.7, 5)
    ]
    assert codes[0] == BUDGET_STOPPED and codes[-1] == 0
    assert server.stats.requests - unbudgeted == unbudgeted
    assert artifacts(out, "judge-reask") == artifacts(tmp_path / "free", "judge-reask")
