"""vLLM managed servers, GPU placement and served context, with the stand-in ``tests/fake_vllm/vllm``.

vLLM cannot run here (no GPU, no weights): the stand-in parses vLLM's command line, records it with its
CUDA_VISIBLE_DEVICES, serves the mock OpenAI API the way ``vllm serve`` does, and can crash, be killed as
by the OOM killer, or never become ready. CUDA_VISIBLE_DEVICES=0,1,2,3 plays a machine with four GPUs.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.config import ModelSpec, ServeSpec, load_models_file
from jurist.engine.client import Engine, RequestFailed
from jurist.engine.servers import placed, server_for, slots
from jurist.engine.servers.gpus import VisibleGpus, pick_gpus, visible_gpus
from jurist.engine.servers.llama_cpp import LlamaCppServer
from jurist.engine.servers.pool import ServerPool
from jurist.engine.servers.vllm import VllmServer
from jurist.errors import InputError, JuristError
from jurist.store.jsonl import read_jsonl
from test_pool import group_gone

FAKE_DIR = Path(__file__).resolve().parent / "fake_vllm"
FOUR_GPUS = "0,1,2,3"


class FakeVllm:
    """The stand-in on PATH, and what its starts recorded."""

    def __init__(self, record: Path) -> None:
        self.record = record

    def starts(self) -> list[dict[str, Any]]:
        return read_jsonl(self.record) if self.record.exists() else []


@pytest.fixture
def fake_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeVllm:
    interpreter_dir = Path(sys.executable).parent  # `python3` with aiohttp, for the stand-in's shebang
    monkeypatch.setenv("PATH", f"{FAKE_DIR}{os.pathsep}{interpreter_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", FOUR_GPUS)
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(tmp_path / "vllm-starts.jsonl"))
    monkeypatch.delenv("FAKE_VLLM_MODE", raising=False)
    return FakeVllm(tmp_path / "vllm-starts.jsonl")


def vllm_spec(alias: str = "big", **serve: Any) -> ModelSpec:
    fields = {"model": "/ckpt/step_100", "startup_timeout": 30.0, **serve}
    return ModelSpec(
        alias=alias, model=f"{alias}-served", serve=ServeSpec(kind="vllm", **fields), timeout=10.0
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def ask(engine: Engine, alias: str, prompts: list[str], **params: Any) -> list[Any]:
    """Each prompt's completion, or the RequestFailed it ended in; the engine is closed after."""

    async def main() -> list[Any]:
        try:
            client = engine.client(alias)
            sends = (client.complete([{"role": "user", "content": p}], **params) for p in prompts)
            return list(await asyncio.gather(*sends, return_exceptions=True))
        finally:
            await engine.aclose()

    return asyncio.run(main())


# -- command line, placement, readiness, served context ------------------------------------------------------
def test_the_command_line_the_gpus_and_the_served_context(fake_vllm: FakeVllm, tmp_path: Path) -> None:
    spec = vllm_spec(gpus=[2, 3], n_ctx=1024, args=["--max-num-seqs", "64", "--enforce-eager"])
    server = server_for(spec, tmp_path / "logs" / "big.log")
    with server:
        assert server.context_length == 1024  # max_model_len, as /v1/models says it
        port = server.port
    (start,) = fake_vllm.starts()
    assert start["argv"] == [
        "serve", "/ckpt/step_100", "--host", "127.0.0.1", "--port", str(port),
        "--served-model-name", "big-served", "--tensor-parallel-size", "2", "--max-model-len", "1024",
        "--max-num-seqs", "64", "--enforce-eager",
    ]  # fmt: skip
    assert start["cuda_visible_devices"] == "2,3"
    assert start["pgid"] == start["pid"]  # a process group of its own
    assert "serving /ckpt/step_100 as big-served" in (tmp_path / "logs" / "big.log").read_text()
    assert group_gone(start["pgid"]) and not alive(start["worker"])  # the engine-core child too


