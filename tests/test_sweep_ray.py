"""``jurist sweep --ray`` on a local Ray instance: each checkpoint's generation is a Ray task that asks for
the GPUs its server needs (``ray.init(num_gpus=2)`` declares two pretend GPUs; Ray hands each task one as
its CUDA_VISIBLE_DEVICES), starts the server on its node (the stand-in ``fake_vllm/vllm``), writes into a
node-local directory and sends the artifacts back; the driver judges. With ``--watch`` checkpoints go to
Ray as training writes them. The real model's Ray sweep is slow.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import SHARED_DATA
from jurist.errors import JuristError
from jurist.run.budget import ledger_of_run, read_run_json
from jurist.store.jsonl import read_jsonl, rewrite_jsonl_atomic
from jurist.store.lock import RunDirLock
from jurist.sweep.checkpoints import Checkpoint
from jurist.sweep.launch import run_sweep
from jurist.sweep.ray_backend import (
    gpus_per_checkpoint,
    import_ray,
    node_gpus,
    pack,
    placement_problem,
    ray_generation,
    unpack,
)
from jurist.sweep.watch import CheckpointWatcher, WatchRules
from test_sweep import (
    FAKE_VLLM_DIR,
    checkpoint_dirs,
    gguf_run,
    questions_missing,
    requests_per_checkpoint,
    served_name,
    starts,
    sweep_plan,
)
from test_sweep import _wait_for as wait_for
from test_sweep_watch import checkpoint as written_checkpoint

ray = pytest.importorskip("ray")


def test_archives_carry_run_directories_both_ways(tmp_path: Path) -> None:
    source = tmp_path / "node" / "step_1"
    (source / "ifeval" / "answers").mkdir(parents=True)
    (source / "ifeval" / "answers" / "step_1.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    (source / "ifeval" / "run.json").write_text("{}")
    (source / "ifeval" / ".lock").write_text("pid")
    driver = tmp_path / "driver" / "step_1"
    (driver / "ifeval" / "answers").mkdir(parents=True)
    (driver / "ifeval" / "answers" / "step_1.jsonl").write_text('{"a": 1}\n')
    (driver / "ifeval" / ".lock").write_text("")
    (driver / "sweep.log").write_text("kept\n")
    data = pack(source)
    assert data is not None and pack(tmp_path / "nowhere") is None
    unpack(data, driver)
    assert (driver / "ifeval" / "answers" / "step_1.jsonl").read_text() == '{"a": 1}\n{"a": 2}\n'
    assert (driver / "ifeval" / "run.json").is_file() and (driver / "sweep.log").read_text() == "kept\n"
    assert (driver / "ifeval" / ".lock").read_text() == ""  # a lock never travels
    assert not [p for p in driver.parent.iterdir() if p.name.startswith(".incoming-")]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(JuristError, match="unexpected archive member"):
        unpack(buffer.getvalue(), driver)
    assert not (driver.parent / "escape.txt").exists()


def test_a_checkpoint_asks_ray_for_its_servers_gpus(tmp_path: Path, mock_server: Any) -> None:
    run = checkpoint_dirs(tmp_path / "run", [1])
    (run / "step_2.gguf").touch()
    plan = sweep_plan(tmp_path, mock_server().base_url, tasks="ifeval", judges=[], ray="")
    folder, gguf = plan.checkpoints
    assert gpus_per_checkpoint(plan, folder) == 1 and gpus_per_checkpoint(plan, gguf) == 0
    wide = sweep_plan(tmp_path, mock_server().base_url, tasks="ifeval", judges=[], ray="", tensor_parallel=2)
    assert gpus_per_checkpoint(wide, wide.checkpoints[0]) == 2


def test_without_ray_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(JuristError, match=r"pip install 'jurist\[ray\]'"):
        import_ray()


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local Ray instance with 2 CPUs and 2 pretend GPUs, whose workers find the stand-in vLLM on PATH
    and record its starts; yields the record file."""
    record = tmp_path_factory.mktemp("ray") / "vllm-starts.jsonl"
    path = f"{FAKE_VLLM_DIR}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {"PATH": path, "FAKE_VLLM_RECORD": str(record)}
    ray.init(
        num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env}
    )
    try:
        yield record
    finally:
        ray.shutdown()


