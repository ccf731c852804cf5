"""``jurist run --adaptive``: rounds of a seeded order against the mock server, stopped by the interval's
width or by a decision against a reference run; a later full run completes the task reusing everything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import write_models_file


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def judge_requests(run_dir: Path) -> int:
    lines = [json.loads(line) for line in (run_dir / "usage.jsonl").read_text().splitlines() if line.strip()]
    return sum(int(r.get("requests", 0)) for r in lines if r.get("phase") == "judge")


def _setup(tmp_path: Path, server: Any, n: int) -> list[str]:
    questions = tmp_path / "q.jsonl"
    lines = [json.dumps({"uid": f"u{i}", "category": "c", "prompt": f"question {i}"}) for i in range(n)]
    questions.write_text("".join(line + "\n" for line in lines))
    aliases = {name: {} for name in ("equal", "better", "baseline", "judge-p75")}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, aliases)
    return ["--bench", str(questions), "--models-file", str(models), "--baseline", "baseline",
            "--judge", "judge-p75", "--no-check", "--no-judge-card", "--no-progress",
            "--no-cache"]  # fmt: skip


def test_decide_vs_stops_once_decided_and_a_full_run_completes_from_there(
    tmp_path: Path, mock_server: Any
) -> None:
    common = _setup(tmp_path, mock_server(), 120)
    full_ref = jurist("run", *common, "--model", "equal", "--out", "equal", cwd=tmp_path)
    assert full_ref.returncode == 0, full_ref.stderr
    assert judge_requests(tmp_path / "equal") == 240  # two games a question
    adaptive = jurist(
        "run", *common, "--model", "better", "--out", "better", "--adaptive", "--decide-vs", "equal",
        "--delta", "5", "--round", "10", cwd=tmp_path,
    )  # fmt: skip
    assert adaptive.returncode == 0, adaptive.stderr
    record = json.loads((tmp_path / "better" / "adaptive.json").read_text())
    assert record["stopped"] == "rule" and record["n"] < 120 and record["population"] == 120
    (entry,) = record["results"]
    assert entry["decision"] == "better" and entry["interval"][0] > 5 and entry["n"] == record["n"]
    used = judge_requests(tmp_path / "better")
    assert used == 2 * record["n"] <= 240 / 3
    assert record["judge_calls"] == {"used": used, "full_task_estimate": 240, "saved": 240 - used}
    assert "saved" in adaptive.stderr and "guarantee" in record
    # The full task, without --adaptive: only the questions not yet judged are asked.
    rest = jurist("run", *common, "--model", "better", "--out", "better", cwd=tmp_path)
    assert rest.returncode == 0, rest.stderr
    assert judge_requests(tmp_path / "better") == 240
    compared = jurist("compare", "equal", "better", "--format", "json", cwd=tmp_path)
    assert json.loads(compared.stdout)["comparisons"][0]["decision"] == "better"


def test_target_ci_stops_when_the_interval_is_narrow_enough(tmp_path: Path, mock_server: Any) -> None:
    common = _setup(tmp_path, mock_server(), 80)
    done = jurist(
        "run", *common, "--model", "equal", "--out", "eq", "--adaptive", "--target-ci", "30", "--round", "10",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "eq" / "adaptive.json").read_text())
    (entry,) = record["results"]
    assert record["stopped"] == "rule" and entry["width"] <= 30 and record["n"] < 80
    low, high = entry["interval"]
    assert low <= 50.0 <= high  # "equal" ties every game: the truth is 50
    refused = jurist("run", *common, "--model", "equal", "--out", "x", "--adaptive", cwd=tmp_path)
    assert refused.returncode == 2 and "needs one stopping rule" in refused.stderr


def test_the_shuffled_order_nests_and_depends_only_on_the_seed_and_the_uids() -> None:
    from jurist.benchmarks.base import Question, shuffled_order, shuffled_prefix

    questions = [Question(uid=f"q{i}", prompt=f"p{i}", category="c") for i in range(50)]
    small, large = shuffled_prefix(questions, 10, 3), shuffled_prefix(questions, 30, 3)
    assert {q.uid for q in small} <= {q.uid for q in large} and len(large) == 30
    assert [q.uid for q in large] == [q.uid for q in questions if q in large]  # the file's order kept
    assert [q.uid for q in shuffled_order(questions[::-1], 3)] == [
        q.uid for q in shuffled_order(questions, 3)
    ]
    assert shuffled_order(questions, 3) != shuffled_order(questions, 4)