def test_gpu_counts_take_free_ids_and_asking_too_many_is_a_one_line_error(fake_vllm: FakeVllm) -> None:
    pool = ServerPool()

    async def main() -> list[Any]:
        specs = [
            vllm_spec("a", gpus=2),
            vllm_spec("b", gpus=2),
            vllm_spec("c", gpus=1),
            vllm_spec("d", gpus=8),
        ]
        return list(await asyncio.gather(*(pool.ensure(s) for s in specs), return_exceptions=True))

    try:
        a, b, c, d = asyncio.run(main())
    finally:
        pool.stop_all()
    placed_ids = sorted([a.serve.gpus, b.serve.gpus])
    assert placed_ids == [[0, 1], [2, 3]]
    assert sorted(s["cuda_visible_devices"] for s in fake_vllm.starts()) == ["0,1", "2,3"]
    assert all(s["argv"][s["argv"].index("--tensor-parallel-size") + 1] == "2" for s in fake_vllm.starts())
    assert isinstance(c, JuristError) and isinstance(d, JuristError)
    assert str(c) == (
        "model 'c': asks for 1 GPU(s) but only 0 of the 4 visible are free "
        "(GPUs 0, 1, 2, 3 serve other models of this run)"
    )
    assert str(d) == "model 'd': asks for 8 GPU(s) but 4 GPUs are visible (CUDA_VISIBLE_DEVICES=0,1,2,3)"
    assert len(fake_vllm.starts()) == 2  # nothing was started for c and d


def test_tensor_parallel_defaults_to_the_gpus_and_must_use_them_all(fake_vllm: FakeVllm) -> None:
    assert VllmServer.from_spec(placed(vllm_spec(gpus=4))).tensor_parallel == 4
    assert placed(vllm_spec(tensor_parallel=2)).serve.gpus == [0, 1]  # type: ignore[union-attr]
    assert placed(vllm_spec()).serve.gpus == [0]  # type: ignore[union-attr]
    with pytest.raises(JuristError, match=r"^tensor_parallel 2 uses 2 GPU\(s\) but gpus gives 4 \(0,1,2,3\)"):
        server_for(vllm_spec(gpus=4, tensor_parallel=2))
    two_stages = server_for(vllm_spec(gpus=4, tensor_parallel=2, args=["--pipeline-parallel-size", "2"]))
    assert isinstance(two_stages, VllmServer) and two_stages.gpu_ids == [0, 1, 2, 3]
    with pytest.raises(JuristError, match=r"^serve args: --port is not allowed \(jurist sets it\)$"):
        server_for(vllm_spec(args=["--port", "9000"]))
    with pytest.raises(JuristError, match=r"--max-model-len is not allowed \(use serve: n_ctx\)"):
        server_for(vllm_spec(args=["--max-model-len=4096"]))
    with pytest.raises(JuristError, match=r"asks for GPU 7, which is not visible here: 4 GPUs are visible"):
        server_for(vllm_spec(gpus=[1, 7]))


@pytest.mark.parametrize(
    ("serve", "message"),
    [
        (
            "{kind: vllm, model: m, gpus: 2, tensor_parallel: 3}",
            "tensor_parallel 3 does not divide the 2 GPU",
        ),
        ("{kind: vllm, model: m, gpus: 0}", "a GPU count is at least 1"),
        ("{kind: vllm, model: m, gpus: [1, 1]}", "GPU ids are distinct indices >= 0"),
        ("{kind: llama.cpp, model: m.gguf, tensor_parallel: 2}", "tensor_parallel applies to kind vllm"),
    ],
)
def test_bad_gpu_fields_are_input_errors(tmp_path: Path, serve: str, message: str) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(f"big:\n  model: big\n  serve: {serve}\n")
    with pytest.raises(InputError, match=message) as info:
        load_models_file(path)
    assert "models.yaml" in str(info.value) and "'big'" in str(info.value) and "\n" not in str(info.value)
    assert "field serve" in str(info.value)  # an InputError: exit code 2


def test_the_visible_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for value, ids in [("0,1,2,3", (0, 1, 2, 3)), ("3, 1", (3, 1)), ("", ()), ("-1", ()), ("2,-1,3", (2,))]:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
        assert visible_gpus() == VisibleGpus(ids, f"CUDA_VISIBLE_DEVICES={value}")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-5e0a0b2c")
    with pytest.raises(JuristError, match="names GPU 'GPU-5e0a0b2c': jurist places servers by GPU index"):
        visible_gpus()
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    assert visible_gpus().ids == () and "no nvidia-smi" in visible_gpus().source
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        '#!/bin/sh\n[ "$1 $2" = "--query-gpu=index --format=csv,noheader" ] && printf "0\\n1\\n"\n'
    )
    smi.chmod(0o755)
    assert visible_gpus() == VisibleGpus((0, 1), "nvidia-smi")
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver'\nexit 9\n")
    assert visible_gpus().ids == ()
    assert pick_gpus(2, VisibleGpus((0, 1, 2), "test"), busy={0}) == [1, 2]


