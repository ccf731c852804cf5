"""Bounded work on any reply (issue 26, points 2 and 7): a reply over the cap is kept cut and flagged, a
huge or CJK reply finishes a run with its answer kept, SIGTERM stops a run mid-reply, and a timed-out
request's connection is closed before its slot is reused, so a server never holds more than the cap."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY, write_models_file
from jurist.config import Endpoint, ModelSpec
from jurist.engine.client import Engine, RequestFailed
from jurist.engine.pacing.retry import RetryPolicy
from jurist.engine.wire.reply_cap import MIB, CutBody, cut_message
from jurist.engine.wire.transport import parse_completion

ROOT = Path(__file__).resolve().parents[1]
HANG_S = 30.0  # a guard against a hang, not a timing


def spec(url: str, **extra: Any) -> ModelSpec:
    return ModelSpec(alias="m", model="m", endpoints=[Endpoint(api_base=url)], **{"timeout": 5.0, **extra})


async def ask(engine: Engine, prompts: list[str]) -> list[Any]:
    async def one(prompt: str) -> Any:
        try:
            return await engine.client("m").complete([{"role": "user", "content": prompt}], cache="off")
        except RequestFailed as exc:
            return exc

    try:
        return await asyncio.gather(*(one(p) for p in prompts))
    finally:
        await engine.aclose()


# -- the cap ---------------------------------------------------------------------------------------------
TEXTS = ['plain "quoted" \\ back\\slash', "中文 é 😀 \ud83d lone", "line\nbreak\ttab \u2028 \x00", "<think>a"]


@pytest.mark.parametrize("text", TEXTS)
def test_a_body_cut_at_any_byte_keeps_a_prefix_of_its_answer(text: str) -> None:
    lone_surrogate = any(0xD800 <= ord(c) < 0xE000 for c in text)  # sendable only as an escape
    for ascii_only in (True,) if lone_surrogate else (True, False):
        body = json.dumps(
            {"id": "x", "choices": [{"message": {"role": "assistant", "content": text}}], "usage": {}},
            ensure_ascii=ascii_only,
        ).encode()
        start = body.index(b'"content"') + len(b'"content": "')
        for cut in range(start, len(body)):
            message, finish = cut_message(CutBody(body[:cut]))
            assert text.startswith(message["content"]), (cut, message)
            assert finish == "length" or message["content"] == text  # whole only when its quote closed


def test_a_body_cut_before_any_answer_is_no_answer_and_inside_a_thought_keeps_the_thought() -> None:
    with pytest.raises(ValueError, match="no answer"):
        cut_message(CutBody(b'{"id": "x", "choices": [{"message": {"role": "assis'))
    body = b'{"choices": [{"message": {"reasoning_content": "I think and think'
    reply = parse_completion(CutBody(body))
    assert reply.text == "" and reply.truncated_thought and reply.reasoning == "I think and think"
    assert reply.cut_at_bytes == len(body) and reply.notes[0].startswith("body is over the reply cap")


def test_a_reply_over_the_cap_is_read_that_far_kept_flagged_and_counted(mock_server: Any) -> None:
    server = mock_server(faults={"flood me": ["flood"]})
    engine = Engine({"m": spec(server.base_url, max_reply_mb=1)}, max_concurrency=4, policy=FAST_RETRY)
    flooded, plain = asyncio.run(ask(engine, ["flood me", "hello"]))
    assert flooded.cut_at_bytes == MIB and flooded.usage()["cut_at_bytes"] == MIB
    assert set(flooded.text) == {"a"} and MIB - 200 < len(flooded.text) < MIB
    assert flooded.finish_reason == "length" and flooded.attempts == 1 and server.stats.requests == 2
    assert plain.text == "[m] hello" and plain.cut_at_bytes is None
    row = engine.ledger.summary()["rows"][0]
    assert row["replies"] == 2 and row["malformed"] == 1 and row["malformed_fields"] == "body"
    assert row["estimated"] == 1  # the usage came after the cut: counted by jurist, and said so


def test_the_default_cap_keeps_a_twenty_mb_reply_whole(mock_server: Any) -> None:
    server = mock_server(faults={"flood me": ["flood"]})
    engine = Engine({"m": spec(server.base_url)}, max_concurrency=4, policy=FAST_RETRY)
    (flooded,) = asyncio.run(ask(engine, ["flood me"]))
    assert flooded.text == "a" * 20_000_000 and flooded.cut_at_bytes is None


# -- the in-flight cap at the server -----------------------------------------------------------------------
def test_the_server_never_holds_more_requests_than_the_cap_under_slow_faults(mock_server: Any) -> None:
    """Replies slower than the client's timeout: each abandoned request's connection is closed before its
    slot is reused, so a server that notices closed connections (as vLLM does) sees at most the cap."""
    server = mock_server(
        notice_disconnects=True, fault_rate=0.5, fault_kinds=("slow",), slow_s=1.0, keep_bodies=False
    )
    policy = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.02)
    engine = Engine({"m": spec(server.base_url, timeout=0.3, parallel=64)}, max_concurrency=8, policy=policy)
    results = asyncio.run(ask(engine, [f"prompt {i}" for i in range(120)]))
    assert server.stats.injected["slow"] >= 40 and engine.stats.retries >= 40  # many timed out
    assert sum(not isinstance(r, RequestFailed) for r in results) >= 100
    assert server.stats.peak_in_flight <= 8
    assert engine.limits.peak_in_flight == 8


# -- a real run ---------------------------------------------------------------------------------------------
def questions(path: Path, prompts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"uid": f"q{i}", "prompt": p}) + "\n" for i, p in enumerate(prompts)))
    return path


def test_a_run_with_huge_and_cjk_replies_finishes_and_keeps_them(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server(faults={"flood me": ["flood"], "cjk me": ["cjk"]})
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    bench = questions(tmp_path / "question.jsonl", ["flood me", "cjk me", "prompt 2", "prompt 3"])
    started = time.monotonic()
    result = run_quiet(
        bench=str(bench),
        models_file=models,
        models=["strong"],
        mode="inference-only",
        out=tmp_path / "run",
    )
    assert time.monotonic() - started < HANG_S
    assert result.exit_code == 0 and result.failures == 0
    with (tmp_path / "run" / "answers" / "strong.jsonl").open(encoding="utf-8") as handle:
        rows = {row["uid"]: row for row in map(json.loads, handle)}
    assert sorted(rows) == ["q0", "q1", "q2", "q3"]
    flood, cjk = json.dumps(rows["q0"]), json.dumps(rows["q1"], ensure_ascii=False)
    assert "a" * 20_000_000 in flood and "cut_at_bytes" not in flood
    assert rows["q0"]["metadata"]["approximate"] is True  # one 20 MB piece: counted in cuts, and flagged
    assert len([c for c in cjk if "\u4e00" <= c <= "\u9fa5"]) >= 200_000


TRICKLE_MODELS = {"strong": {"parallel": 2, "timeout": 120}}


def test_sigterm_while_a_huge_reply_is_arriving_stops_the_run_promptly(
    tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(faults={"trickle me": ["trickle"]}, trickle_s=20.0)
    write_models_file(tmp_path / "m.yaml", server.base_url, TRICKLE_MODELS)
    questions(tmp_path / "question.jsonl", ["trickle me", "prompt 1", "prompt 2"])
    process = subprocess.Popen(
        [sys.executable, "-m", "jurist", "run", "--bench", "question.jsonl", "--models-file", "m.yaml"]
        + ["--model", "strong", "--inference-only", "--no-progress", "--no-check", "--out", "run"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG_S
        while time.monotonic() < deadline and not server.stats.trickles:
            time.sleep(0.05)
        time.sleep(1.0)  # a few MB in
        assert server.stats.trickles == 1 and process.poll() is None
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=HANG_S)
        stopped = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert stopped < 2.0, stopped
    assert "Traceback" not in stderr
    answers = (tmp_path / "run" / "answers" / "strong.jsonl").read_text().splitlines()
    assert {json.loads(line)["uid"] for line in answers} == {"q1", "q2"}  # the others are kept
