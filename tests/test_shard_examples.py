"""The scale-out examples run as written: ``examples/slurm-array.sh`` as array tasks (the variables Slurm
sets, one process each) and the Kubernetes indexed Job's command as pods (``JOB_COMPLETION_INDEX``), each
ending in ``jurist merge``, against the mock server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from conftest import write_models_file

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def setup(tmp_path: Path, mock_server: Any) -> dict[str, str]:
    server = mock_server()
    write_models_file(
        tmp_path / "models.yaml", server.base_url, {a: {} for a in ("strong", "judge-good", "base")}
    )
    lines = [{"uid": f"q{i}", "prompt": f"prompt {i}"} for i in range(6)]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    bin_dir = str(Path(sys.executable).parent)  # the environment's own jurist command
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_the_slurm_array_script_runs_each_task_and_the_last_one_merges(
    tmp_path: Path, mock_server: Any
) -> None:
    env = setup(tmp_path, mock_server)
    env |= {
        "BENCH": "q.jsonl", "MODEL": "strong", "JUDGE": "judge-good",
        "JURIST_ARGS": "--models-file models.yaml --baseline base --no-judge-card --no-cache",
        "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3",
    }  # fmt: skip
    for task in ("1", "2", "3"):  # --array=1-3: index = task - min
        done = subprocess.run(
            ["bash", str(EXAMPLES / "slurm-array.sh")], cwd=tmp_path,
            env={**env, "SLURM_ARRAY_TASK_ID": task}, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"shard {int(task) - 1}/3 (SLURM_ARRAY_TASK_ID={task} - SLURM_ARRAY_TASK_MIN=1)" in done.stderr
    merged = json.loads((tmp_path / "runs" / "q" / "merged" / "run.json").read_text())
    assert merged["merge"]["complete"] is True and [s["index"] for s in merged["merged_from"]] == [0, 1, 2]


def test_the_kubernetes_indexed_job_command_runs_each_pod_and_the_merge_job(
    tmp_path: Path, mock_server: Any
) -> None:
    env = setup(tmp_path, mock_server)
    jobs = list(yaml.safe_load_all((EXAMPLES / "k8s-indexed-job.yaml").read_text()))
    work, merge = jobs
    assert work["spec"]["completionMode"] == "Indexed"
    count = work["spec"]["completions"]

    def command(job: dict[str, Any]) -> str:
        text: str = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
        return text  # the image has jurist installed; here, the environment running the tests does

    extra = " --models-file models.yaml --baseline base --judge judge-good --no-judge-card --no-cache"
    pod = command(work).replace("--bench ifeval", "--bench q.jsonl").replace("vllm/my-model", "strong")
    pod = pod.replace('--base-url "$MODEL_URL"', "") + extra
    for index in range(count):
        pod_env = {**env, "JOB_COMPLETION_INDEX": str(index)}
        done = subprocess.run(["bash", "-c", pod], cwd=tmp_path, env=pod_env,
                              capture_output=True, text=True, timeout=180)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"shard {index}/{count} (JOB_COMPLETION_INDEX={index})" in done.stderr
    for shard in (
        tmp_path / "runs" / "ifeval" / "shards"
    ).iterdir():  # the pods wrote where the manifest says
        assert shard.name.endswith(f"-of-{count}")
    joined = subprocess.run(["bash", "-c", command(merge)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=180)  # fmt: skip
    assert joined.returncode == 0, joined.stderr
    run_json = json.loads((tmp_path / "runs" / "ifeval" / "merged" / "run.json").read_text())
    assert run_json["merge"]["complete"] is True and run_json["n_questions"] == 6