def _generated(out: Path, name: str, task: str) -> int:
    """Generate requests the run directory's ledger has counted, over every run in it."""
    ledger = ledger_of_run(read_run_json(out / name / task)) or {}
    return sum(int(r["requests"]) for r in ledger.get("rows", []) if r["phase"] == "generate")


def test_a_sweep_through_ray_places_each_checkpoint_and_resumes_from_the_driver(
    tmp_path: Path, mock_server: Any, local_ray: Path
) -> None:
    judge = mock_server()
    run = checkpoint_dirs(tmp_path / "run", [100, 200, 300])
    listing = ",".join(str(run / name) for name in ("step_100", "step_200", "step_300", "step_400.gguf"))
    plan = sweep_plan(tmp_path, judge.base_url, checkpoints=listing, ray="", cache=False)
    result = run_sweep(plan, ray_address="", plots=False)
    assert result.exit_code == 1  # step_400 has no weights
    out = plan.out
    doc = json.loads((out / "sweep.json").read_text())
    states = {c["name"]: (c["status"], c["error"]) for c in doc["checkpoints"]}
    assert [states[f"step_{n}"] for n in (100, 200, 300)] == [("complete", None)] * 3
    assert states["step_400"][0] == "failed" and "does not exist" in str(states["step_400"][1])
    mine = [s for s in starts(local_ray) if str(tmp_path) in " ".join(s["argv"])]
    assert sorted(served_name(s) for s in mine) == ["step_100", "step_200", "step_300"]
    assert {s["cuda_visible_devices"] for s in mine} <= {"0", "1"}  # the GPU Ray gave each task
    for n in (100, 200, 300):  # the driver's directory holds what the tasks wrote on their node
        for task, answers in (("ifeval", 6), ("starter", 6)):
            assert len(read_jsonl(out / f"step_{n}" / task / "answers" / f"step_{n}.jsonl")) == answers
            assert json.loads((out / f"step_{n}" / task / "run.json").read_text())["status"] == "finished"
        assert (out / f"step_{n}" / "logs" / f"step_{n}.log").is_file()
        assert (
            sum(_generated(out, f"step_{n}", task) for task in ("ifeval", "starter"))
            == requests_per_checkpoint()
        )
    assert {(r["checkpoint"], r["task"]) for r in doc["results"]} == {
        (f"step_{n}", task) for n in (100, 200, 300) for task in ("ifeval", "starter")
    }
    assert judge.stats.requests == 3 * 3 * 2 * 2  # judged on the driver

    answers = out / "step_200" / "ifeval" / "answers" / "step_200.jsonl"
    rewrite_jsonl_atomic(answers, read_jsonl(answers)[:3])  # a partial run directory
    missing = questions_missing(out, "step_200")
    before = _generated(out, "step_200", "ifeval")
    again = run_sweep(plan, ray_address="", plots=False)
    assert again.exit_code == 1
    assert _generated(out, "step_200", "ifeval") - before == missing  # only what the driver lacked
    assert len(read_jsonl(answers)) == 6
    assert len([s for s in starts(local_ray) if str(tmp_path) in " ".join(s["argv"])]) == 4
    assert judge.stats.requests == 36  # the judgments were all there


