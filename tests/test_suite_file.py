"""``--suite suite.yaml``: an evaluation protocol as a file, read strictly (file, line and field in every
error), the command line over it, and the example shipped in examples/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.registry import benchmark_names
from jurist.config import load_suite
from jurist.errors import InputError, JuristError
from jurist.run.task_options import TaskFlags, fit_to_benchmarks, task_settings
from test_cli import jurist
from test_task_options import BENCHES

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "eval-framework-suite.yaml"


def test_the_shipped_example_loads_with_eval_frameworks_samples() -> None:
    suite = load_suite(EXAMPLE)
    assert suite.name == "eval-framework"
    samples = {task: entry.samples for task, entry in suite.tasks.items()}
    assert samples == {
        "ifeval": 8, "ifbench": 8, "healthbench": 8, "writingbench": 4,
        "arena-hard-v2.0": 1, "alpaca-eval": 1,
    }  # fmt: skip
    assert set(suite.tasks) <= set(benchmark_names())
    assert suite.tasks["healthbench"].judges == ("grader",) and suite.tasks["ifeval"].judges == ()
    assert suite.tasks["ifeval"].where["samples"].endswith("line 13: tasks.ifeval.samples")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def test_every_field_and_the_defaults_are_read_with_their_lines(tmp_path: Path) -> None:
    suite = load_suite(
        _write(
            tmp_path,
            "judges: [J]\nlimit: 5\ntasks:\n  ifeval:\n  healthbench:\n    judges: G, H\n    samples: 2\n"
            "  arena-hard-v2.0:\n    baseline: B\n    options: {version: x, strict: true, n: 20}\n",
        )
    )
    assert list(suite.tasks) == ["ifeval", "healthbench", "arena-hard-v2.0"]
    assert suite.defaults.judges == ("J",) and suite.defaults.limit == 5
    assert suite.tasks["healthbench"].judges == ("G", "H") and suite.tasks["healthbench"].samples == 2
    assert suite.tasks["arena-hard-v2.0"].options == {"version": "x", "strict": "true", "n": "20"}
    assert (
        suite.tasks["arena-hard-v2.0"].where["baseline"]
        == f"{tmp_path / 'suite.yaml'}: line 9: tasks.arena-hard-v2.0.baseline"
    )
    listed = load_suite(_write(tmp_path, "tasks: [ifeval, healthbench]\nsamples: 3\n"))
    assert list(listed.tasks) == ["ifeval", "healthbench"] and listed.defaults.samples == 3


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "tasks:\n  ifeval:\n    sampels: 8\n",
            "line 3: tasks.ifeval: unknown field 'sampels' (did you mean 'samples'?)",
        ),
        ("tasks:\n  ifeval:\n    samples: eight\n", "line 3: tasks.ifeval.samples: expected a whole number"),
        ("tasks:\n  ifeval:\n    samples: 0\n", "line 3: tasks.ifeval.samples: expected a whole number"),
        ("tasks:\n  ifeval:\n  ifeval:\n", "line 3: tasks: 'ifeval' is given twice (first at line 2)"),
        (
            "tasks:\n  ifeval:\n    baseline: [a, b]\n",
            "line 3: tasks.ifeval.baseline: expected a single value",
        ),
        (
            "tasks:\n  ifeval:\n    options: {version: [1]}\n",
            "tasks.ifeval.options.version: expected a single",
        ),
        ("tasks: {}\n", "tasks: name at least one benchmark"),
        ("judges: [J]\n", "no 'tasks:'"),
        ("tasks:\n  ifeval: [\n", "line 3: not valid YAML"),
        ("", "the file is empty"),
        ("- ifeval\n", "line 1: expected a mapping"),
    ],
)
def test_a_bad_suite_is_one_line_naming_file_line_and_field(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        load_suite(_write(tmp_path, text))
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "suite.yaml")) and problem in message
    assert "\n" not in message


def test_the_command_line_replaces_the_file_task_by_task(tmp_path: Path) -> None:
    suite = load_suite(
        _write(
            tmp_path,
            "judges: J\ntasks:\n  ifeval:\n    samples: 8\n  healthbench:\n    judges: G\n    samples: 8\n"
            "  arena-hard-v2.0:\n    baseline: B\n",
        )
    )
    tasks = list(suite.tasks)
    plain = fit_to_benchmarks(task_settings(tasks, None, suite), BENCHES)
    assert plain["healthbench"].judges == ("G",) and plain["arena-hard-v2.0"].judges == ("J",)
    assert plain["ifeval"].judges == () and plain["ifeval"].samples == 8  # the file's default judge skips it
    flags = TaskFlags(judges=["healthbench=H"], samples=["1"], baselines=["arena-hard-v2.0=C"])
    over = task_settings(tasks, flags, suite)
    assert over["healthbench"].judges == ("H",) and over["arena-hard-v2.0"].judges == ("J",)
    assert [over[t].samples for t in tasks] == [1, 1, 1] and over["arena-hard-v2.0"].baseline == "C"
    wrong = load_suite(_write(tmp_path, "tasks:\n  ifeval:\n  healthbench:\n    baseline: B\n"))
    with pytest.raises(JuristError, match=r"suite.yaml: line 4: tasks.healthbench.baseline: does not apply"):
        fit_to_benchmarks(task_settings(list(wrong.tasks), None, wrong), BENCHES)


def test_run_and_sweep_take_a_suite_from_the_command_line(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"M": {}, "J": {}})
    _write(tmp_path, "limit: 2\ntasks:\n  ifeval:\n    samples: 2\n  starter:\n    judges: J\n    limit: 1\n")
    common = ["--models-file", "m.yaml", "--no-progress", "--no-check"]
    done = jurist("run", "--suite", "suite.yaml", "--model", "M", *common, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    asked = server.stats.requests_by_model
    assert asked["M"] == 2 + 1 and asked["J"] == 2  # ifeval: 2 prompts (n=2 in one request); starter: 1
    summary = json.loads((tmp_path / "runs" / "tasks_summary.json").read_text())
    assert summary["tasks"] == ["ifeval", "starter"]
    bad = _write(tmp_path, "tasks:\n  ifeval:\n    judges: J\n")
    refused = jurist("run", "--suite", str(bad), "--model", "M", *common, cwd=tmp_path)
    assert refused.returncode == 2 and "line 3: tasks.ifeval.judges: does not apply" in refused.stderr
    both = jurist("run", "--suite", str(bad), "--bench", "ifeval", cwd=tmp_path)
    assert both.returncode == 2 and "--bench names one benchmark" in both.stderr
    (tmp_path / "ckpt" / "step_1").mkdir(parents=True)
    (tmp_path / "ckpt" / "step_1" / "config.json").write_text("{}")
    swept = jurist("sweep", "--checkpoints", "ckpt", "--suite", str(bad), *common, cwd=tmp_path)
    assert swept.returncode == 2 and "tasks.ifeval.judges: does not apply" in swept.stderr


def test_an_unknown_task_or_option_names_the_suite_line(tmp_path: Path) -> None:
    from jurist.run.task_options import load_task

    suite = load_suite(_write(tmp_path, "tasks:\n  ifeval:\n  no-such-bench:\n    samples: 2\n"))
    settings = task_settings(list(suite.tasks), None, suite)
    with pytest.raises(
        JuristError, match=r"suite.yaml: line 3: tasks.no-such-bench: --bench: 'no-such-bench'"
    ):
        load_task("no-such-bench", settings["no-such-bench"])
    listed = load_suite(_write(tmp_path, "tasks: [ifeval, nope]\n"))
    with pytest.raises(JuristError, match=r"suite.yaml: line 1: tasks: --bench: 'nope'"):
        load_task("nope", task_settings(list(listed.tasks), None, listed)["nope"])
