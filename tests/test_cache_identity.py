"""The request cache keys every answer on what answered it: two servers, or one server restarted on another
checkpoint, serving the same name under the same port never answer for each other from the cache."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY, write_models_file
from jurist.config import Endpoint, ModelSpec, ServeSpec
from jurist.engine.cache.identity import Identity, from_models_listing, managed_identity, normalise_base_url
from jurist.engine.cache.store import open_cache
from jurist.engine.client import Completion, Engine, RequestFailed
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl
from mock_openai import MockOpenAI

PROMPTS = [f"question {i}" for i in range(6)]


def spec(*urls: str, alias: str = "model") -> ModelSpec:
    return ModelSpec(
        alias=alias, model=alias, endpoints=[Endpoint(api_base=url) for url in urls], timeout=2.0
    )


def answers(engine: Engine, prompts: list[str] = PROMPTS, alias: str = "model") -> list[Completion]:
    """Every prompt asked at once (so load-balanced endpoints share them), in prompt order."""

    async def main() -> list[Completion]:
        client = engine.client(alias)
        try:
            asked = [client.complete([{"role": "user", "content": p}]) for p in prompts]
            return list(await asyncio.gather(*asked))
        finally:
            await engine.aclose()

    return asyncio.run(main())


def engine_for(*urls: str, cache: Any) -> Engine:
    return Engine({"model": spec(*urls)}, max_concurrency=8, policy=FAST_RETRY, cache=cache)


def own_answer(root: str, prompt: str) -> str:
    return f"[model from {root}] {prompt}"


def served(root: str, port: int = 0) -> MockOpenAI:
    server = MockOpenAI(root=root, served=("model",))
    server.start(port)
    return server


def test_two_servers_of_one_name_never_answer_for_each_other(tmp_path: Path) -> None:
    first, second = served("/ckpt/step_120"), served("/ckpt/step_240")
    try:
        cache = open_cache(tmp_path)
        from_first = answers(engine_for(first.base_url, cache=cache))
        from_second = answers(engine_for(second.base_url, cache=cache))
        assert [c.text for c in from_first] == [own_answer("/ckpt/step_120", p) for p in PROMPTS]
        assert [c.text for c in from_second] == [own_answer("/ckpt/step_240", p) for p in PROMPTS]
        assert not any(c.cached for c in from_first + from_second)
        assert (first.stats.requests, second.stats.requests) == (len(PROMPTS), len(PROMPTS))
        # Unchanged servers: each re-run is all hits, each with its own server's answers, nothing sent.
        for server, root in ((first, "/ckpt/step_120"), (second, "/ckpt/step_240")):
            again = answers(engine_for(server.base_url, cache=cache))
            assert all(c.cached for c in again) and [c.text for c in again] == [
                own_answer(root, p) for p in PROMPTS
            ]
        assert (first.stats.requests, second.stats.requests) == (len(PROMPTS), len(PROMPTS))
        assert (first.models_requests, second.models_requests) == (2, 2)  # once per engine, not per request
        assert cache is not None
        cache.close()
    finally:
        first.stop()
        second.stop()


def test_a_server_restarted_on_another_checkpoint_under_the_same_name_and_port_is_a_miss(
    tmp_path: Path,
) -> None:
    cache = open_cache(tmp_path)
    old = served("/ckpt/step_120")
    port = old.port
    try:
        before = answers(engine_for(old.base_url, cache=cache))
    finally:
        old.stop()
    new = served("/ckpt/step_240", port)
    try:
        assert new.base_url == old.base_url
        after = answers(engine_for(new.base_url, cache=cache))
        assert not any(c.cached for c in after) and new.stats.requests == len(PROMPTS)
        assert [c.text for c in after] == [own_answer("/ckpt/step_240", p) for p in PROMPTS]
        assert [c.text for c in before] == [own_answer("/ckpt/step_120", p) for p in PROMPTS]
        again = answers(engine_for(new.base_url, cache=cache))
        assert all(c.cached for c in again) and new.stats.requests == len(PROMPTS)
    finally:
        new.stop()


def test_load_balanced_answers_are_keyed_by_the_endpoint_that_answered(tmp_path: Path) -> None:
    first, second = served("/ckpt/a"), served("/ckpt/b")
    try:
        cache = open_cache(tmp_path)
        spread = answers(engine_for(first.base_url, second.base_url, cache=cache))
        by_first = {p for p, c in zip(PROMPTS, spread, strict=True) if c.text == own_answer("/ckpt/a", p)}
        by_second = {p for p, c in zip(PROMPTS, spread, strict=True) if c.text == own_answer("/ckpt/b", p)}
        assert by_first and by_second and by_first | by_second == set(PROMPTS)  # both answered some
        again = answers(engine_for(first.base_url, second.base_url, cache=cache))
        assert all(c.cached for c in again) and [c.text for c in again] == [c.text for c in spread]
        sent = first.stats.requests
        alone = answers(engine_for(first.base_url, cache=cache))  # the first server alone
        assert {p for p, c in zip(PROMPTS, alone, strict=True) if c.cached} == by_first
        assert all(c.text == own_answer("/ckpt/a", p) for p, c in zip(PROMPTS, alone, strict=True))
        assert first.stats.requests - sent == len(by_second)  # what the other one answered is asked again
    finally:
        first.stop()
        second.stop()


def test_the_run_says_how_many_answers_came_from_the_cache_and_from_what(
    tmp_path: Path, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = served("/ckpt/step_120"), served("/ckpt/step_240")
    try:
        runs = []
        for index, server in enumerate((first, second, first)):
            models = write_models_file(tmp_path / f"models{index}.yaml", server.base_url, {"model": {}})
            out = tmp_path / f"run{index}"  # a new run directory each time: only the cache can answer
            run_quiet(models_file=models, models=["model"], out=out, limit=3, mode="inference-only")
            runs.append([r["answer"] for r in read_jsonl(out / "answers" / "model.jsonl")])
            said = capsys.readouterr()
            assert "Traceback" not in said.err
        assert all(text.startswith("[model from /ckpt/step_120]") for text in runs[0])
        assert all(text.startswith("[model from /ckpt/step_240]") for text in runs[1])  # never step_120's
        assert runs[2] == runs[0] and (first.stats.requests, second.stats.requests) == (3, 3)
        printed = said.err  # the last run's (the run speaks on stderr)
    finally:
        first.stop()
        second.stop()
    assert "from the request cache, not sent: 3 answers" in printed
    assert f"model at {normalise_base_url(first.base_url)} (root /ckpt/step_120)" in printed


def test_a_server_that_cannot_say_what_it_serves_is_keyed_by_url_and_name_and_said_once(
    tmp_path: Path, mock_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = mock_server(served=("other-a", "other-b"))  # lists two models, neither the one asked
    cache = open_cache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="jurist.cache"):
        first = answers(engine_for(server.base_url, cache=cache))
        second = answers(engine_for(server.base_url, cache=cache))
    assert not any(c.cached for c in first) and all(c.cached for c in second)
    assert server.stats.requests == len(PROMPTS)
    said = [r.getMessage() for r in caplog.records if "cannot say which weights" in r.getMessage()]
    assert len(said) == 1 and "not 'model'" in said[0]


def test_a_server_that_is_down_is_never_assumed_to_be_what_it_was(tmp_path: Path) -> None:
    """The restart workflow's window: the old checkpoint's server is stopped, the run starts while the new
    one loads (same name, same port). Nothing is looked up while it cannot say what it serves; its first
    answers are stored under what it says once it answers; the old checkpoint's entries are never served."""
    cache = open_cache(tmp_path)
    old = served("/ckpt/step_120")
    port, url = old.port, old.base_url
    try:
        answers(engine_for(url, cache=cache))
    finally:
        old.stop()
    engine = engine_for(url, cache=cache)
    new = MockOpenAI(root="/ckpt/step_240", served=("model",))

    async def restart_while_running() -> tuple[list[Identity], list[Completion]]:
        client = engine.client("model")
        try:
            down = await client.identities()  # learned while nothing listens
            new.start(port)  # the new checkpoint's server is up
            asked = [client.complete([{"role": "user", "content": p}]) for p in PROMPTS]
            return down, list(await asyncio.gather(*asked))
        finally:
            await engine.aclose()

    try:
        down, loaded = asyncio.run(restart_while_running())
        assert [identity.known for identity in down] == [False]
        assert not any(c.cached for c in loaded) and new.stats.requests == len(PROMPTS)
        assert [c.text for c in loaded] == [own_answer("/ckpt/step_240", p) for p in PROMPTS]
        assert new.models_requests == 1  # asked again once it answered, not once per answer
        again = answers(engine_for(url, cache=cache))
        assert all(c.cached for c in again) and [c.text for c in again] == [c.text for c in loaded]
    finally:
        new.stop()
    offline = engine_for(url, cache=cache)
    (failed,) = asyncio.run(_ask_one(offline, PROMPTS[0]))
    assert isinstance(failed, RequestFailed)  # down: no answer at all rather than one it cannot vouch for