def test_the_placement_check_reads_each_nodes_gpus() -> None:
    nodes = [
        {"Alive": True, "Resources": {"CPU": 8.0, "GPU": 2.0}},
        {"Alive": False, "Resources": {"CPU": 8.0, "GPU": 8.0}},  # a dead node places nothing
        {"Alive": True, "Resources": {"CPU": 4.0}},
    ]
    assert node_gpus(nodes) == [2.0, 0.0]
    assert placement_problem(0, [0.0]) is None  # a llama.cpp checkpoint runs on a CPU
    assert placement_problem(2, node_gpus(nodes)) is None
    wide = placement_problem(4, node_gpus(nodes))  # 2 + 2 GPUs on two nodes cannot hold one server of 4
    assert wide is not None and "at most 2 GPU(s) on one node" in wide and "needs 4" in wide
    none = placement_problem(1, [0.0, 0.0])
    assert none is not None and none.startswith("the Ray cluster has no GPU (2 node(s))")


def test_a_checkpoint_no_node_can_hold_fails_at_once_with_the_reason(
    tmp_path: Path, mock_server: Any, local_ray: Path
) -> None:
    """Ray would queue a task asking for more GPUs than any node has for ever: the sweep says why."""
    checkpoint_dirs(tmp_path / "run", [1])
    plan = sweep_plan(tmp_path, mock_server().base_url, tasks="ifeval", judges=[], ray="", tensor_parallel=4)
    result = run_sweep(plan, ray_address="", plots=False)
    assert result.exit_code == 1
    (state,) = json.loads((plan.out / "sweep.json").read_text())["checkpoints"]
    assert state["status"] == "failed" and "at most 2 GPU(s) on one node" in state["error"]
    assert not [s for s in starts(local_ray) if str(tmp_path) in " ".join(s["argv"])]  # nothing started


def test_a_watched_sweep_through_ray_takes_each_checkpoint_as_training_writes_it(
    tmp_path: Path, mock_server: Any, local_ray: Path
) -> None:
    """``--watch --ray``: step_200 is written while step_100's task runs on Ray; each is evaluated once,
    ``--until-step`` ends the sweep, and a rerun evaluates only the checkpoint added since."""
    judge = mock_server()
    run, stop_file = tmp_path / "run", tmp_path / "STOP"
    written_checkpoint(run, 100)
    plan = sweep_plan(tmp_path, judge.base_url, tasks="ifeval", judges=[], ray="", watch=True, cache=False)

    def mine() -> list[str]:
        return [served_name(s) for s in starts(local_ray) if str(tmp_path) in " ".join(s["argv"])]

    problems: list[BaseException] = []

    def train() -> None:  # the next checkpoint, written once the first one's server is up on Ray
        try:
            wait_for(lambda: "step_100" in mine())
            written_checkpoint(run, 200)
        except BaseException as exc:  # noqa: BLE001 - told to the test; the stop file ends the sweep
            problems.append(exc)
            stop_file.write_text("")

    def watcher(until: int) -> CheckpointWatcher:
        return CheckpointWatcher(WatchRules(run, 2.0, until_step=until, stop_file=stop_file, poll_s=0.1))

    first = watcher(200)
    training = threading.Thread(target=train)
    training.start()
    try:
        result = run_sweep(plan, ray_address="", plots=False, watcher=first)
    finally:
        training.join()
    assert not problems and result.exit_code == 0
    assert first.stop_reason == "--until-step 200 reached (step_200)"
    assert mine() == ["step_100", "step_200"]  # each evaluated once
    doc = json.loads((plan.out / "sweep.json").read_text())
    entries = {c["name"]: c for c in doc["checkpoints"]}
    assert [(name, c["status"]) for name, c in entries.items()] == [
        ("step_100", "complete"), ("step_200", "complete"),
    ]  # fmt: skip
    for entry in entries.values():  # the task's first request, on the node, after the watcher found it
        assert entry["ready_at"] and entry["ready_to_first_request_s"] >= 0
        assert entry["served_by"] == "cold start"
    assert {(r["checkpoint"], r["step"]) for r in doc["results"]} == {("step_100", 100), ("step_200", 200)}
    for n in (100, 200):  # what the tasks wrote on their node is in the driver's directory
        assert len(read_jsonl(plan.out / f"step_{n}" / "ifeval" / "answers" / f"step_{n}.jsonl")) == 6

    written_checkpoint(run, 300)
    written_checkpoint(run, 400)  # past --until-step 300: not evaluated
    again = run_sweep(plan, ray_address="", plots=False, watcher=watcher(300))
    assert again.exit_code == 0
    assert mine() == ["step_100", "step_200", "step_300"]  # only what was added since
    doc = json.loads((plan.out / "sweep.json").read_text())
    assert [(c["name"], c["status"]) for c in doc["checkpoints"]] == [
        ("step_100", "complete"), ("step_200", "complete"), ("step_300", "complete"),
    ]  # fmt: skip
    assert {r["step"] for r in doc["results"]} == {100, 200, 300}
    assert not (plan.out / "step_400").exists()


