"""``jurist sweep --shard I/N`` / ``--shards N``: a sweep's checkpoints dealt over separate processes
(stand-in vLLM servers, as in test_sweep.py), joined by ``jurist merge`` into the sweep one process
would have written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from test_sweep import _sweep_command, checkpoint_dirs, use_fake_vllm


def _results(path: Path) -> list[tuple[Any, ...]]:
    document = json.loads((path / "sweep.json").read_text())
    return sorted(
        (r["checkpoint"], r["task"], r["judge"], r["metric"], r["value"]) for r in document["results"]
    )


def test_sweep_shards_merge_into_the_whole_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    use_fake_vllm(tmp_path, monkeypatch)
    judge = mock_server()
    checkpoint_dirs(tmp_path / "run", [100, 200, 300])
    command = _sweep_command(tmp_path, judge.base_url, "--gpus", "0,", "--no-cache")
    whole = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    (tmp_path / "whole").mkdir()
    os.replace(tmp_path / "sweep" / "sweep.json", tmp_path / "whole" / "sweep.json")
    slurm = {**os.environ, "SLURM_ARRAY_TASK_COUNT": "2"}
    for index in (0, 1):
        part = subprocess.run([*command, "--shards", "2"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300, env={**slurm, "SLURM_ARRAY_TASK_ID": str(index)})  # fmt: skip
        assert part.returncode == 0, part.stderr
        held = "2" if index == 0 else "1"  # step_100 and step_300 to shard 0, step_200 to shard 1
        assert f"shard {index}/2 (SLURM_ARRAY_TASK_ID={index}): {held} of 3 checkpoints" in part.stderr
    shards = sorted(str(p) for p in (tmp_path / "sweep" / "shards").iterdir())
    merged = subprocess.run([*command[:3], "merge", *shards, "--out", str(tmp_path / "merged")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert merged.returncode == 0, merged.stderr
    assert _results(tmp_path / "merged") == _results(tmp_path / "whole")
    document = json.loads((tmp_path / "merged" / "sweep.json").read_text())
    assert [c["name"] for c in document["checkpoints"]] == ["step_100", "step_200", "step_300"]
    assert all(
        (tmp_path / "merged" / name / "starter" / "run.json").is_file() for name in ("step_100", "step_200")
    )
    only_one = subprocess.run([*command[:3], "merge", shards[0], "--out", str(tmp_path / "m1")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert only_one.returncode == 1
    assert "missing 1 checkpoint(s) of shard 1 (its shard was not given): step_200" in only_one.stderr