def test_llama_cpp_takes_gpu_ids_as_given_and_ignores_a_count_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # no nvidia-smi: a CPU machine
    on_ids = ModelSpec(alias="l", model="l", serve=ServeSpec(kind="llama.cpp", model="/m.gguf", gpus=[1]))
    server = server_for(on_ids)
    assert isinstance(server, LlamaCppServer)
    assert (server.environment() or {})["CUDA_VISIBLE_DEVICES"] == "1"
    counted = ModelSpec(alias="l", model="l", serve=ServeSpec(kind="llama.cpp", model="/m.gguf", gpus=2))
    assert server_for(counted).environment() is None  # the CPU: nothing to place


def test_a_missing_vllm_names_the_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # nor beside the interpreter
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    server = server_for(vllm_spec())
    with pytest.raises(
        JuristError,
        match=r"no `vllm` executable on PATH, no importable vllm\): pip install 'jurist\[vllm\]'$",
    ):
        server.start()
    assert server.process is None


# -- failures: crash, out of memory, never ready ------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "how", "logged"),
    [
        ("crash", "exited with code 1", "is not a local folder and is not a valid model identifier"),
        ("oom", r"was killed by signal 9 \(out of memory\?\)", "CUDA out of memory"),
    ],
)
def test_a_server_that_dies_fails_fast_with_its_log_tail(
    fake_vllm: FakeVllm, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str, how: str, logged: str
) -> None:
    monkeypatch.setenv("FAKE_VLLM_MODE", mode)
    pool = ServerPool(log_dir=tmp_path / "logs")
    engine = Engine({"big": vllm_spec(gpus=1)}, max_concurrency=4, policy=FAST_RETRY, pool=pool)
    started = time.monotonic()
    results = ask(engine, "big", ["q1", "q2", "q3"])
    assert time.monotonic() - started < 10  # not the 30 s readiness timeout
    assert all(isinstance(r, JuristError) for r in results)
    message = str(results[0])
    assert message.startswith("model 'big': the vLLM server ") and logged in message
    assert re.search(how, message)
    (start,) = fake_vllm.starts()  # one start, not one per request
    assert group_gone(start["pgid"]) and not alive(start["worker"])  # the orphaned worker was stopped too
    assert logged in (tmp_path / "logs" / "big.log").read_text()


