"""``jurist run --dry-run``: nothing sent, not even a probe; the requests it counts are the run's, exactly,
and the cost it estimates brackets what the run then costs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_config
from jurist.engine.local.embedded import EMBEDDED_ALIAS
from jurist.run.dry import dry_run, plan_run
from test_ledger import CountingMock, counting_servers, priced_models, rows_of, run_json


@pytest.fixture
def counting_mock() -> Iterator[Callable[..., CountingMock]]:
    yield from counting_servers()


def plan(**kwargs: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """The dry run's rows by (phase, model); like ``run_quiet``, no pre-run check unless asked."""
    kwargs.setdefault("check", False)
    rows, _ = plan_run(run_config(progress=False, **kwargs))
    assert rows[-1]["phase"] == "total"
    return {(row["phase"], row["model"]): row for row in rows}


def sent(ledger: dict[str, Any]) -> dict[tuple[str, str], int]:
    return {key: row["requests"] for key, row in rows_of(ledger).items() if row["requests"]}


def planned(rows: dict[tuple[str, str], dict[str, Any]]) -> dict[tuple[str, str], int]:
    return {key: row["requests"] for key, row in rows.items() if row["requests"] and key[0] != "total"}


def test_a_dry_run_sends_nothing_and_counts_every_request_of_the_run(
    tmp_path: Path, counting_mock: Any, run_quiet: Any
) -> None:
    server = counting_mock()
    models = priced_models(
        tmp_path / "m.yaml", server.base_url, ["strong", "mixed", "judge-good", "judge-reask"]
    )
    config = {
        "models_file": models,
        "models": ["strong", "mixed"],
        "judges": ["judge-good", "judge-reask"],
        "out": tmp_path / "run",
        "limit": 5,
        "check": True,
    }
    rows = plan(**config)
    assert (server.stats.requests, server.stats.probes) == (0, 0)  # the pre-run probes included
    assert not (tmp_path / "run").exists()  # nothing written either
    run_quiet(**config)
    actual = sent(run_json(tmp_path / "run")["ledger"])
    # the first replies are exact; judge-reask's re-asks are not known before its replies are
    assert planned(rows) == {key: n for key, n in actual.items() if key[0] != "reask"}
    assert planned(rows)[("generate", "strong")] == 5 and planned(rows)[("judge", "judge-good")] == 20


def test_what_is_done_or_cached_is_subtracted(tmp_path: Path, counting_mock: Any, run_quiet: Any) -> None:
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    run_quiet(**common, out=tmp_path / "a", limit=4)
    resumed = plan(**common, out=tmp_path / "a", limit=6)  # two more questions in the same directory
    assert planned(resumed) == {("generate", "strong"): 2, ("judge", "judge-good"): 4}
    assert resumed[("generate", "strong")]["done"] == 4 and resumed[("judge", "judge-good")]["done"] == 4
    elsewhere = plan(**common, out=tmp_path / "b", limit=6)  # a new directory: four come from the cache
    assert planned(elsewhere) == {("generate", "strong"): 2, ("judge", "judge-good"): 4}
    assert (
        elsewhere[("generate", "strong")]["cached"] == 4 and elsewhere[("judge", "judge-good")]["cached"] == 8
    )
    before = server.stats.requests_by_model.copy()
    run_quiet(**common, out=tmp_path / "b", limit=6)
    after = server.stats.requests_by_model
    assert (after["strong"] - before["strong"], after["judge-good"] - before["judge-good"]) == (2, 4)
    assert planned(plan(**common, out=tmp_path / "b", limit=6)) == {}  # nothing left to do


def test_the_estimate_brackets_the_cost_and_counts_prompts_exactly(
    tmp_path: Path, counting_mock: Any, run_quiet: Any
) -> None:
    """Against a server that counts tokens with the o200k tokenizer (as OpenAI's do), the prompts of known
    messages are counted to the token, and the cost lies within the estimate's range."""
    server: CountingMock = counting_mock(tokenizer=True)
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    config = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "out": tmp_path / "r"}
    rows = plan(**config, limit=4)
    run_quiet(**config, limit=4)
    ledger = run_json(tmp_path / "r")["ledger"]
    actual = rows_of(ledger)
    assert rows[("generate", "strong")]["prompt_tokens"] == actual[("generate", "strong")]["prompt_tokens"]
    total = rows[("total", "")]
    assert total["cost_low_usd"] <= ledger["total"]["cost_usd"] <= total["cost_high_usd"]
    assert total["cost_usd"] >= ledger["total"]["cost_usd"]  # no run before: completions at max_tokens
    # with a past run in the directory, completions are expected at its observed mean
    more = plan(**config, limit=8)
    assert more[("generate", "strong")]["basis"] == "observed mean"
    run_quiet(**config, limit=8)
    now = run_json(tmp_path / "r")["ledger"]
    assert (
        more[("generate", "strong")]["prompt_tokens"] == rows_of(now)[("generate", "strong")]["prompt_tokens"]
    )
    assert (
        more[("total", "")]["cost_low_usd"]
        <= now["total"]["cost_usd"]
        <= more[("total", "")]["cost_high_usd"]
    )
    expected, actual_cost = more[("total", "")]["cost_usd"], now["total"]["cost_usd"]
    assert expected == pytest.approx(actual_cost, rel=0.25)  # the observed means predict it closely


