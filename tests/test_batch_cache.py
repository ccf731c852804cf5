"""Anthropic prompt caching: the prefix a question's requests share (system prompt and question, before
the answers or the rubric item) is marked ``cache_control`` where it is long enough to be cached, and
nowhere else; the cache's reads and writes come back in the usage and are priced as Anthropic bills
them (reads 0.1x, writes 1.25x the input rate, unless the price names its own), batch rates halving both.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.config import ModelSpec, Price
from jurist.engine.batch import BatchSettings
from jurist.engine.wire import anthropic
from jurist.engine.wire.anthropic import SHARED_PREFIX, chat_reply, messages_params
from jurist.engine.wire.reply_parse import parse_completion
from jurist.report.ledger_table import ledger_notes
from jurist.run.batching import BatchChoice
from jurist.run.budget import resolve_prices
from mock_batch import MockBatchServer

LONG = "The question, at length. " * 300  # ~1,500 o200k tokens: past 1024, short of Haiku's 2048
PRICE = {"input": 2.0, "output": 8.0}
LIMIT = 4


def _body(model: str, user: str, shared: int = 0, system: str = "Judge.") -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "max_tokens": 16,
    }
    if shared:
        body[SHARED_PREFIX] = shared
    return body


def test_a_long_shared_prefix_is_marked_as_its_own_block() -> None:
    user = LONG + "Answer A: yes. Answer B: no."
    params = messages_params(_body("claude-sonnet-4-5", user, len(LONG)))
    assert SHARED_PREFIX not in params and params["system"] == "Judge."
    assert params["messages"][0]["content"] == [
        {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Answer A: yes. Answer B: no."},
    ]


def test_no_mark_where_the_prefix_is_too_short_or_not_shared() -> None:
    short = messages_params(_body("claude-sonnet-4-5", "Short question. Answer A.", 15))
    assert short["messages"][0]["content"] == "Short question. Answer A." and short["system"] == "Judge."
    unshared = messages_params(_body("claude-sonnet-4-5", LONG))  # no other request shares it
    assert unshared["messages"][0]["content"] == LONG and unshared["system"] == "Judge."
    haiku = messages_params(_body("claude-3-5-haiku-latest", LONG + "A.", len(LONG)))  # needs 2048
    assert haiku["messages"][0]["content"] == LONG + "A."
    assert anthropic.cache_minimum("claude-3-5-haiku-latest") == 2048
    assert anthropic.cache_minimum("claude-opus-4.5") == 4096
    assert anthropic.cache_minimum("claude-sonnet-4-5") == 1024


def test_a_long_system_prompt_alone_is_marked() -> None:
    params = messages_params(_body("claude-sonnet-4-5", "Which is better?", system=LONG))
    assert params["system"] == [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]
    assert params["messages"][0]["content"] == "Which is better?"


def test_the_usage_says_what_was_read_from_and_written_to_the_cache() -> None:
    message = {
        "type": "message",
        "content": [{"type": "text", "text": "A"}],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 1200,
            "cache_read_input_tokens": 300,
            "output_tokens": 5,
        },
    }
    parsed = parse_completion(json.dumps(chat_reply(message)).encode())
    assert (parsed.prompt_tokens, parsed.cached_tokens, parsed.cache_write_tokens) == (1510, 300, 1200)


def test_cache_reads_and_writes_are_priced_as_anthropic_bills_them() -> None:
    rates = Price(input=2.0, output=8.0).with_anthropic_cache_rates()
    assert (rates.cached_input, rates.cache_write) == pytest.approx((0.2, 2.5))
    # 10 plain, 300 read, 1200 written, 5 out
    sync = 10 * 2.0 + 300 * 0.2 + 1200 * 2.5 + 5 * 8.0
    assert rates.cost(1510, 5, 300, 1200) == pytest.approx(sync / 1e6)
    assert rates.batch_rates().cost(1510, 5, 300, 1200) == pytest.approx(0.5 * sync / 1e6)
    own = Price(input=2.0, output=8.0, cached_input=0.5, cache_write=3.0).with_anthropic_cache_rates()
    assert (own.cached_input, own.cache_write) == (0.5, 3.0)  # the price's own rates win
    specs = {
        name: ModelSpec.model_validate({"alias": name, "model": name, "api_type": kind, "price": PRICE})
        for name, kind in (("claude", "anthropic"), ("gpt", "openai"))
    }
    prices = resolve_prices(specs)
    assert prices["claude"].cache_write == pytest.approx(2.5) and prices["gpt"].cache_write is None


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01, cache_minimum=16)
    mock.start()
    yield mock
    mock.stop()


@pytest.mark.parametrize("batched", [True, False])
def test_both_games_share_a_marked_question_read_from_the_cache(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any, monkeypatch: pytest.MonkeyPatch, batched: bool
) -> None:
    """A judged run on an Anthropic judge, with a cacheable minimum small enough for the test's short
    questions: each question's two games send the same marked block (the prompt before the answers),
    one writes it and the other reads it, and the ledger prices the reads and writes at their rates."""
    monkeypatch.setattr(anthropic, "cache_minimum", lambda model: 16)
    models = write_models_file(
        tmp_path / "models.yaml",
        server.base_url,
        {"strong": {}, "judge-good": {"price": PRICE, "api_type": "anthropic"}},
    )
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    batching = BatchChoice("judges", BatchSettings(poll_s=0.02, max_age_s=0.05)) if batched else None
    result = run_quiet(
        out=tmp_path / "run", cache=False, **({"batching": batching} if batching else {}), **common
    )
    assert result.exit_code == 0 and result.failures == 0
    marks = server.batch_stats.marks
    assert {where for where, _ in marks} == {"user"}  # the system prompt alone is never marked here
    assert Counter(Counter(text for _, text in marks).values()) == {2: LIMIT}  # one block, both games
    assert not any("[strong]" in text for _, text in marks)  # the answers are after the mark
    rows = json.loads((tmp_path / "run" / "run.json").read_text())["ledger_total"]["rows"]
    row = next(r for r in rows if r["phase"] == "judge" and r["model"] == "judge-good")
    assert row["cached_tokens"] > 0 and row["cache_write_tokens"] > 0
    plain = row["prompt_tokens"] - row["cached_tokens"] - row["cache_write_tokens"]
    dollars = plain * 2.0 + row["cached_tokens"] * 0.2 + row["cache_write_tokens"] * 2.5
    dollars += row["completion_tokens"] * 8.0
    share = 0.5 if batched else 1.0
    assert row["cost_usd"] == pytest.approx(share * dollars / 1e6)
    ledger = json.loads((tmp_path / "run" / "run.json").read_text())["ledger_total"]
    assert any("prompt caches: judge-good (judge) read" in note for note in ledger_notes(ledger))


def test_short_prompts_are_sent_unmarked(tmp_path: Path, server: MockBatchServer, run_quiet: Any) -> None:
    """At Anthropic's real minimum the test's short judge prompts are too short to cache: no mark at all,
    and the usage has no cache reads or writes."""
    models = write_models_file(
        tmp_path / "models.yaml",
        server.base_url,
        {"strong": {}, "judge-good": {"price": PRICE, "api_type": "anthropic"}},
    )
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    result = run_quiet(out=tmp_path / "run", cache=False, **common)
    assert result.exit_code == 0 and server.batch_stats.messages == 2 * LIMIT
    assert server.batch_stats.marks == []
    rows = json.loads((tmp_path / "run" / "run.json").read_text())["ledger_total"]["rows"]
    row = next(r for r in rows if r["phase"] == "judge" and r["model"] == "judge-good")
    assert row["cached_tokens"] == 0 and row["cache_write_tokens"] == 0


def test_an_answers_rubric_items_share_a_marked_conversation(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HealthBench's grader through Message Batches: the items of one answer send the same marked block
    (the prompt up to the rubric item), and their re-asks read it too."""
    from conftest import SHARED_DATA
    from test_rubric_judge import hb_reply, install_reply, write_hb_prompt

    monkeypatch.setattr(anthropic, "cache_minimum", lambda model: 16)
    install_reply(server, lambda m: hb_reply(m, garbage=True))
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"m": {}, "g": {"price": PRICE, "api_type": "anthropic"}}
    )
    common = {
        "bench": "healthbench", "limit": 2, "models_file": models, "models": ["m"], "judges": ["g"],
        "judge_prompt": write_hb_prompt(tmp_path / "grader.py"), "cache": False,
    }  # fmt: skip
    batching = BatchChoice("judges", BatchSettings(poll_s=0.02, max_age_s=0.05))
    result = run_quiet(out=tmp_path / "run", batching=batching, **common)
    assert result.exit_code == 0 and server.stats.requests_by_model["g"] == 0
    marks = Counter(text for where, text in server.batch_stats.marks if where == "user")
    assert marks and all(count >= 2 for count in marks.values())  # every item (and re-ask) of an answer
    for text in marks:  # the conversation, up to the rubric item (at most its shared "[points" opening)
        assert text.startswith("FAKE GRADER") and len(text.split("=== ITEM ===")[1].strip()) <= 1, text
    rows = json.loads((tmp_path / "run" / "run.json").read_text())["ledger_total"]["rows"]
    reask = next(r for r in rows if r["phase"] == "reask" and r["model"] == "g")
    assert reask["cached_tokens"] > 0  # a re-ask reads the conversation its first ask wrote