async def _ask_one(engine: Engine, prompt: str) -> list[Completion | RequestFailed]:
    try:
        return [await engine.client("model").complete([{"role": "user", "content": prompt}])]
    except RequestFailed as exc:
        return [exc]
    finally:
        await engine.aclose()


def test_failures_keep_no_identity_and_break_nothing(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(root="/ckpt/x", served=("model",), faults={"question 0": ["400"]})
    cache = open_cache(tmp_path)
    engine = engine_for(server.base_url, cache=cache)

    async def main() -> list[Completion | RequestFailed]:
        out: list[Completion | RequestFailed] = []
        for prompt in PROMPTS[:2] * 2:
            try:
                out.append(await engine.client("model").complete([{"role": "user", "content": prompt}]))
            except RequestFailed as exc:
                out.append(exc)
        await engine.aclose()
        return out

    failed, answered, retried, hit = asyncio.run(main())
    assert isinstance(failed, RequestFailed) and isinstance(answered, Completion) and not answered.cached
    assert (
        isinstance(retried, Completion) and not retried.cached and isinstance(hit, Completion) and hit.cached
    )


def test_base_urls_are_normalised() -> None:
    assert normalise_base_url("HTTP://LocalHost:80/v1/") == "http://127.0.0.1/v1"
    assert normalise_base_url("https://user:pw@API.example.com:443/v1") == "https://api.example.com/v1"
    assert normalise_base_url("http://[::1]:8000/v1") == "http://127.0.0.1:8000/v1"
    assert normalise_base_url("http://10.0.0.2:8000/v1") != normalise_base_url("http://10.0.0.3:8000/v1")
    assert normalise_base_url("litellm:") == "litellm:"


def test_what_each_kind_of_server_says_about_its_weights() -> None:
    url = "http://127.0.0.1:8000/v1"
    vllm = {"data": [{"id": "model", "created": 1, "root": "/ckpt/step_120", "parent": None}]}
    later = {"data": [{"id": "model", "created": 2, "root": "/ckpt/step_120", "parent": None}]}
    assert from_models_listing(vllm, url, "model") == from_models_listing(later, url, "model")  # not time
    assert from_models_listing(vllm, url, "model").weights == "root /ckpt/step_120"
    lora = {"data": [{"id": "base", "root": "/w/base"}, {"id": "model", "root": "/w/lora", "parent": "base"}]}
    assert json.loads(from_models_listing(lora, url, "model").weights) == {
        "parent": "base",
        "root": "/w/lora",
    }
    # llama.cpp: one model whatever the name asked; its id is the file (or, under --alias, a fingerprint).
    llama = {"data": [{"id": "/models/a.gguf", "owned_by": "llamacpp", "meta": {"n_params": 7, "size": 9}}]}
    found = from_models_listing(llama, url, "anything")
    assert found.source == "server" and "/models/a.gguf" in found.weights and '"size":9' in found.weights
    hosted = {"data": [{"id": "gpt-4.1", "owned_by": "openai"}, {"id": "model", "owned_by": "openai"}]}
    assert from_models_listing(hosted, url, "model") == Identity(url, "model", "", "name")
    assert from_models_listing({"data": []}, url, "model").source == "unknown"
    assert from_models_listing([1, 2], url, "model").source == "unknown"


def test_a_managed_model_is_known_by_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"weights one")
    first = managed_identity("llama.cpp", str(gguf), "m")
    assert first == managed_identity("llama.cpp", str(gguf), "m") and first.where == "serve:llama.cpp"
    gguf.write_bytes(b"weights two, longer")
    assert managed_identity("llama.cpp", str(gguf), "m") != first
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"layers": 2}')
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    before = managed_identity("vllm", str(folder), "m")
    (folder / "notes.md").write_text("not part of the model")
    assert managed_identity("vllm", str(folder), "m") == before
    (folder / "model.safetensors").write_bytes(b"y" * 11)  # another checkpoint written in place
    assert managed_identity("vllm", str(folder), "m") != before
    stat = (folder / "config.json").stat()
    (folder / "config.json").write_text('{"layers": 3}')
    os.utime(folder / "config.json", ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and time
    assert managed_identity("vllm", str(folder), "m") != before
    # A hub id: the commit the local hub cache resolves it to.
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert managed_identity("vllm", "org/name", "m").weights == "hub org/name@unresolved"
    refs = tmp_path / "hub" / "models--org--name" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text("abc123\n")
    assert managed_identity("vllm", "org/name", "m").weights == "hub org/name@abc123"


def test_a_managed_model_swapped_on_disk_is_a_miss_without_starting_a_server(tmp_path: Path) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"weights one")
    cache = open_cache(tmp_path / "cache")
    managed = ModelSpec(alias="m", model="m", serve=ServeSpec(kind="llama.cpp", model=str(gguf)))
    engine = Engine({"m": managed}, max_concurrency=2, cache=cache)
    body = engine.client("m").build_body("m", [{"role": "user", "content": "hi"}])
    identity = managed_identity("llama.cpp", str(gguf), "m")
    from jurist.engine.cache.store import request_key

    assert cache is not None
    cache.put(request_key(identity.key_text(), body, 0), {"text": "cached"})
    (hit,) = answers(engine, ["hi"], alias="m")  # answered from the cache: no server started
    assert hit.cached and hit.text == "cached"
    gguf.write_bytes(b"weights two, longer")
    engine = Engine({"m": managed}, max_concurrency=2, cache=cache)
    client = engine.client("m")
    (now,) = asyncio.run(client.identities())
    assert now != identity and cache.get(request_key(now.key_text(), body, 0)) is None


