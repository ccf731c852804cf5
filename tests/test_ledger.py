"""The ledger: per phase and model, what the mock server itself counted, to the request and the token."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from conftest import FAST_RETRY, write_models_file
from jurist.config import ModelSpec, Price, load_models_file, load_prices
from jurist.engine.cache.store import open_cache
from jurist.engine.client import Engine, RequestFailed
from jurist.errors import InputError
from jurist.money import Ledger
from jurist.run.budget import add_ledgers, ledger_of_run, resolve_prices, usage_of_runs
from jurist.tokens import TiktokenCounter, count_text_tokens, o200k_encoding
from mock_openai import MockOpenAI

PRICES = {"strong": Price(input=2.0, output=8.0), "judge-good": Price(input=5.0, output=15.0)}


def phase_of(body: dict[str, Any]) -> str:
    """How the mock tells jurist's phases apart: probes ask one token, judges are told they are judges,
    a re-ask carries the judge's first reply as an assistant turn."""
    messages = body["messages"]
    if body.get("max_tokens") == 1:
        return "check"
    if len(messages) > 2 and messages[-2]["role"] == "assistant":
        return "reask"
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    return "judge" if "impartial judge" in system else "generate"


class CountingMock(MockOpenAI):
    """The mock server keeping its own tally of the usage it reported, per (model, phase).

    ``tokenizer``: report usage as a server with the o200k tokenizer would (every message's tokens, an
    answer cut at ``max_tokens``), so a prompt counted by jurist is exact. ``no_usage``: models whose
    replies carry no usage. ``details``: usage details added to every reply (reasoning, cached tokens).
    """

    def __init__(
        self,
        *,
        tokenizer: bool = False,
        no_usage: tuple[str, ...] = (),
        details: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self.no_usage = no_usage
        self.details = details or {}
        self.tally: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        response = super()._reply(model, messages, body)
        if response.status != 200:
            return response
        assert isinstance(response.body, bytes)
        payload = json.loads(response.body)
        if self.tokenizer:
            limit = int(body.get("max_tokens") or 1 << 20)
            encoding = o200k_encoding()
            for choice in payload["choices"]:
                tokens = encoding.encode(choice["message"]["content"], disallowed_special=())
                choice["message"]["content"] = encoding.decode(tokens[:limit])
            payload["usage"] = {
                "prompt_tokens": TiktokenCounter("o200k").count_prompt(messages),
                "completion_tokens": sum(
                    count_text_tokens(c["message"]["content"]) for c in payload["choices"]
                ),
            }
        payload["usage"].update(self.details)
        if model in self.no_usage:
            del payload["usage"]
        tally = self.tally[(model, phase_of(body))]
        tally["replies"] += 1
        for name in ("prompt_tokens", "completion_tokens"):
            tally[name] += (payload.get("usage") or {}).get(name, 0)
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")


def counting_servers() -> Iterator[Callable[..., CountingMock]]:
    """The body of a ``counting_mock`` fixture: start servers on demand, stop them all afterwards."""
    servers: list[CountingMock] = []

    def start(**kwargs: Any) -> CountingMock:
        server = CountingMock(**kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def counting_mock() -> Iterator[Callable[..., CountingMock]]:
    yield from counting_servers()


def priced_models(path: Path, base_url: str, aliases: list[str], **extra: Any) -> Path:
    """A models file served by the mock, each alias with its price from :data:`PRICES` (if any)."""
    entries: dict[str, dict[str, Any]] = {}
    for alias in aliases:
        entries[alias] = dict(extra)
        if alias in PRICES:
            entries[alias]["price"] = PRICES[alias].model_dump(exclude_none=True)
    return write_models_file(path, base_url, entries)


def rows_of(ledger: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["phase"], row["model"]): row for row in ledger["rows"]}


def run_json(out: Path) -> dict[str, Any]:
    data = json.loads((out / "run.json").read_text())
    assert isinstance(data, dict)
    return data


def test_the_ledger_equals_what_the_mock_counted(tmp_path: Path, counting_mock: Any, run_quiet: Any) -> None:
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good", "judge-reask"])
    out = tmp_path / "run"
    judges = ["judge-good", "judge-reask"]
    result = run_quiet(models_file=models, models=["strong"], judges=judges, out=out, limit=5, check=True)
    assert result.exit_code == 0
    rows = rows_of(run_json(out)["ledger"])
    sent = {key: row for key, row in rows.items() if row["requests"]}
    assert {(phase, model) for phase, model in sent} == {(phase, model) for model, phase in server.tally}
    for (model, phase), tally in server.tally.items():
        row = rows[(phase, model)]
        assert row["requests"] == row["replies"] == tally["replies"], (phase, model)
        assert (row["prompt_tokens"], row["completion_tokens"]) == (
            tally["prompt_tokens"],
            tally["completion_tokens"],
        )
        assert row["estimated"] == row["retries"] == row["failed"] == row["cache_hits"] == 0
    # every phase where it belongs: 5 answers, 2 games per judge, judge-reask re-asked every game
    assert rows[("generate", "strong")]["requests"] == server.stats.requests_by_model["strong"] == 5
    assert rows[("judge", "judge-good")]["requests"] == 10 and ("reask", "judge-good") not in rows
    assert rows[("judge", "judge-reask")]["requests"] == rows[("reask", "judge-reask")]["requests"] == 10
    assert sum(row["requests"] for key, row in rows.items() if key[0] == "check") == server.stats.probes == 3
    total = run_json(out)["ledger"]["total"]
    assert total["requests"] == server.stats.requests + server.stats.probes
    # dollars: the priced models' tokens at their prices; judge-reask has no price and is named
    expected = sum(
        PRICES[model].cost(t["prompt_tokens"], t["completion_tokens"])
        for (model, _), t in server.tally.items()
        if model in PRICES
    )
    assert total["cost_usd"] == pytest.approx(expected, rel=1e-6)
    assert total["unpriced"] == ["judge-reask"] and rows[("judge", "judge-reask")]["cost_usd"] is None
    assert all(row["wall_s"] >= row["at_limit_s"] >= 0 for row in rows.values())


def test_cache_hits_are_counted_as_such_and_cost_nothing(
    tmp_path: Path, counting_mock: Any, run_quiet: Any
) -> None:
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": 4}
    run_quiet(**common, out=tmp_path / "a")
    sent = server.stats.requests
    run_quiet(**common, out=tmp_path / "b")  # the same work in a new directory: all from the cache
    assert server.stats.requests == sent
    ledger = run_json(tmp_path / "b")["ledger"]
    rows = rows_of(ledger)
    assert (
        rows[("generate", "strong")]["cache_hits"] == 4 and rows[("judge", "judge-good")]["cache_hits"] == 8
    )
    assert ledger["total"]["requests"] == 0 and ledger["total"]["prompt_tokens"] == 0
    assert ledger["total"]["cost_usd"] == 0.0


def test_the_directory_total_adds_its_runs(tmp_path: Path, counting_mock: Any, run_quiet: Any) -> None:
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    out = tmp_path / "run"
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "out": out}
    run_quiet(**common, limit=3)
    first = run_json(out)["ledger"]
    run_quiet(**common, limit=5)  # two more questions
    data = run_json(out)
    assert rows_of(data["ledger"])[("generate", "strong")]["requests"] == 2
    total = rows_of(data["ledger_total"])
    assert total[("generate", "strong")]["requests"] == 5 == server.stats.requests_by_model["strong"]
    assert total[("judge", "judge-good")]["requests"] == 10
    assert data["ledger_total"]["total"]["cost_usd"] == pytest.approx(
        first["total"]["cost_usd"] + data["ledger"]["total"]["cost_usd"]
    )
    assert add_ledgers(first, data["ledger"])["rows"] == data["ledger_total"]["rows"]