def test_a_server_that_never_gets_ready_times_out_and_is_stopped(
    fake_vllm: FakeVllm, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    server = server_for(vllm_spec(startup_timeout=2.0))
    with pytest.raises(JuristError, match=r"did not answer on http://127\.0\.0\.1:\d+/v1 within 2 s"):
        server.start()
    (start,) = fake_vllm.starts()
    assert group_gone(start["pgid"]) and not alive(start["worker"])


# -- stopping: only what jurist started ---------------------------------------------------------------------
@pytest.fixture
def unrelated_vllm(fake_vllm: FakeVllm, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another copy of the stand-in (same executable, same name), started by someone else."""
    record = tmp_path / "unrelated.jsonl"
    env = {**os.environ, "FAKE_VLLM_RECORD": str(record)}
    process = subprocess.Popen(
        ["vllm", "serve", "someone/else", "--host", "127.0.0.1", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield process
    os.killpg(process.pid, signal.SIGKILL)  # the test's own process group, by its id
    process.wait(10)


def test_stopping_the_pool_kills_its_server_and_spares_an_unrelated_vllm(
    fake_vllm: FakeVllm, unrelated_vllm: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    (other,) = read_jsonl(tmp_path / "unrelated.jsonl")
    pool = ServerPool()
    engine = Engine({"big": vllm_spec()}, max_concurrency=4, policy=FAST_RETRY, pool=pool)
    (completion,) = ask(engine, "big", ["hello"])  # aclose stops the pool
    assert completion.text == "[big-served] hello"
    (ours,) = fake_vllm.starts()
    assert group_gone(ours["pgid"]) and not alive(ours["worker"])
    assert unrelated_vllm.poll() is None and alive(other["pid"]) and alive(other["worker"])


def write_models(path: Path, **entries: str) -> Path:
    path.write_text("".join(f"{alias}:\n{body}" for alias, body in entries.items()))
    return path


def jurist_run(tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "jurist", "run", "--models-file", str(tmp_path / "m.yaml"), *extra]


def test_a_jurist_run_on_two_vllm_servers_places_them_and_stops_them(
    fake_vllm: FakeVllm, tmp_path: Path
) -> None:
    write_models(
        tmp_path / "m.yaml",
        cand="  model: cand-served\n  serve: {kind: vllm, model: org/cand, gpus: 1, n_ctx: 2048}\n",
        judge="  model: judge-good\n  serve: {kind: vllm, model: org/judge, gpus: 1}\n",
    )
    assert load_models_file(tmp_path / "m.yaml")["cand"].parallel == 256  # its slots, unless set
    result = subprocess.run(
        jurist_run(tmp_path, "--model", "cand", "--judge", "judge", "--limit", "3", "--no-progress"),
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "runs" / "starter"
    assert len(read_jsonl(run / "answers" / "cand.jsonl")) == 3
    assert len(read_jsonl(run / "judgments" / "judge" / "cand.jsonl")) == 3
    starts = {s["argv"][1]: s for s in fake_vllm.starts()}
    assert sorted(starts) == ["org/cand", "org/judge"]
    assert sorted(s["cuda_visible_devices"] for s in starts.values()) == ["0", "1"]  # one GPU each
    assert "serving org/cand as cand-served" in (run / "logs" / "cand.log").read_text()
    assert "serving org/judge as judge-good" in (run / "logs" / "judge.log").read_text()
    assert all(group_gone(s["pgid"]) and not alive(s["worker"]) for s in starts.values())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_run_stops_the_servers_it_started(
    fake_vllm: FakeVllm, unrelated_vllm: subprocess.Popen[bytes], tmp_path: Path, signum: int
) -> None:
    # two requests in flight, half a second each: the 24 starter questions take ~6 s, so the signal lands
    # mid-run however late a loaded machine lets this test see the first answer (with every question in
    # flight at once, the run could end between the first answer and the check)
    write_models(
        tmp_path / "m.yaml",
        cand="  model: cand-served\n  parallel: 2\n  serve: {kind: vllm, model: org/cand}\n",
    )
    process = subprocess.Popen(
        jurist_run(tmp_path, "--model", "cand", "--inference-only", "--no-progress", "--out", "run"),
        cwd=tmp_path, env={**os.environ, "FAKE_VLLM_REPLY_DELAY": "0.5"},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    answers = tmp_path / "run" / "answers" / "cand.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (answers.exists() and answers.stat().st_size):
        time.sleep(0.05)
    (start,) = fake_vllm.starts()
    assert process.poll() is None, "the run ended before the signal could be sent"
    assert alive(start["pid"])
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert group_gone(start["pgid"]) and not alive(start["worker"])
    assert unrelated_vllm.poll() is None  # the other copy of `vllm serve` lives on


# -- prompts that do not fit the served context --------------------------------------------------------------
def test_a_prompt_beyond_the_served_context_fails_its_item_without_retries(fake_vllm: FakeVllm) -> None:
    def engine() -> Engine:
        return Engine({"big": vllm_spec(n_ctx=64)}, max_concurrency=4, policy=FAST_RETRY, pool=ServerPool())

    first = engine()
    fits, overflow = ask(first, "big", ["hello", "x" * 400])  # the stand-in counts 4 characters a token
    (no_room,) = ask(engine(), "big", ["a" * 200], max_tokens=40)  # 50 + 40 > 64
    assert fits.text == "[big-served] hello"
    assert isinstance(overflow, RequestFailed) and overflow.kind == "context_length"
    assert overflow.attempts == 1 and overflow.status == 400
    assert str(overflow).startswith(
        "the prompt does not fit the model's context (64 tokens served): HTTP 400: "
    )
    assert "maximum context length is 64 tokens. However, your request has 100 input tokens" in str(overflow)
    assert isinstance(no_room, RequestFailed) and no_room.kind == "context_length"
    assert "'max_tokens' or 'max_completion_tokens' is too large: 40" in str(no_room)
    assert first.stats.retries == 0 and first.stats.failures == 1


def test_a_run_records_prompts_that_do_not_fit_as_failures_of_their_items(
    fake_vllm: FakeVllm, tmp_path: Path
) -> None:
    write_models(
        tmp_path / "m.yaml", cand="  model: cand\n  serve: {kind: vllm, model: org/cand, n_ctx: 30}\n"
    )
    result = subprocess.run(
        jurist_run(tmp_path, "--model", "cand", "--inference-only", "--no-progress", "--out", "run"),
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr  # incomplete, not crashed
    failures = read_jsonl(tmp_path / "run" / "failures.jsonl")
    answers = read_jsonl(tmp_path / "run" / "answers" / "cand.jsonl")
    assert failures and answers  # the long prompts failed, the short ones were answered
    assert {f["kind"] for f in failures} == {"context_length"} and all(f["attempts"] == 1 for f in failures)
    assert all("(30 tokens served)" in f["error"] for f in failures)


# -- slots: the default concurrency of a served model -------------------------------------------------------
def test_slots_are_the_default_parallel_of_a_served_model(tmp_path: Path) -> None:
    assert slots(vllm_spec()) == 256
    assert slots(vllm_spec(args=["--max-num-seqs", "64"])) == 64
    assert slots(vllm_spec(args=["--max-num-seqs=32"])) == 32
    llama = ModelSpec(alias="l", model="l", serve=ServeSpec(kind="llama.cpp", model="/m.gguf"))
    assert slots(llama) == 1 and llama.parallel == 1
    path = write_models(
        tmp_path / "m.yaml",
        v="  model: v\n  serve: {kind: vllm, model: org/v, args: [--max-num-seqs, '48']}\n",
        pinned="  model: p\n  parallel: 3\n  serve: {kind: vllm, model: org/p}\n",
        gguf="  model: g\n  serve: {kind: llama.cpp, model: g.gguf}\n",
        remote="  model: r\n  endpoints: [{api_base: 'http://127.0.0.1:1/v1', api_key: k}]\n",
    )
    specs = load_models_file(path)
    assert {alias: spec.parallel for alias, spec in specs.items()} == {
        "v": 48,
        "pinned": 3,
        "gguf": 1,
        "remote": 8,
    }
    assert specs["v"].serve is not None and specs["v"].serve.model == "org/v"  # a hub id stays as given
    (tmp_path / "ckpt").mkdir()
    local = write_models(tmp_path / "n.yaml", c="  model: c\n  serve: {kind: vllm, model: ckpt}\n")
    assert load_models_file(local)["c"].serve.model == str(tmp_path / "ckpt")  # type: ignore[union-attr]


# -- the same with the real embedded llama.cpp server (slow) -------------------------------------------------
@pytest.mark.slow
def test_the_embedded_llama_cpp_server_says_its_context_and_refuses_a_longer_prompt(tmp_path: Path) -> None:
    from jurist.engine.local.embedded import EMBEDDED_ALIAS, embedded_model_spec

    spec = embedded_model_spec()
    assert spec.serve is not None
    unset = spec.model_copy(update={"serve": spec.serve.model_copy(update={"n_ctx": None})})
    pool = ServerPool(log_dir=tmp_path / "logs")
    engine = Engine({EMBEDDED_ALIAS: unset}, max_concurrency=2, policy=FAST_RETRY, pool=pool)
    fits, overflow = ask(engine, EMBEDDED_ALIAS, ["Say hello.", "word " * 3000], max_tokens=8)
    assert pool.context_length(EMBEDDED_ALIAS) == 2048  # llama-cpp-python's own default, read from its log
    assert fits.text.strip()
    assert (
        isinstance(overflow, RequestFailed) and overflow.kind == "context_length" and overflow.attempts == 1
    )
    assert str(overflow).startswith(
        "the prompt does not fit the model's context (2048 tokens served): HTTP 400"
    )
    assert re.search(
        r"maximum context length is 2048 tokens\. However, you requested \d+ tokens", str(overflow)
    )