def test_cache_only_answers_as_each_server_last_said_and_sends_nothing(tmp_path: Path) -> None:
    """Scoring again while the servers are down, asked for by name: nothing is probed or sent, cached
    answers are read under the identity the endpoint last reported (after a restart: the new one), and
    what the cache lacks fails instead of being answered by anything else."""
    cache = open_cache(tmp_path)
    old = served("/ckpt/step_120")
    port, url = old.port, old.base_url
    try:
        answers(engine_for(url, cache=cache))
    finally:
        old.stop()
    new = served("/ckpt/step_240", port)  # restarted on the next checkpoint, same name and port
    try:
        fresh = answers(engine_for(url, cache=cache), PROMPTS[:3])
    finally:
        new.stop()
    offline = Engine({"model": spec(url)}, max_concurrency=8, policy=FAST_RETRY, cache=cache, cache_only=True)
    got = asyncio.run(_ask_all(offline, PROMPTS))
    assert [c.text for c in got[:3] if isinstance(c, Completion)] == [c.text for c in fresh]
    assert all(c.cached for c in got[:3] if isinstance(c, Completion))  # step_240's, as it last said
    assert all(isinstance(c, RequestFailed) and c.kind == "cache" for c in got[3:])  # never step_120's
    (identity,) = asyncio.run(_identities(spec(url), cache))
    assert identity.weights == "root /ckpt/step_240" and identity.seen
    assert "as it last said on" in identity.describe()
    assert new.stats.requests == 3 and new.models_requests == 1  # the earlier runs' only