def test_without_usage_tokens_are_counted_and_marked_estimated(
    tmp_path: Path, counting_mock: Any, run_quiet: Any
) -> None:
    server = counting_mock(no_usage=("strong",))
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong"])
    out = tmp_path / "run"
    run_quiet(models_file=models, models=["strong"], out=out, limit=3, mode="inference-only")
    row = rows_of(run_json(out)["ledger"])[("generate", "strong")]
    assert row["estimated"] == row["replies"] == 3
    bodies = [body for body in server.stats.bodies if body["model"] == "strong"]
    assert row["prompt_tokens"] == sum(
        TiktokenCounter("o200k").count_prompt(body["messages"]) for body in bodies
    )
    answers = [
        json.loads(line)["answer"] for line in (out / "answers" / "strong.jsonl").read_text().splitlines()
    ]
    assert row["completion_tokens"] == sum(count_text_tokens(text) for text in answers)
    assert row["cost_usd"] == pytest.approx(
        PRICES["strong"].cost(row["prompt_tokens"], row["completion_tokens"])
    )


def test_reasoning_and_cached_prompt_tokens_come_from_the_usage_details(
    tmp_path: Path, counting_mock: Any
) -> None:
    details = {
        "completion_tokens_details": {"reasoning_tokens": 7},
        "prompt_tokens_details": {"cached_tokens": 3},
    }
    server = counting_mock(details=details)
    price = Price(input=1.0, output=4.0, cached_input=0.25)
    spec = ModelSpec.model_validate(
        {"alias": "strong", "model": "strong", "endpoints": [{"api_base": server.base_url}], "price": price}
    )
    ledger = Ledger(resolve_prices({"strong": spec}))

    async def ask() -> None:
        engine = Engine({"strong": spec}, max_concurrency=4, ledger=ledger)
        try:
            await engine.client("strong").complete([{"role": "user", "content": "a question of some length"}])
        finally:
            await engine.aclose()

    asyncio.run(ask())
    row = rows_of(ledger.summary())[("generate", "strong")]
    tally = server.tally[("strong", "generate")]
    assert (row["reasoning_tokens"], row["cached_tokens"]) == (7, 3)
    expected = ((tally["prompt_tokens"] - 3) * 1.0 + 3 * 0.25 + tally["completion_tokens"] * 4.0) / 1e6
    assert row["cost_usd"] == pytest.approx(expected)


