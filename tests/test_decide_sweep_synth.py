"""Sweeps of synthetic checkpoints of known strengths (served by the stand-in vLLM), judged live by a mock
judge that follows those strengths (tests/decide_synth.py's StrengthJudge): ``jurist sweep --adaptive
--decide-vs REF`` reaches the decisions ``jurist compare`` reaches on the full sweep with at most a third
of its judge calls, each checkpoint stopping on its own; a planted regression makes ``--gate`` exit 4
exactly when it crosses the threshold; ``--decide-vs best`` races the checkpoints against the leader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import build_sweep_plan, write_models_file
from decide_synth import STRENGTH_JUDGE, StrengthJudge, synth_task, write_checkpoint
from jurist.decide import (
    CompareSettings,
    compare_sides,
    gate_directories,
    read_sides,
    run_adaptive_sweep,
    sweep_settings,
)
from jurist.errors import JuristError
from jurist.sweep import SweepPlan, run_sweep
from test_sweep import CountingServers, checkpoint_dirs, use_fake_vllm

N = 120  # questions of the task
ROUND = 10
DELTA = 5.0
# step_0 is the reference; step_100 a planted regression; step_200 and step_300 clear improvements
STRENGTHS = {"step_0": 0.0, "step_100": -6.0, "step_200": 6.0, "step_300": 7.0}


@pytest.fixture
def judge() -> Iterator[StrengthJudge]:
    server = StrengthJudge(STRENGTHS, np.random.default_rng(3).normal(0.0, 0.3, N))
    server.start()
    yield server
    server.stop()


def _plan(tmp_path: Path, judge: StrengthJudge, checkpoints: str, out: str) -> SweepPlan:
    models = write_models_file(tmp_path / "judges.yaml", judge.base_url, {STRENGTH_JUDGE: {}})
    task, baseline = synth_task(tmp_path, N)
    return build_sweep_plan(
        checkpoints=str(tmp_path / checkpoints), tasks=task, samples=1, baselines=[baseline],
        models_file=models, judges=[STRENGTH_JUDGE], out=tmp_path / out, progress=False, check=False,
        cache=False, max_attempts=2, retry_base_delay=0.01,
    )  # fmt: skip


def _sweep(plan: SweepPlan) -> Any:
    return run_sweep(plan, server_factory=CountingServers(), plots=False)


def _judge_calls(judge: StrengthJudge) -> int:
    return int(judge.stats.requests_by_model[STRENGTH_JUDGE])


def test_decide_vs_a_reference_decides_as_compare_does_with_a_third_of_the_judge_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge: StrengthJudge
) -> None:
    use_fake_vllm(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)  # the task is the question file synth.jsonl: its name is a folder's too
    checkpoint_dirs(tmp_path / "release", [0])
    checkpoint_dirs(tmp_path / "run", [100, 200, 300])
    assert _sweep(_plan(tmp_path, judge, "release", "released")).exit_code == 0
    reference = tmp_path / "released" / "step_0"
    before = _judge_calls(judge)
    assert _sweep(_plan(tmp_path, judge, "run", "full")).exit_code == 0
    full_calls = _judge_calls(judge) - before
    games = 3 * N * 2  # checkpoints x questions x games
    assert full_calls >= games  # every game, and the judge card's probes of each full run
    rows = compare_sides(read_sides([str(reference), str(tmp_path / "full")]), CompareSettings(delta=DELTA))
    expected = {Path(row["b"]).name: row["decision"] for row in rows}
    assert expected == {"step_100": "worse", "step_200": "better", "step_300": "better"}

    before = _judge_calls(judge)
    rule = sweep_settings(None, str(reference), DELTA, ROUND, 0)
    plan = _plan(tmp_path, judge, "run", "adaptive")
    rounds: list[dict[str, dict[str, int]]] = []

    def sweep(round_plan: SweepPlan) -> Any:
        rounds.append(round_plan.run_limits)
        return _sweep(round_plan)

    assert run_adaptive_sweep(plan, rule, sweep).exit_code == 0
    used = _judge_calls(judge) - before
    assert used <= games / 3
    record = json.loads((tmp_path / "adaptive" / "adaptive.json").read_text())
    runs = {key.split("/")[0]: run for key, run in record["runs"].items()}
    assert {name: run["entries"][0]["decision"] for name, run in runs.items()} == expected
    assert all(run["stopped"] == "rule" and run["population"] == N for run in runs.values())
    # Each checkpoint stops on its own: a stopped one keeps its limit while the others go on.
    for name, run in runs.items():
        assert (
            run["n"]
            == rounds[run["stopped_round"] - 1][name]["synth.jsonl"]
            == rounds[-1][name]["synth.jsonl"]
        )
    assert record["judge_calls"]["used"] == used == sum(2 * run["n"] for run in runs.values())
    for name, run in runs.items():
        calls = run["judge_calls"]
        assert calls == {"used": 2 * run["n"], "full_task_estimate": 2 * N, "saved": 2 * (N - run["n"])}
        assert record["checkpoints"][name]["judge_calls"] == calls
    # The same command again: every round's questions are judged already, so nothing is sent.
    before = _judge_calls(judge)
    assert run_adaptive_sweep(plan, rule, _sweep).exit_code == 0
    assert _judge_calls(judge) == before
    again = json.loads((tmp_path / "adaptive" / "adaptive.json").read_text())
    assert {key: run["n"] for key, run in again["runs"].items()} == {
        key: run["n"] for key, run in record["runs"].items()
    }
    sweep_doc = json.loads((tmp_path / "adaptive" / "sweep.json").read_text())
    assert [c["status"] for c in sweep_doc["checkpoints"]] == ["complete"] * 3
    assert {row["checkpoint"] for row in sweep_doc["results"]} == set(runs)

    # The gate: the planted regression's drop against the reference, just inside and just past the limit.
    drop = -next(row["difference"]["estimate"] for row in rows if row["b"].endswith("step_100"))
    for max_drop, code in ((drop + 0.5, 0), (drop - 0.5, 4)):
        policy = tmp_path / f"gate-{code}.yaml"
        policy.write_text(f"reference: {reference}\nrules:\n  - task: '*'\n    max_drop: {max_drop}\n")
        assert gate_directories(policy, [tmp_path / "full"], 0) == code
        failed = [
            r for r in json.loads((tmp_path / "full" / "gate.json").read_text())["rules"] if not r["passed"]
        ]
        assert [Path(r["run"]).name for r in failed] == (["step_100"] if code else [])


def test_decide_vs_best_stops_each_checkpoint_once_decided_against_the_leader(tmp_path: Path) -> None:
    from jurist.decide.adaptive_sweep import SweepRun, _order
    from jurist.decide.race import comparison_level, look_against_best

    difficulty = np.random.default_rng(1).normal(0.0, 0.3, 200)
    strengths = {"step_1": -5.0, "step_2": 1.0, "step_3": 1.2}  # step_1 far behind; 2 and 3 close
    runs = []
    for k, (name, strength) in enumerate(strengths.items()):
        root = write_checkpoint(tmp_path / name / "synth", name, strength, difficulty, seed=k)
        order, population = _order(root, 0) or ([], 0)
        runs.append(SweepRun(name, "synth", root, limit=40, population=population, order=order[:40]))
    rule = sweep_settings(None, None, 0.0, 40, 0)  # no rule named: a sweep races the checkpoints
    assert rule.versus_best and rule.record()["decide_vs"] == "best"
    look_against_best(runs, runs, rule, 1, len(runs))
    behind, second, first = runs
    assert behind.stopped == "rule" and behind.seen["entries"][0]["decision"] == "worse"
    assert behind.seen["leader"] in ("step_2", "step_3") and first.stopped is None and second.stopped is None
    assert comparison_level(0.95, 3) == pytest.approx(0.975)  # alpha split over the two others
    # Every question in: the close two are told apart exactly; the one behind stops, then the leader, alone.
    for run in (second, first):
        found = _order(run.run_dir, 0)
        assert found is not None
        run.order = found[0]
    look_against_best([second, first], runs, rule, 2, len(runs))
    loser, winner = sorted((second, first), key=lambda run: "estimate" in run.seen)
    assert loser.seen["entries"][0]["decision"] == "worse" and winner.seen["leader"] == winner.checkpoint
    assert loser.stopped_round == winner.stopped_round == 2
    with pytest.raises(JuristError, match="one stopping rule"):
        sweep_settings(3.0, "best", 0.0, 10, 0).check_rule()


def test_the_sweep_command_takes_best_and_refuses_two_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    from jurist.decide import AdaptiveSettings

    def jurist(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "jurist", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    shown = jurist("sweep", "--help")
    assert shown.returncode == 0 and "best" in shown.stdout
    checkpoint_dirs(tmp_path / "run", [100])
    models = write_models_file(tmp_path / "judges.yaml", "http://127.0.0.1:9/v1", {STRENGTH_JUDGE: {}})
    both = jurist(
        "sweep", "--checkpoints", "run", "--tasks", "starter", "--models-file", str(models),
        "--judge", STRENGTH_JUDGE, "--no-check", "--no-progress", "--adaptive", "--decide-vs", "best",
        "--target-ci", "3",
    )  # fmt: skip
    assert both.returncode == 2 and "one stopping rule" in both.stderr, both.stderr
    monkeypatch.chdir(tmp_path)
    single_run = AdaptiveSettings(decide_vs=Path("best"))  # jurist run has no checkpoints to race
    with pytest.raises(JuristError, match="races the checkpoints of a sweep"):
        single_run.check()
