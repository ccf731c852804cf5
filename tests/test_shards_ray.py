"""``jurist run --ray local --shards N``: each shard a task of a Ray instance; one task's worker is killed
(kill -9) after it saved its directory; Ray runs the task again, which resumes from what was saved; the
merged run equals one process's run. Slow: a Ray instance takes seconds to start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file

pytest.importorskip("ray")


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (read from /proc): the test kills only what its own run started."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def shard_worker(driver: int) -> int | None:
    """The Ray worker running a shard task, among the driver's own descendants (Ray titles it by task)."""
    for pid in descendants(driver):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"run_shard_remotely" in title:
            return pid
    return None


@pytest.mark.slow
def test_ray_shards_resume_after_a_dead_worker_and_merge_into_the_single_run(
    tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(delay=0.2)
    models = {a: {"parallel": 1} for a in ("strong", "judge-good", "base")}
    write_models_file(tmp_path / "models.yaml", server.base_url, models)
    lines = [{"uid": f"q{i:02d}", "prompt": f"prompt {i}"} for i in range(24)]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = [sys.executable, "-m", "jurist", "run", "--bench", str(tmp_path / "q.jsonl"), "--models-file",
           str(tmp_path / "models.yaml"), "--model", "strong", "--judge", "judge-good", "--baseline", "base",
           "--no-progress", "--no-cache", "--no-judge-card", "--max-concurrency", "1"]  # fmt: skip
    driver = subprocess.Popen([*run, "--ray", "local", "--shards", "2", "--out", str(tmp_path / "ray")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline, worker = time.monotonic() + 240, None
    while time.monotonic() < deadline and (worker is None or server.stats.requests < 6):
        worker = shard_worker(driver.pid) or worker
        time.sleep(0.2)
    assert worker is not None, "no shard task started"
    time.sleep(7)  # past one save of its directory (every 5 s)
    os.kill(worker, signal.SIGKILL)
    try:
        _, err = driver.communicate(timeout=400)
    finally:
        driver.kill()
    assert driver.returncode == 0, err
    with_ray = server.stats.requests
    single = subprocess.run([*run, "--out", str(tmp_path / "single")], capture_output=True, text=True,
                            timeout=400)  # fmt: skip
    assert single.returncode == 0, single.stderr
    alone = server.stats.requests - with_ray
    # the killed task's saved work was not asked again: what it lost is at most its last seconds
    assert alone <= with_ray < alone + 40 < 2 * alone
    shown = [
        subprocess.run([sys.executable, "-m", "jurist", "show", str(tmp_path / name), "--format", "json"],
                       capture_output=True, text=True, timeout=120).stdout
        for name in ("ray", "single")
    ]  # fmt: skip
    assert json.loads(shown[0]) == json.loads(shown[1])
    assert json.loads((tmp_path / "ray" / "run.json").read_text())["merge"]["complete"] is True


@pytest.mark.slow
def test_a_shard_that_fails_on_ray_ends_the_run_at_once_in_one_line(tmp_path: Path, mock_server: Any) -> None:
    """A shard whose model server cannot start on its node (no such weights): the driver stops at once
    with the shard and the cause, instead of waiting on it."""
    server = mock_server()
    write_models_file(tmp_path / "models.yaml", server.base_url, {"judge-good": {}, "base": {}})
    models = (tmp_path / "models.yaml").read_text()
    missing = tmp_path / "no-such-weights.gguf"
    (tmp_path / "models.yaml").write_text(
        models + f"served:\n  model: served\n  serve: {{kind: llama.cpp, model: {missing}}}\n"
    )
    (tmp_path / "q.jsonl").write_text(
        "".join(json.dumps({"uid": f"q{i}", "prompt": f"p {i}"}) + "\n" for i in range(4))
    )
    started = time.monotonic()
    failed = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--bench", str(tmp_path / "q.jsonl"), "--models-file",
         str(tmp_path / "models.yaml"), "--model", "served", "--judge", "judge-good", "--baseline", "base",
         "--no-progress", "--no-judge-card", "--ray", "local", "--shards", "2",
         "--out", str(tmp_path / "ray")],
        capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert failed.returncode == 2, failed.stderr
    error = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "failed on Ray" in error[0] and "shard" in error[0], failed.stderr
    assert time.monotonic() - started < 300
