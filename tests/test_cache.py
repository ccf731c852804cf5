"""The request cache: hits cost no request, failures are never stored, a broken file is bypassed."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.config import Endpoint, ModelSpec
from jurist.engine.cache.store import (
    CACHE_FILE,
    RequestCache,
    default_cache_path,
    open_cache,
    request_key,
)
from jurist.engine.client import Completion, Engine, RequestFailed

SECRET = "sk-cache-SECRET-0123456789"


def spec(url: str, **extra: Any) -> ModelSpec:
    return ModelSpec(alias="m", model="m", endpoints=[Endpoint(api_base=url, api_key=extra.pop("key", None))],
                     **{"timeout": 2.0, **extra})  # fmt: skip


def ask(engine: Engine, *requests: dict[str, Any], alias: str = "m") -> list[Completion | RequestFailed]:
    """Send the requests one after another (``prompt`` plus ``complete`` keywords); failures are returned."""

    async def main() -> list[Completion | RequestFailed]:
        out: list[Completion | RequestFailed] = []
        try:
            for request in requests:
                request = dict(request)
                messages = [{"role": "user", "content": request.pop("prompt", "hello")}]
                try:
                    out.append(await engine.client(alias).complete(messages, **request))
                except RequestFailed as exc:
                    out.append(exc)
        finally:
            await engine.aclose()
        return out

    return asyncio.run(main())


def cached_engine(url: str, cache: RequestCache | None, **extra: Any) -> Engine:
    return Engine({"m": spec(url, **extra)}, max_concurrency=4, policy=FAST_RETRY, cache=cache)


def test_the_cache_lives_where_the_environment_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURIST_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_path() == tmp_path / "c" / CACHE_FILE
    monkeypatch.delenv("JURIST_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "jurist" / CACHE_FILE
    assert open_cache(enabled=False) is None
    for given, expected in [
        (tmp_path, tmp_path / CACHE_FILE),
        (tmp_path / "a" / "c.db", tmp_path / "a" / "c.db"),
    ]:
        cache = open_cache(given)  # a directory holds requests.sqlite; anything else is the file itself
        assert cache is not None and cache.path == expected
        cache.close()


def test_the_same_request_twice_is_sent_once(mock_server: Any) -> None:
    server = mock_server()
    cache = open_cache()
    assert cache is not None and cache.path == default_cache_path()  # the per-test directory (conftest)
    engine = cached_engine(server.base_url, cache)
    first, second = ask(engine, {}, {})
    assert server.stats.requests == 1
    assert isinstance(first, Completion) and isinstance(second, Completion)
    assert (second.text, second.prompt_tokens, second.completion_tokens) == (
        first.text,
        first.prompt_tokens,
        first.completion_tokens,
    )
    assert second.finish_reason == first.finish_reason == "stop"
    assert (second.cached, second.attempts, second.latency_s) == (True, 0, 0.0)
    assert second.usage()["cached"] is True and "cached" not in first.usage()
    assert engine.stats.requests == 1 and engine.stats.cache_hits == 1
    assert engine.stats.per_model["m"]["cache_hits"] == 1 and engine.stats.summary()["cache_hits"] == 1
    assert engine.stats.completion_tokens == first.completion_tokens  # a hit spends nothing
    assert (cache.hits, cache.misses) == (1, 1)
    cache.close()
    # Another process (here: another cache object and engine) finds it on disk.
    again = open_cache()
    assert again is not None
    (third,) = ask(cached_engine(server.base_url, again), {})
    assert isinstance(third, Completion) and third.cached and server.stats.requests == 1
    again.close()


def test_samples_params_and_models_are_told_apart(mock_server: Any, tmp_path: Path) -> None:
    server = mock_server()
    cache = open_cache(tmp_path)
    engine = cached_engine(server.base_url, cache)
    results = ask(engine, {"sample": 0}, {"sample": 1}, {"sample": 1}, {"sample": 0, "top_p": 0.5})
    assert server.stats.requests == 3 and [r.cached for r in results if isinstance(r, Completion)] == [
        False,
        False,
        True,
        False,
    ]
    assert request_key("m", b"{}", 0) != request_key("m", b"{}", 1) != request_key("n", b"{}", 1)


def test_off_and_refresh(mock_server: Any, tmp_path: Path) -> None:
    server = mock_server()
    cache = open_cache(tmp_path)
    engine = cached_engine(server.base_url, cache)
    off, stored, refreshed, hit = ask(engine, {"cache": "off"}, {}, {"cache": "refresh"}, {})
    # "off" neither looks up nor stores; "refresh" skips the lookup but stores what it got.
    assert [isinstance(r, Completion) and r.cached for r in (off, stored, refreshed, hit)] == [
        False,
        False,
        False,
        True,
    ]
    assert server.stats.requests == 3 and engine.stats.cache_hits == 1


def test_a_refreshed_result_replaces_the_stored_one(tmp_path: Path) -> None:
    cache = open_cache(tmp_path)
    assert cache is not None
    key = request_key("m", b"x", 0)
    cache.put(key, {"text": "old"})
    cache.put(key, {"text": "new"})
    cache.flush()
    assert cache.get(key) == {"text": "new"}
    cache.close()


def test_failures_are_not_cached(mock_server: Any, tmp_path: Path) -> None:
    server = mock_server(faults={"hello": ["400", "503", "503"]})
    cache = open_cache(tmp_path)
    engine = cached_engine(server.base_url, cache)
    failed, retried, hit = ask(engine, {}, {}, {})
    assert isinstance(failed, RequestFailed) and failed.status == 400
    # The 400 was not stored: the same request is sent again (two 503s retried, then a completion).
    assert isinstance(retried, Completion) and not retried.cached and retried.attempts == 3
    assert isinstance(hit, Completion) and hit.cached
    assert server.stats.requests == 4


def test_a_corrupt_cache_file_is_reported_once_and_bypassed(
    mock_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = mock_server()
    cache = open_cache(tmp_path)
    ask(cached_engine(server.base_url, cache), {})
    assert cache is not None
    cache.close()
    (tmp_path / CACHE_FILE).write_bytes(os.urandom(64 * 1024))
    with caplog.at_level(logging.WARNING, logger="jurist.cache"):
        broken = open_cache(tmp_path)
        assert broken is None
        results = ask(cached_engine(server.base_url, broken), {}, {})
        assert open_cache(tmp_path) is None
    assert all(isinstance(r, Completion) and not r.cached for r in results)
    assert server.stats.requests == 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(tmp_path / CACHE_FILE) in warnings[0].getMessage()


def test_a_cache_file_corrupted_while_open_is_bypassed(
    mock_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = mock_server()
    seed = open_cache(tmp_path)
    assert seed is not None
    for i in range(500):  # enough pages that lookups read the file, not what the connection holds
        seed.put(request_key("m", b"seed", i), {"text": "x" * 200})
    seed.close()
    cache = open_cache(tmp_path)
    assert cache is not None
    (tmp_path / CACHE_FILE).write_bytes(os.urandom(256 * 1024))
    with caplog.at_level(logging.WARNING, logger="jurist.cache"):
        results = ask(cached_engine(server.base_url, cache), {}, {"prompt": "other"}, {})
        assert not cache.enabled  # switched off at the first error, not before
        cache.close()
    assert all(isinstance(r, Completion) for r in results)
    assert server.stats.requests == 3  # bypassed: every request went to the server
    assert any(str(tmp_path / CACHE_FILE) in r.getMessage() for r in caplog.records)


def _writer(path: str, worker: int, n: int) -> int:
    cache = RequestCache(Path(path))
    for i in range(n):
        key = request_key("m", f"{worker}-{i}".encode(), 0)
        cache.put(key, {"text": f"{worker}-{i}", "prompt_tokens": i})
        if i % 7 == 0:
            cache.flush()  # many small transactions, interleaved with the other writers'
        cache.get(request_key("m", f"{1 - worker}-{i}".encode(), 0))
    cache.close()
    return n


def test_processes_share_one_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "shared" / CACHE_FILE
    n = 400
    context = multiprocessing.get_context("spawn")
    with context.Pool(3) as pool:
        done = pool.starmap(_writer, [(str(path), worker, n) for worker in range(3)])
    assert done == [n] * 3
    cache = open_cache(path)
    assert cache is not None and cache.enabled
    for worker in range(3):
        for i in range(n):
            assert cache.get(request_key("m", f"{worker}-{i}".encode(), 0)) == {
                "text": f"{worker}-{i}",
                "prompt_tokens": i,
            }
    cache.close()


def test_the_api_key_is_never_stored(mock_server: Any, tmp_path: Path) -> None:
    server = mock_server(require_key=SECRET)
    cache = open_cache(tmp_path)
    results = ask(cached_engine(server.base_url, cache, key=SECRET), {}, {}, {"prompt": "x"})
    assert server.stats.auth_headers == {f"Bearer {SECRET}"} and server.stats.requests == 2
    assert [r.cached for r in results if isinstance(r, Completion)] == [False, True, False]
    assert cache is not None
    cache.close()
    files = list(tmp_path.glob(CACHE_FILE + "*"))
    assert files and all(SECRET.encode() not in f.read_bytes() for f in files)


def test_the_litellm_key_is_added_after_the_key_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LiteLLM puts the key into the call's arguments inside ``post()``: after the body is hashed."""
    from test_providers import make_litellm

    litellm = make_litellm()
    monkeypatch.setitem(__import__("sys").modules, "litellm", litellm)
    cache = open_cache(tmp_path)
    llm = ModelSpec(
        alias="m",
        model="anthropic/x",
        api_type="litellm",
        endpoints=[Endpoint(api_base="http://gw:4000", api_key=SECRET)],
    )
    engine = Engine({"m": llm}, max_concurrency=2, cache=cache)
    first, second = ask(engine, {}, {})
    assert isinstance(second, Completion) and second.cached and len(litellm.calls) == 1
    assert litellm.calls[0]["api_key"] == SECRET  # it was used, just never hashed or stored
    assert cache is not None
    cache.close()
    assert all(SECRET.encode() not in f.read_bytes() for f in tmp_path.glob(CACHE_FILE + "*"))
