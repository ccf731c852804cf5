"""``jurist sweep --gate``: the policy checked on every checkpoint of a real sweep (stand-in vLLM, the mock
judge), gate.json beside sweep.json, and exit 4 exactly when a checkpoint's score is below the threshold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurist.decide import gate_directories
from jurist.sweep.launch import run_sweep
from test_sweep import CountingServers, checkpoint_dirs, sweep_plan, use_fake_vllm


def test_a_sweep_gate_fails_exactly_when_a_checkpoint_is_below_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    use_fake_vllm(tmp_path, monkeypatch)
    judge = mock_server()
    checkpoint_dirs(tmp_path / "run", [100, 200])
    plan = sweep_plan(tmp_path, judge.base_url, gpus="0,")
    assert run_sweep(plan, server_factory=CountingServers()).exit_code == 0
    # Two of the three rule prompts pass (200/3 points) for every checkpoint.
    loose, strict = tmp_path / "loose.yaml", tmp_path / "strict.yaml"
    loose.write_text("rules:\n  - task: ifeval\n    min_score: 60\n")
    strict.write_text("rules:\n  - task: ifeval\n    min_score: 70\n")
    assert gate_directories(loose, [plan.out], 0) == 0
    assert gate_directories(strict, [plan.out], 0) == 4
    saved = json.loads((plan.out / "gate.json").read_text())
    assert saved["passed"] is False
    assert [(Path(r["run"]).name, r["passed"]) for r in saved["rules"]] == [
        ("step_100", False),
        ("step_200", False),
    ]
    assert gate_directories(strict, [plan.out], 1) == 1  # a sweep that already failed keeps its own code


def test_an_adaptive_sweep_stops_every_checkpoint_at_the_first_round_that_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_server: Any
) -> None:
    from jurist.decide import AdaptiveSettings, run_adaptive_sweep

    use_fake_vllm(tmp_path, monkeypatch)
    judge = mock_server()
    checkpoint_dirs(tmp_path / "run", [100, 200])
    plan = sweep_plan(tmp_path, judge.base_url, gpus="0,", limit=None, samples=1)
    rounds: list[dict[str, int]] = []

    def sweep(round_plan: Any) -> Any:
        rounds.append(dict(round_plan.limits))
        return run_sweep(round_plan, server_factory=CountingServers(), plots=False)

    # A 100-point interval is always narrow enough: one round of 2 questions a task, then stop.
    rule = AdaptiveSettings(target_ci=100.0, round_size=2, seed=5)
    assert run_adaptive_sweep(plan, rule, sweep).exit_code == 0
    assert rounds == [{"ifeval": 2, "starter": 2}]
    record = json.loads((plan.out / "adaptive.json").read_text())
    assert set(record["runs"]) == {f"step_{s}/{t}" for s in (100, 200) for t in ("ifeval", "starter")}
    assert all(run["stop"] and run["n"] == 2 for run in record["runs"].values())
    assert (
        record["judge_calls"]["used"] == judge.stats.requests == 2 * 2 * 2
    )  # checkpoints x questions x games
    states = json.loads((plan.out / "sweep.json").read_text())["checkpoints"]
    assert [c["status"] for c in states] == ["complete", "complete"]
