"""Server replies that are not answers, odd answers, and judge replies that are not verdicts (mock server)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.config import Endpoint, ModelSpec
from jurist.engine.cache.store import RequestCache
from jurist.engine.client import Engine, RequestFailed
from jurist.judging.pairwise import RAW_KEEP, cap_raw, judge_game
from jurist.judging.protocols import REASK_TEXT, jurist_pairwise_protocol
from jurist.judging.verdict import parse_verdict


def spec(alias: str, url: str) -> ModelSpec:
    return ModelSpec(alias=alias, model=alias, endpoints=[Endpoint(api_base=url)], timeout=2.0)


async def ask(engine: Engine, alias: str, prompt: str) -> Any:
    try:
        return await engine.client(alias).complete([{"role": "user", "content": prompt}], cache="off")
    finally:
        await engine.aclose()


NOT_ANSWERS = ["null_content", "empty_choices", "html", "truncated_json"]


@pytest.mark.parametrize("fault", NOT_ANSWERS)
def test_a_200_that_is_no_answer_is_retried(mock_server: Any, fault: str) -> None:
    server = mock_server(faults={"hello": [fault, fault]})
    engine = Engine({"m": spec("m", server.base_url)}, max_concurrency=2, policy=FAST_RETRY)
    completion = asyncio.run(ask(engine, "m", "hello"))
    assert completion.text == "[m] hello" and not completion.empty
    assert completion.attempts == 3 and engine.stats.retries == 2


@pytest.mark.parametrize("fault", NOT_ANSWERS)
def test_a_200_that_is_never_an_answer_fails_as_unreadable(mock_server: Any, fault: str) -> None:
    server = mock_server(faults={"hello": [fault] * 10})
    engine = Engine({"m": spec("m", server.base_url)}, max_concurrency=2, policy=FAST_RETRY)
    with pytest.raises(RequestFailed) as info:
        asyncio.run(ask(engine, "m", "hello"))
    assert info.value.kind == "unreadable"
    assert info.value.attempts == FAST_RETRY.max_attempts == server.stats.requests


def test_a_deliberately_empty_answer_is_a_result_with_a_flag(mock_server: Any) -> None:
    server = mock_server(faults={"hello": ["empty"]})
    engine = Engine({"m": spec("m", server.base_url)}, max_concurrency=2, policy=FAST_RETRY)
    completion = asyncio.run(ask(engine, "m", "hello"))
    assert completion.text == "" and completion.empty and completion.attempts == 1
    assert completion.usage()["empty"] is True
    normal = asyncio.run(ask(Engine({"m": spec("m", server.base_url)}, max_concurrency=2), "m", "hi"))
    assert "empty" not in normal.usage()


def test_a_truncated_thought_is_an_empty_answer_not_the_thought(mock_server: Any) -> None:
    server = mock_server(faults={"hello": ["think_truncated"]})
    engine = Engine({"m": spec("m", server.base_url)}, max_concurrency=2, policy=FAST_RETRY)
    completion = asyncio.run(ask(engine, "m", "hello"))
    assert completion.text == "" and completion.empty and completion.truncated_thought
    assert completion.reasoning is not None and completion.reasoning.startswith("Let me weigh")
    assert completion.finish_reason == "length"
    assert completion.usage()["truncated_thought"] is True and completion.usage()["empty"] is True


def test_a_truncated_thought_keeps_its_flag_through_the_cache(mock_server: Any, tmp_path: Path) -> None:
    server = mock_server(faults={"hello": ["think_truncated"]})

    async def twice() -> tuple[Any, Any]:
        cache = RequestCache(tmp_path / "cache.sqlite")
        engine = Engine({"m": spec("m", server.base_url)}, max_concurrency=2, policy=FAST_RETRY, cache=cache)
        try:
            client = engine.client("m")
            messages = [{"role": "user", "content": "hello"}]
            return await client.complete(messages), await client.complete(messages)
        finally:
            await engine.aclose()

    first, second = asyncio.run(twice())
    assert second.cached and second.truncated_thought and second.empty and second.text == ""
    assert server.stats.requests == 1 and first.truncated_thought


def test_the_reask_label_list_is_not_a_verdict() -> None:
    assert parse_verdict(REASK_TEXT) is None
    assert parse_verdict("exactly one of: [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]].") is None
    assert parse_verdict("[[A>B]] or [[A=B]] or [[B>A]]") is None
    assert parse_verdict("1. [[A>>B]]\n2. [[A>B]]\n3. [[A=B]]\n4. [[B>A]]\n5. [[B>>A]]") is None
    # A choice stated after the list is the verdict; two labels are a comparison, not a list.
    assert parse_verdict("Options: [[A>>B]], [[A>B]], [[A=B]]. I choose [[A>B]].") == "A>B"
    assert parse_verdict("Not [[A>B]] but [[B>A]]") == "B>A"
    assert parse_verdict("[[A>B]], [[B>A]]") == "B>A"
    # All five enumerated with words between them, then the verdict after the enumeration.
    spread = "strong A [[A>>B]], weak A is [[A>B]], tie is [[A=B]], weak B is [[B>A]], strong B [[B>>A]]."
    assert parse_verdict(spread) is None
    assert parse_verdict(spread + " My final verdict is [[A=B]]") == "A=B"


def game(server: Any, judge: str) -> dict[str, Any]:
    engine = Engine({judge: spec(judge, server.base_url)}, max_concurrency=2, policy=FAST_RETRY)

    async def main() -> dict[str, Any]:
        try:
            client = engine.client(judge)
            protocol = jurist_pairwise_protocol()
            return await judge_game(client, protocol, "Task X", "[better] a", "[worse] b", cache="off")
        finally:
            await engine.aclose()

    return asyncio.run(main())


def test_a_judge_repeating_the_label_list_after_the_reask_is_invalid(mock_server: Any) -> None:
    server = mock_server(faults={"Task X": ["labels_list", "labels_list"]})
    record = game(server, "judge")
    assert record["label"] is None
    assert record["reask_raw"].startswith("exactly one of:")


def test_a_label_list_then_a_real_verdict_on_reask(mock_server: Any) -> None:
    server = mock_server(faults={"Task X": ["labels_list"]})
    record = game(server, "judge")
    assert record["label"] == "A>>B"  # better (3) against worse (1): a gap of 2, a strong verdict
    assert "reask_raw" in record


def test_a_huge_judge_reply_is_read_whole_and_stored_cut(mock_server: Any) -> None:
    server = mock_server(faults={"Task X": ["huge"]})
    record = game(server, "judge")
    assert record["label"] is not None  # read from the full text: the label sits in the middle
    assert record["raw_chars"] > 2 * RAW_KEEP
    assert len(record["raw"]) < 2 * RAW_KEEP + 100 and "characters cut by jurist" in record["raw"]
    assert "[[" not in record["raw"]  # the verdict was in the cut middle, and was read all the same
    assert "reask_raw" not in record


def test_cap_raw_keeps_short_text_whole() -> None:
    assert cap_raw("short") == ("short", None)
    text = "h" * 10 + "m" * 100 + "t" * 10
    kept, chars = cap_raw(text, keep=10)
    assert chars == 120 and kept.startswith("h" * 10) and kept.endswith("t" * 10) and "m" not in kept