async def _ask_all(engine: Engine, prompts: list[str]) -> list[Completion | RequestFailed]:
    client = engine.client("model")
    results: list[Completion | RequestFailed] = []
    try:
        for prompt in prompts:
            try:
                results.append(await client.complete([{"role": "user", "content": prompt}]))
            except RequestFailed as exc:
                results.append(exc)
        return results
    finally:
        await engine.aclose()


async def _identities(model: ModelSpec, cache: Any) -> list[Identity]:
    engine = Engine({"model": model}, max_concurrency=1, cache=cache, cache_only=True)
    try:
        return await engine.client("model").identities()
    finally:
        await engine.aclose()


def test_a_run_rescored_into_a_new_directory_with_its_server_down(
    tmp_path: Path, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = served("/ckpt/step_120")
    models = write_models_file(tmp_path / "models.yaml", server.base_url, {"model": {}})
    cache = tmp_path / "cache"
    common = {"models_file": models, "models": ["model"], "limit": 3, "mode": "inference-only"}
    try:
        run_quiet(**common, out=tmp_path / "run0", cache_path=cache)
    finally:
        server.stop()
    capsys.readouterr()
    with pytest.raises(JuristError, match="--cache-only to answer from the request cache alone"):
        run_quiet(**common, out=tmp_path / "run1", cache_path=cache, check=True)
    result = run_quiet(**common, out=tmp_path / "run2", cache_path=cache, check=True, cache_only=True)
    assert result.exit_code == 0
    said = capsys.readouterr().err
    assert "from the request cache, not sent: 3 answers" in said and "as it last said on" in said
    first, again = (read_jsonl(tmp_path / d / "answers" / "model.jsonl") for d in ("run0", "run2"))
    assert [r["answer"] for r in again] == [r["answer"] for r in first]
