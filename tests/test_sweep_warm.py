"""``jurist sweep --warm-swap``: a slot keeps its vLLM server and moves it to each next checkpoint through
vLLM's sleep-mode dev endpoints, served by the stand-in ``tests/fake_vllm/vllm`` (which answers as the
weights it holds, ``[<served name> from <folder>] <prompt>``, so every answer says which checkpoint gave
it). Where the endpoints are missing or fail, or vLLM will not start in sleep mode, each checkpoint starts
cold and sweep.json says why; however the sweep ends, no server process group is left behind.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import build_sweep_plan
from jurist.engine.servers.pool import KeptServer, ServerPool
from jurist.engine.servers.vllm import SWAP_SERVED_NAME, swap_blocker
from jurist.store.jsonl import read_jsonl
from jurist.sweep.launch import run_sweep
from test_pool import Factory, group_gone, managed_spec
from test_sweep import checkpoint_dirs, rule_file, starts, use_fake_vllm
from test_sweep_watch import _complete, _document, _wait_for

STEPS = (100, 200, 300)


def swaps(path: Path) -> list[str]:
    """The folders the stand-in reloaded weights from, in order."""
    return [str(line["model"]) for line in read_jsonl(path)] if path.exists() else []


def asked(start: dict[str, Any]) -> int:
    """Requests the stand-in started with ``start`` has received (0 while it is not listening yet)."""
    port = start["argv"][start["argv"].index("--port") + 1]
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/_stats", timeout=5) as reply:  # noqa: S310
            return int(json.loads(reply.read())["requests"])
    except OSError:
        return 0


def served_by(sweep: Path) -> dict[str, str]:
    return {c["name"]: c.get("served_by") for c in _document(sweep)["checkpoints"]}


def answers(sweep: Path, name: str) -> list[str]:
    return [
        json.dumps(record) for record in read_jsonl(sweep / name / "ifeval" / "answers" / f"{name}.jsonl")
    ]


def warm_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Path, Path]:
    """Three checkpoints of one run on one GPU slot, the rule task only; (plan, starts, swaps)."""
    record = use_fake_vllm(tmp_path, monkeypatch)
    reloads = tmp_path / "reloads.jsonl"
    monkeypatch.setenv("FAKE_VLLM_SWAPS", str(reloads))
    monkeypatch.delenv("FAKE_VLLM_SLEEP", raising=False)
    checkpoint_dirs(tmp_path / "run", list(STEPS))
    plan = build_sweep_plan(
        checkpoints=str(tmp_path / "run"),
        tasks="ifeval",
        bench_options=[f"ifeval:file={rule_file(tmp_path / 'rules.jsonl')}"],
        limit=3,
        gpus="0,",
        out=tmp_path / "sweep",
        progress=False,
        check=False,
        max_attempts=2,
        retry_base_delay=0.01,
    )
    return plan, record, reloads


def test_one_server_serves_every_checkpoint_of_a_slot_each_with_its_own_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, record, reloads = warm_sweep(tmp_path, monkeypatch)
    assert run_sweep(plan, plots=False, warm_swap=True).exit_code == 0
    (start,) = starts(record)  # one server for the three checkpoints
    argv = start["argv"]
    assert "--enable-sleep-mode" in argv and start["dev_mode"] == "1"
    assert argv[argv.index("--served-model-name") + 1] == SWAP_SERVED_NAME
    run = tmp_path / "run"
    assert swaps(reloads) == [str(run / "step_200"), str(run / "step_300")]  # swapped twice
    for step in STEPS:
        name = f"step_{step}"
        mine = answers(plan.out, name)
        assert len(mine) == 3 and all(f"from {run / name}]" in answer for answer in mine), mine
    assert served_by(plan.out) == {"step_100": "cold start", "step_200": "warm swap", "step_300": "warm swap"}
    assert group_gone(start["pgid"])  # stopped when the slot ended

    # the request cache kept each answer under the weights that gave it (the files of the checkpoint, not
    # the server's name or its /v1/models root, which still says step_100): step_200 again from the cache
    shutil.rmtree(plan.out / "step_200")
    again = run_sweep(plan, plots=False, warm_swap=True)
    assert again.exit_code == 0 and len(starts(record)) == 1  # no server at all: nothing left to send
    assert set(served_by(plan.out).values()) == {"no server started: nothing left to send"}
    assert all(f"from {run / 'step_200'}]" in answer for answer in answers(plan.out, "step_200"))


@pytest.mark.parametrize(
    ("sleep", "said"),
    [
        ("missing", "warm swap failed: POST /sleep?level=2 answered HTTP 404 (no dev endpoints"),
        ("broken", "warm swap failed: POST /collective_rpc reload_weights answered HTTP 500"),
        ("refuse", None),
    ],
)
def test_without_working_dev_endpoints_each_checkpoint_starts_cold_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sleep: str, said: str | None
) -> None:
    plan, record, reloads = warm_sweep(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_VLLM_SLEEP", sleep)
    assert run_sweep(plan, plots=False, warm_swap=True).exit_code == 0
    started = starts(record)
    assert len(started) == 3  # one cold start per checkpoint
    assert swaps(reloads) == []
    for step in STEPS:
        name = f"step_{step}"
        assert all(name in answer for answer in answers(plan.out, name))  # its own weights, still
    how = served_by(plan.out)
    if said is None:  # an older vLLM: it will not start in sleep mode, so the slot stops trying
        refused = "warm swap failed: this vLLM does not start with --enable-sleep-mode; cold start"
        assert how == {"step_100": refused, "step_200": "cold start", "step_300": "cold start"}
        assert not any("--enable-sleep-mode" in start["argv"] for start in started)
    else:
        assert how["step_100"] == "cold start"
        for name in ("step_200", "step_300"):
            assert how[name].startswith(said) and how[name].endswith("; cold start"), how[name]
    for start in started:
        assert group_gone(start["pgid"])  # each failed one was stopped before the next started


def test_only_checkpoints_of_one_architecture_and_tokenizer_are_swapped(tmp_path: Path) -> None:
    run = checkpoint_dirs(tmp_path / "run", [100, 200, 300, 400])
    (run / "step_100" / "config.json").write_text('{"_name_or_path": "/a", "hidden_size": 8}')
    (run / "step_200" / "config.json").write_text('{"_name_or_path": "/b", "hidden_size": 8}\n')
    (run / "step_300" / "config.json").write_text('{"hidden_size": 16}')
    (run / "step_400" / "config.json").write_text('{"hidden_size": 8}')
    (run / "step_400" / "tokenizer.json").write_text("{}")
    assert swap_blocker(str(run / "step_100"), str(run / "step_200")) is None  # its path is not its shape
    assert (
        swap_blocker(str(run / "step_100"), str(run / "step_300"))
        == "step_300's config.json differs from step_100's"
    )
    assert (
        swap_blocker(str(run / "step_100"), str(run / "step_400"))
        == "step_400's tokenizer.json differs from step_100's"
    )
    assert "is not a local model folder" in str(swap_blocker(str(run / "step_100"), "org/model"))


def test_a_server_that_cannot_swap_is_restarted_for_each_checkpoint(tmp_path: Path) -> None:
    """A kind of server with no warm swap (llama.cpp's: its start is cheap) is never kept: each phase of
    the slot starts its own and stops it at its end, as without --warm-swap."""
    keep, factory = KeptServer(), Factory()

    async def phase(alias: str) -> str:
        pool = ServerPool(factory=factory, keep=keep)
        started = await pool.ensure(managed_spec(alias))
        assert started.endpoints and started.endpoints[0].model_name == f"{alias}-served"
        await pool.aclose()
        return pool.served_by[alias]

    assert [asyncio.run(phase(alias)) for alias in ("step_100", "step_200")] == ["cold start"] * 2
    assert keep.server is None and len(factory.pgids) == 2
    assert all(group_gone(pgid) for pgid in factory.pgids)


def test_warm_swap_is_refused_where_it_cannot_apply(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "jurist", "sweep", "--checkpoints", str(tmp_path), "--tasks", "ifeval"]
    for extra in (["--local"], ["--ray", "auto"], ["--serve-kind", "llama.cpp"]):
        done = subprocess.run([*command, "--warm-swap", *extra], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "--warm-swap moves a vLLM server" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("when", ["idle between checkpoints", "answering"])
def test_sigterm_stops_the_kept_server_of_a_watched_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    record = use_fake_vllm(tmp_path, monkeypatch)
    reloads = tmp_path / "reloads.jsonl"
    monkeypatch.setenv("FAKE_VLLM_SWAPS", str(reloads))
    if when == "answering":
        monkeypatch.setenv("FAKE_VLLM_REPLY_DELAY", "60")
    run, sweep = checkpoint_dirs(tmp_path / "run", [100, 200]), tmp_path / "sweep"
    command = [
        sys.executable, "-m", "jurist", "sweep", "--watch", "--checkpoints", str(run), "--settle", "0",
        "--tasks", "ifeval", "-B", f"ifeval:file={rule_file(tmp_path / 'rules.jsonl')}", "--limit", "3",
        "--gpus", "0,", "--out", str(sweep), "--no-progress", "--no-check", "--no-plots", "--warm-swap",
    ]  # fmt: skip
    watched = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        if when == "answering":  # step_100's requests are on the kept server, which holds them
            _wait_for(lambda: len(starts(record)) == 1 and asked(starts(record)[0]) > 0)
        else:  # both done, the server kept warm for the next checkpoint training writes
            _wait_for(lambda: _complete(sweep) == {"step_100", "step_200"})
        watched.send_signal(signal.SIGTERM)
        _, err = watched.communicate(timeout=90)
    finally:
        if watched.poll() is None:
            watched.kill()
    assert watched.returncode == 130, err
    (start,) = starts(record)
    assert group_gone(start["pgid"])  # the kept server and its worker
    if when != "answering":
        assert swaps(reloads) == [str(run / "step_200")]
        timing = {c["name"]: c for c in _document(sweep)["checkpoints"]}
        assert timing["step_200"]["served_by"] == "warm swap"
        assert timing["step_200"]["ready_to_first_request_s"] >= 0