def test_retries_and_failures_are_counted_per_phase(tmp_path: Path, counting_mock: Any) -> None:
    server = counting_mock(faults={"flaky": ["500", "503"], "refused": ["400"]})
    spec = ModelSpec.model_validate(
        {"alias": "m", "model": "m", "endpoints": [{"api_base": server.base_url}]}
    )
    engine = Engine({"m": spec}, max_concurrency=4, policy=FAST_RETRY, cache=open_cache(tmp_path / "cache"))

    async def ask() -> None:
        client = engine.client("m")
        try:
            await client.complete([{"role": "user", "content": "flaky"}], phase="judge")
            with pytest.raises(RequestFailed):
                await client.complete([{"role": "user", "content": "refused"}], phase="judge")
            await client.complete([{"role": "user", "content": "flaky"}], phase="judge")  # from the cache
        finally:
            await engine.aclose()

    asyncio.run(ask())
    row = rows_of(engine.ledger.summary())[("judge", "m")]
    assert row["requests"] == server.stats.requests == 4  # three tries of "flaky", one of "refused"
    assert (row["retries"], row["failed"], row["replies"], row["cache_hits"]) == (2, 1, 1, 1)
    assert row["cost_usd"] is None  # no price: unknown, never zero


def test_time_at_the_limit_is_the_share_with_every_slot_taken() -> None:
    now = [0.0]
    ledger = Ledger(clock=lambda: now[0])
    first = ledger.on_wire("generate", "m", 1, 2, 64)
    second = ledger.on_wire("generate", "m", 1, 2, 64)
    first.__enter__()
    now[0] = 1.0  # one request on the wire for 1 s
    second.__enter__()
    now[0] = 3.0  # both slots taken for 2 s
    first.__exit__(None, None, None)
    now[0] = 4.0  # one again for 1 s
    second.__exit__(None, None, None)
    now[0] = 9.0  # idle time counts nowhere
    row = rows_of(ledger.summary())[("generate", "m")]
    assert (row["requests"], row["wall_s"], row["at_limit_s"]) == (2, 4.0, 2.0)


