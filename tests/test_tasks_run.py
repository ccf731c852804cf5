"""``jurist run --tasks``: several benchmarks in one process, one limit, each in its own directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY, run_config, write_models_file
from jurist.errors import JuristError
from jurist.run.config import RunConfig
from jurist.run.tasks import headline, parse_tasks, run_tasks, task_options
from test_cli import jurist


def _rule_file(path: Path, n: int) -> Path:
    rows = [
        {
            "key": k,
            "prompt": f"question {k}, answer",
            "instruction_id_list": ["punctuation:no_comma"],
            "kwargs": [{}],
        }
        for k in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _config(tmp_path: Path, url: str, **extra: Any) -> RunConfig:
    models = write_models_file(tmp_path / "m.yaml", url, {"strong": {}, "judge-good": {}})
    questions = _rule_file(tmp_path / "rules.jsonl", 6)
    values: dict[str, Any] = {
        "bench_options": {"ifeval:file": str(questions)},
        "models_file": models,
        "models": ["strong"],
        "judges": ["judge-good"],
        "out": tmp_path / "runs",
        "progress": False,
        "retry": FAST_RETRY,
        "check": False,
        "max_concurrency": 2,
    }
    return run_config(**(values | extra))


def test_two_kinds_of_work_in_one_process_under_one_limit(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(delay=0.02)
    result = run_tasks(_config(tmp_path, server.base_url), ["ifeval", "starter"])
    assert result.exit_code == 0
    # ifeval: 6 answers; starter: 24 answers + 24 x 2 games; the reference answers ship with it.
    assert server.stats.requests == 6 + 24 + 48 == result.requests
    assert server.stats.peak_in_flight <= 2  # the one global limit holds across both tasks
    runs = tmp_path / "runs"
    assert (runs / "ifeval" / "points" / "strong.jsonl").is_file()
    assert (runs / "starter" / "battles.jsonl").is_file()
    for task in ("ifeval", "starter"):
        run_json = json.loads((runs / task / "run.json").read_text())
        assert run_json["status"] == "finished" and run_json["bench"] == task
    summary = json.loads((runs / "tasks_summary.json").read_text())
    by_task = {row["task"]: row for row in summary["rows"]}
    assert by_task.keys() == {"ifeval", "starter"}
    assert by_task["ifeval"]["metric"] == "prompt_strict" and by_task["ifeval"]["value"] == 0.0  # has commas
    assert by_task["starter"]["model"] == "strong" and by_task["starter"]["judge"] == "judge-good"
    assert by_task["starter"]["metric"] == "score" and by_task["starter"]["value"] > 50
    starter_rows = json.loads((runs / "starter" / "leaderboard.json").read_text())
    strong = next(r for r in starter_rows if r["model"] == "strong")
    assert by_task["starter"]["value"] == strong["score"]  # the same number the task's own run reports
    again = run_tasks(_config(tmp_path, server.base_url), ["ifeval", "starter"])
    assert again.exit_code == 0 and server.stats.requests == 78  # resumed: nothing sent


def test_task_options_go_to_their_task_only() -> None:
    assert task_options(
        {"ifeval:version": "current", "judgebench:split": "claude"}, ["ifeval", "judgebench"]
    ) == {
        "ifeval": {"version": "current"},
        "judgebench": {"split": "claude"},
    }
    with pytest.raises(JuristError, match="say which task"):
        task_options({"version": "current"}, ["ifeval"])
    with pytest.raises(JuristError, match="not one of --tasks"):
        task_options({"ifbench:version": "v1"}, ["ifeval"])
    assert parse_tasks(" ifeval, ifbench,ifeval ") == ["ifeval", "ifbench"]
    with pytest.raises(JuristError):
        parse_tasks(" , ")


def test_headline_reads_every_kind_of_row() -> None:
    """Each family says which field of its rows is the headline, on the scale the table shows."""
    rule = {"model": "m", "headline": "prompt_loose", "prompt_loose": 40.0, "prompt_loose_ci_low": 30.0}
    assert headline(rule, "rules") == ("prompt_loose", 40.0, 30.0, None)
    health = {"model": "m", "suite": "healthbench", "score": 0.41, "ci_low": 0.3, "ci_high": 0.5}
    assert headline(health, "rubric") == ("score", 0.41, 0.3, 0.5)
    writing = {"model": "m", "suite": "writingbench", "overall": 6.5, "overall_x10": 65.0}
    assert headline(writing | {"ci_low": 6.0, "ci_high": 7.0}, "rubric") == ("overall_x10", 65.0, 60.0, 70.0)
    assert headline({"model": "base", "score": 50.0, "baseline": True}, "pairwise") is None
    unscored = {"model": "m", "score": None, "ci_low": None, "ci_high": None}
    assert headline(unscored, "pairwise") == ("score", None, None, None)  # shown as "-", not dropped
    assert headline({"model": "m", "rating": 1010.0, "ci_low": 990.0}, "placement") == (
        "rating",
        1010.0,
        990.0,
        None,
    )
    none = {"model": "m", "suite": "writingbench", "overall": None, "overall_x10": None}
    assert headline(none, "rubric") == ("overall_x10", None, None, None)
    assert headline({"judge": "j", "overall": 71.0}, "judge-accuracy") is None  # a judge's, not a model's


def test_the_cli_runs_tasks_and_refuses_a_bare_option(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}})
    questions = _rule_file(tmp_path / "rules.jsonl", 3)
    args = ["run", "--tasks", "ifeval", "--models-file", "m.yaml", "--model", "strong", "--no-progress"]
    bare = jurist(*args, "-B", f"file={questions}", cwd=tmp_path)
    assert bare.returncode == 2 and "-B ifeval:file=" in bare.stderr.replace("TASK", "ifeval")
    assert server.stats.requests == 0
    done = jurist(*args, "-B", f"ifeval:file={questions}", "--no-check", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "jurist: tasks" in done.stdout and server.stats.requests == 3
    assert (tmp_path / "runs" / "ifeval" / "points" / "strong.jsonl").is_file()
