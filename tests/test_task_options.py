"""Per-task options of ``jurist run --tasks``: each task its own judge, baseline, samples and limit, and
nothing silently dropped (an option a benchmark does not take is a one-line error, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, run_config, write_models_file
from jurist.benchmarks.base import Benchmark, Question
from jurist.errors import JuristError
from jurist.run.config import RunResult
from jurist.run.task_options import TaskFlags, fit_to_benchmarks, split_per_task, task_settings
from jurist.run.tasks import summary_rows
from test_cli import jurist

TASKS = ["ifeval", "healthbench", "arena-hard-v2.0"]


def _bench(name: str, kind: str | None, candidates: tuple[str, ...] = ()) -> Benchmark:
    return Benchmark(
        name=name,
        questions=[Question(uid="q", prompt="p")],
        judge_kind=kind,  # type: ignore[arg-type]  # the registry's names, as the benchmarks give them
        candidates=candidates,
        baseline="base" if kind == "pairwise" else None,
    )


BENCHES = {
    "ifeval": _bench("ifeval", None),
    "healthbench": _bench("healthbench", "rubric"),
    "arena-hard-v2.0": _bench("arena-hard-v2.0", "pairwise"),
}


def test_bare_values_are_for_every_task_and_task_values_replace_them() -> None:
    assert split_per_task("--judge", ["a,b", "healthbench=G", " healthbench = H "], TASKS) == (
        ["a", "b"],
        {"healthbench": ["G", "H"]},
    )
    flags = TaskFlags(
        judges=["J", "healthbench=G"],
        baselines=["arena-hard-v2.0=B"],
        samples=["2", "ifeval=8"],
        limits=["healthbench=3"],
        bench_options={"ifeval:version": "current"},
    )
    settings = task_settings(TASKS, flags)
    assert settings["healthbench"].judges == ("G",) and settings["arena-hard-v2.0"].judges == ("J",)
    assert settings["ifeval"].judges == ("J",) and "judges" in settings["ifeval"].shared
    assert settings["arena-hard-v2.0"].baseline == "B" and settings["healthbench"].baseline is None
    assert [settings[t].samples for t in TASKS] == [8, 2, 2]
    assert [settings[t].limit for t in TASKS] == [None, 3, None]
    assert settings["ifeval"].options == {"version": "current"} and settings["healthbench"].options == {}
    assert settings["healthbench"].origins["judges"] == "--judge healthbench=G"


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (TaskFlags(judges=["nope=G"]), "--judge nope=G: 'nope' is not one of the tasks"),
        (TaskFlags(judges=["healthbench="]), "give a value after healthbench="),
        (TaskFlags(judges=["healthbench=G,H"]), "'H' names no task; give each task's values as TASK=VALUE"),
        (TaskFlags(samples=["ifeval=0"]), "--samples ifeval=0: give a whole number"),
        (TaskFlags(limits=["x"]), "--limit x: give a whole number"),
        (TaskFlags(baselines=["arena-hard-v2.0=B", "arena-hard-v2.0=C"]), "2 different values"),
        (TaskFlags(limits=["3", "4"]), "every task is given 2 different values"),
    ],
)
def test_bad_values_are_one_line_errors(flags: TaskFlags, problem: str) -> None:
    with pytest.raises(JuristError, match=problem):
        task_settings(TASKS, flags)


def test_a_shared_value_skips_the_tasks_that_do_not_take_it_and_a_named_one_is_refused() -> None:
    fitted = fit_to_benchmarks(task_settings(TASKS, TaskFlags(judges=["J"], baselines=["B"])), BENCHES)
    assert fitted["ifeval"].judges == () and fitted["healthbench"].judges == ("J",)
    assert fitted["healthbench"].baseline is None and fitted["arena-hard-v2.0"].baseline == "B"
    refused = [
        (TaskFlags(baselines=["healthbench=B"]), "--baseline healthbench=B: does not apply: healthbench"),
        (TaskFlags(judges=["ifeval=G"]), "--judge ifeval=G: does not apply: ifeval is checked by rule"),
    ]
    for flags, problem in refused:
        with pytest.raises(JuristError, match=problem):
            fit_to_benchmarks(task_settings(TASKS, flags), BENCHES)
    rubric_and_rule = {t: BENCHES[t] for t in ("ifeval", "healthbench")}
    with pytest.raises(JuristError, match="--baseline B: applies to none of the tasks"):
        fit_to_benchmarks(task_settings(list(rubric_and_rule), TaskFlags(baselines=["B"])), rubric_and_rule)
    pairs = {"judgebench": _bench("judgebench", "pairwise", candidates=("a", "b"))}
    with pytest.raises(JuristError, match="judges its own response pairs"):
        fit_to_benchmarks(task_settings(["judgebench"], TaskFlags(baselines=["judgebench=B"])), pairs)


def test_every_task_is_in_the_summary_with_why_it_has_no_score(tmp_path: Path) -> None:
    """Each task's headline is its family's (run.json's ``score_family``)."""
    for name, family in (("a", "pairwise"), ("d", "rubric")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps({"score_family": family}))
    row = {"model": "m", "score": 61.0, "ci_low": 55.0, "ci_high": 66.0}
    scored = RunResult(0, [row], 0, 4, tmp_path / "a")
    failed = RunResult(1, [], 3, 3, tmp_path / "b")
    answers_only = RunResult(0, [], 0, 2, tmp_path / "c")
    hb_row = {"model": "m", "suite": "healthbench", "score": None, "bootstrap_std": None}
    unscored = RunResult(0, [hb_row], 0, 2, tmp_path / "d")
    rows = summary_rows(
        ["a", "b", "c", "d"],
        [scored, failed, answers_only, unscored],
        ["all", "all", "inference-only", "all"],
    )
    assert [(r["task"], r["status"]) for r in rows] == [
        ("a", "done"), ("b", "incomplete"), ("c", "done"), ("d", "done"),
    ]  # fmt: skip
    assert rows[0]["reason"] is None and rows[0]["value"] == 61.0
    assert "3 request(s) failed" in rows[1]["reason"] and rows[1]["value"] is None
    assert "--inference-only" in rows[2]["reason"]
    assert rows[3]["model"] == "m" and "no answer could be scored" in rows[3]["reason"]


def test_each_task_sends_its_judge_requests_to_its_own_judge(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From outside, as a user types it: three kinds of task, a grader for HealthBench, a pairwise judge
    and a baseline model for Arena-Hard v2.0; every task reported."""
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {name: {} for name in ("M", "G", "J", "B")})
    common = ["run", "--models-file", "m.yaml", "--model", "M", "--no-progress", "--no-check"]
    args = [
        *common, "--tasks", ",".join(TASKS), "--limit", "2", "--limit", "healthbench=1",
        "--judge", "healthbench=G", "--judge", "arena-hard-v2.0=J", "--baseline", "arena-hard-v2.0=B",
        "--max-attempts", "1",
    ]  # fmt: skip
    done = jurist(*args, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: the mock's grader gives no rubric verdicts
    runs = tmp_path / "runs"
    assert sorted(p.name for p in (runs / "healthbench" / "judgments").iterdir()) == ["G"]
    assert sorted(p.name for p in (runs / "arena-hard-v2.0" / "judgments").iterdir()) == ["J"]
    assert not (runs / "ifeval" / "judgments").exists()
    asked = server.stats.requests_by_model
    assert asked["M"] == 2 + 1 + 2 and asked["B"] == 2  # answers; the baseline's for Arena-Hard alone
    assert asked["J"] == 2 * 2  # two games per Arena-Hard question, and nothing else
    graded = [b for b in server.stats.bodies if b["model"] == "G"]
    assert graded and all("rubric" in json.dumps(b["messages"]).lower() for b in graded)
    summary = json.loads((runs / "tasks_summary.json").read_text())
    assert summary["tasks"] == TASKS and {r["task"] for r in summary["rows"]} == set(TASKS)
    by_task = {r["task"]: r for r in summary["rows"]}
    assert by_task["arena-hard-v2.0"]["judge"] == "J" and by_task["healthbench"]["judge"] == "G"
    assert all(r["status"] and (r["value"] is not None or r["reason"]) for r in summary["rows"])
    assert "jurist: tasks" in done.stdout


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--bench", "healthbench", "--baseline", "X"], "--baseline does not apply to healthbench"),
        (["--bench", "ifeval", "--judge", "G"], "--judge does not apply to ifeval"),
        (["--bench", "ifeval", "--tasks", "ifeval,healthbench"], "--bench names one benchmark"),
        (["--tasks", "ifeval,healthbench", "--baseline", "B"], "applies to none of the tasks"),
        (["--tasks", "ifeval", "--samples", "healthbench=2"], "'healthbench' is not one of the tasks"),
        (["--bench", "healthbench", "--method", "bt"], "--method bt: does not apply to healthbench"),
        (["--bench", "ifeval", "--style-control", "length"], "--style-control: does not apply to ifeval"),
        (["--tasks", "ifeval,healthbench", "--method", "bt"], "--method bt: applies to none of the tasks"),
    ],
)
def test_an_option_that_does_not_apply_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], problem: str
) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    done = jurist("run", *args, "--no-progress", cwd=tmp_path)
    assert done.returncode == 2 and problem in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()  # refused before anything is written


def test_a_shared_scoring_method_goes_to_the_tasks_with_battles(tmp_path: Path, mock_server: Any) -> None:
    from conftest import FAST_RETRY
    from jurist.run.tasks import run_tasks
    from test_tasks_run import _rule_file

    server = mock_server()
    config = run_config(
        bench_options={"ifeval:file": str(_rule_file(tmp_path / "rules.jsonl", 2))},
        models_file=write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}}),
        models=["strong"],
        judges=["judge-good"],
        out=tmp_path / "runs",
        limit=2,
        method="bt",
        progress=False,
        retry=FAST_RETRY,
        check=False,
    )
    assert run_tasks(config, ["ifeval", "starter"]).exit_code == 0
    scoring = {
        task: json.loads((tmp_path / "runs" / task / "run.json").read_text())["scoring"]["method"]
        for task in ("ifeval", "starter")
    }
    assert scoring == {"ifeval": "winrate", "starter": "bt"}  # the rule task keeps its own scoring