def test_price_files_and_which_price_a_model_gets(tmp_path: Path) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text("gpt-4.1: {input: 2.0, output: 8.0}\njudge: {input: 1, output: 1, cached_input: 0.5}\n")
    (tmp_path / "prices.json").write_text(json.dumps({"gpt-4.1": {"input": 2.0, "output": 8.0}}))
    assert load_prices(table)["gpt-4.1"] == load_prices(tmp_path / "prices.json")["gpt-4.1"]
    models = tmp_path / "m.yaml"
    models.write_text(
        "mine:\n  model: gpt-4.1\n"  # priced by its served name
        "judge:\n  model: other\n"  # by its alias
        "own:\n  model: gpt-4.1\n  price: {input: 0, output: 0}\n"  # its own entry wins
        "free:\n  model: unknown\n"
    )
    specs = load_models_file(models, env={"OPENAI_API_KEY": "k"})
    prices = resolve_prices(specs, load_prices(table))
    assert prices["mine"] == Price(input=2.0, output=8.0) and prices["judge"].cached_input == 0.5
    assert prices["own"].cost(10**6, 10**6) == 0.0 and "free" not in prices
    assert Price(input=2.0, output=8.0).cost(500_000, 250_000) == pytest.approx(1.0 + 2.0)
    (tmp_path / "bad.yaml").write_text("gpt-4.1: {input: 2.0, outptu: 8.0}\n")
    with pytest.raises(InputError, match=r"bad.yaml: price 'gpt-4.1': field out"):
        load_prices(tmp_path / "bad.yaml")
    models.write_text("mine:\n  model: x\n  prise: {input: 1, output: 1}\n")
    with pytest.raises(InputError, match="did you mean 'price'"):
        load_models_file(models, env={})


def test_show_usage_prints_one_run_or_the_sum_of_several(
    tmp_path: Path, counting_mock: Any, run_quiet: Any
) -> None:
    server = counting_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    run_quiet(**common, out=tmp_path / "a", limit=2)
    run_quiet(**common, out=tmp_path / "b", limit=3, cache=False)
    summed = usage_of_runs([tmp_path / "a", tmp_path / "b"])
    assert (
        rows_of(summed)[("generate", "strong")]["requests"] == 5 == server.stats.requests_by_model["strong"]
    )
    assert summed["total"]["requests"] == server.stats.requests
    shown = subprocess.run(
        [sys.executable, "-m", "jurist", "show", "--usage", "a", "b", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == summed
    table = subprocess.run(
        [sys.executable, "-m", "jurist", "show", "--usage", "a"], cwd=tmp_path, capture_output=True, text=True
    )
    assert table.returncode == 0 and "generate" in table.stdout and "judge-good" in table.stdout
    assert "$" in table.stdout


def test_a_run_json_without_a_ledger_shows_its_usage_counters() -> None:
    per_model = {"strong": {"requests": 4, "prompt_tokens": 134}, "judge-good": {"requests": 16}}
    ledger = ledger_of_run({"usage": {"requests": 20, "per_model": per_model}})
    assert ledger is not None and ledger["rows"] and {row["phase"] for row in ledger["rows"]} == {"all"}
    assert ledger["total"]["requests"] == sum(row["requests"] for row in ledger["rows"])