def test_a_cancelled_watched_ray_sweep_cancels_its_task_and_lets_go_of_the_run_directory(
    tmp_path: Path, mock_server: Any, local_ray: Path
) -> None:
    """Ctrl-C while a checkpoint's task is on Ray and the watcher waits for the next one: the task is
    cancelled (its server, if it had started, stopped), nothing is reported as generated, the lock is
    released."""
    run = checkpoint_dirs(tmp_path / "run", [100])
    plan = sweep_plan(tmp_path, mock_server().base_url, tasks="ifeval", judges=[], ray="", cache=False)
    (checkpoint,) = plan.checkpoints
    outcomes: list[Any] = []

    def locked() -> bool:
        lock = RunDirLock(plan.run_dir(checkpoint, "ifeval"))
        try:
            lock.acquire()
        except JuristError:
            return True
        lock.release()
        return False

    async def cancelled_sweep() -> bool:
        submitted = asyncio.Event()

        async def training() -> AsyncIterator[Checkpoint]:
            yield checkpoint
            submitted.set()  # asked for the next one: the first is on Ray
            await asyncio.Event().wait()  # training writes nothing more

        console = Console(file=io.StringIO())
        generation = asyncio.ensure_future(
            ray_generation(plan, "", lambda *a: outcomes.append(a), console, checkpoints=training())
        )
        await submitted.wait()
        held = locked()
        generation.cancel()
        with pytest.raises(asyncio.CancelledError):
            await generation
        return held

    assert asyncio.run(cancelled_sweep()) and not locked() and outcomes == []
    for start in starts(local_ray):
        if str(run) in " ".join(start["argv"]):
            with pytest.raises(ProcessLookupError):
                os.kill(start["pid"], 0)


@pytest.mark.slow
def test_the_real_sweep_through_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``jurist sweep --ray`` with the embedded model under three step names: a new local Ray instance
    runs each checkpoint's llama.cpp server in a task; the driver gets the run directories and judges."""
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    gguf_run(tmp_path / "run")
    out = tmp_path / "sweep"
    command = [
        sys.executable, "-m", "jurist", "sweep", "--checkpoints", str(tmp_path / "run"),
        "--tasks", "ifeval,starter", "--limit", "1", "--samples", "2", "--out", str(out),
        "--no-progress", "--ray",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads((out / "sweep.json").read_text())
    names = [f"step_{n}" for n in (100, 200, 300)]
    assert [(c["name"], c["status"]) for c in doc["checkpoints"]] == [(n, "complete") for n in names]
    assert doc["judges"] == ["smollm2-135m"]
    assert {(r["checkpoint"], r["task"]) for r in doc["results"]} == {
        (n, t) for n in names for t in ("ifeval", "starter")
    }
    for name in names:  # what each Ray task wrote on its node is in the driver's directory
        for task in ("ifeval", "starter"):
            assert len(read_jsonl(out / name / task / "answers" / f"{name}.jsonl")) == 2
        log = (out / name / "logs" / f"{name}.log").read_text(errors="replace")
        assert log.count('"POST /v1/chat/completions HTTP/1.1" 200') == 4  # llama.cpp drops n: one each
    assert "queued on Ray (CPU)" in done.stderr and "answers back from" in done.stderr