def test_batched_samples_are_one_request_each(tmp_path: Path, counting_mock: Any, run_quiet: Any) -> None:
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong"], sample_batching=True)
    config = {"models_file": models, "models": ["strong"], "out": tmp_path / "r", "limit": 3, "samples": 4}
    rows = plan(**config, mode="inference-only")
    run_quiet(**config, mode="inference-only")
    row = rows_of(run_json(tmp_path / "r")["ledger"])[("generate", "strong")]
    assert rows[("generate", "strong")]["requests"] == row["requests"] == server.stats.requests == 3
    assert row["choices"] == 12


def test_the_embedded_model_is_not_started(tmp_path: Path) -> None:
    """No models file: the embedded model would answer and judge; a dry run plans without starting it."""
    rows = plan(out=tmp_path / "r", limit=2)
    assert planned(rows) == {("generate", EMBEDDED_ALIAS): 2, ("judge", EMBEDDED_ALIAS): 4}
    assert not (tmp_path / "r").exists() and rows[("total", "")]["cost_usd"] is None  # no price known


def test_the_command_line_prints_the_estimate(tmp_path: Path, counting_mock: Any) -> None:
    server = counting_mock()
    priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--models-file", "m.yaml", "--model", "strong"]
        + ["--judge", "judge-good", "--limit", "3", "--dry-run", "--max-cost", "5"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "nothing sent" in result.stdout and "judge-good" in result.stdout and "$" in result.stdout
    assert "budget: $5.00 of $5.00 left" in result.stderr
    assert (server.stats.requests, server.stats.probes) == (0, 0) and not (tmp_path / "runs").exists()


def test_the_cost_range_holds_a_judge_that_re_asks_every_game(
    tmp_path: Path, counting_mock: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-asks are not known in advance, so they are not counted as requests; the range allows them."""
    server = counting_mock(tokenizer=True)
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-reask"])
    config = run_config(
        models_file=models, models=["strong"], judges=["judge-reask"], out=tmp_path / "r", limit=3,
        check=False, progress=False, output_format="json",
    )  # fmt: skip
    assert dry_run(config) == 0
    printed = json.loads(capsys.readouterr().out)
    total = printed["rows"][-1]
    assert any("re-asks" in note for note in printed["notes"])
    run_quiet(models_file=models, models=["strong"], judges=["judge-reask"], out=tmp_path / "r", limit=3)
    ledger = run_json(tmp_path / "r")["ledger"]
    assert rows_of(ledger)[("reask", "judge-reask")]["requests"] == 6  # every game re-asked once
    assert total["cost_low_usd"] <= ledger["total"]["cost_usd"] <= total["cost_high_usd"]
    assert total["requests"] == ledger["total"]["requests"] - 6


def test_a_label_only_judge_is_expected_at_its_protocol_cap_then_at_what_the_cache_observed(
    tmp_path: Path, counting_mock: Any, run_quiet: Any
) -> None:
    """Issue 27: a one-label verdict is not 4096 tokens because the judge's max_tokens is 4096. The
    expected completion is the protocol's cap; once the cache holds replies, their mean; max_tokens stays
    the top of the range."""
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"], max_tokens=4096)
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    common["judge_protocol"] = "simple"
    judge = plan(**common, out=tmp_path / "a", limit=4)[("judge", "judge-good")]
    assert judge["basis"] == "simple protocol cap" and judge["requests"] == 8
    assert judge["completion_tokens"] == 8 * 16 and judge["completion_tokens_high"] == 8 * 4096
    long_judgment = plan(**{**common, "judge_protocol": "jurist-pairwise"}, out=tmp_path / "a", limit=4)
    assert long_judgment[("judge", "judge-good")]["completion_tokens"] == 8 * 4096  # no cap: max_tokens
    run_quiet(**common, out=tmp_path / "a", limit=4)
    replies = rows_of(run_json(tmp_path / "a")["ledger"])[("judge", "judge-good")]
    elsewhere = plan(**common, out=tmp_path / "b", limit=6)[("judge", "judge-good")]
    assert elsewhere["cached"] == 8 and elsewhere["requests"] == 4
    assert elsewhere["basis"] == "observed mean"  # the cache's replies to this run's own requests
    assert elsewhere["completion_tokens"] == 4 * round(replies["completion_tokens"] / 8)
