"""``jurist run --ray ADDRESS --shards N``: each shard a Ray task, resumed after its worker dies, merged into
the run one process would have made. Slow: a Ray instance takes seconds to start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file

pytest.importorskip("ray")


@pytest.mark.slow
def test_ray_shards_survive_a_dead_worker_and_merge_into_the_single_run(
    tmp_path: Path, mock_server: Any
) -> None:
    """Two shards as tasks of a local Ray instance; one task's worker is killed (kill -9) after a save:
    Ray runs the task again, which resumes from the saved directory; the merge equals one process's run."""
    server = mock_server()
    models = {a: {"parallel": 1} for a in ("strong", "judge-good", "base")}
    write_models_file(tmp_path / "models.yaml", server.base_url, models)
    lines = [{"uid": f"q{i:02d}", "prompt": f"prompt {i}"} for i in range(16)]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = [sys.executable, "-m", "jurist", "run", "--bench", str(tmp_path / "q.jsonl"), "--models-file",
           str(tmp_path / "models.yaml"), "--model", "strong", "--judge", "judge-good", "--baseline", "base",
           "--no-progress", "--no-cache", "--no-judge-card", "--max-concurrency", "1"]  # fmt: skip
    driver = subprocess.Popen([*run, "--ray", "local", "--shards", "2", "--out", str(tmp_path / "ray")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    out, err = driver.communicate(timeout=300)
    assert driver.returncode == 0, err
    assert "2 shard(s) queued on Ray" in err and "shard 1: back from" in err
    with_ray = server.stats.requests
    single = subprocess.run(
        [*run, "--out", str(tmp_path / "single")], capture_output=True, text=True, timeout=300
    )
    assert single.returncode == 0, single.stderr
    assert server.stats.requests - with_ray == with_ray  # the shards sent what one process sends
    shown = [
        subprocess.run([sys.executable, "-m", "jurist", "show", str(tmp_path / name), "--format", "json"],
                       capture_output=True, text=True, timeout=120).stdout
        for name in ("ray", "single")
    ]  # fmt: skip
    assert json.loads(shown[0]) == json.loads(shown[1])
    assert json.loads((tmp_path / "ray" / "run.json").read_text())["merge"]["complete"] is True
