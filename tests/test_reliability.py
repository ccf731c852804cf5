"""The [reliability] issue: flaky endpoints, a full disk and input edge cases never cost a result."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.errors import JuristError

RUN_ARGS = ["--model", "strong", "--judge", "judge-good", "--no-progress", "--no-check"]


@pytest.fixture
def models(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server()
    aliases = {"strong": {}, "judge-good": {}, "base": {}}
    return server, write_models_file(tmp_path / "m.yaml", server.base_url, aliases)


def test_a_flaky_endpoint_is_a_warning_not_a_refusal(
    tmp_path: Path, mock_server: Any, run_quiet: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Item 3: probes that meet a transient fault a later attempt gets past (here HTTP 500 on each alias's
    first try) do not refuse the run. (HTTP 500 on every try refuses it since issue 26:
    tests/test_check_refusals.py.)"""
    server = mock_server(faults={"Reply with one word": ["500", "500"]})
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    with caplog.at_level(logging.WARNING):
        result = run_quiet(
            models_file=models,
            models=["strong"],
            judges=["judge-good"],
            out=tmp_path / "r",
            limit=2,
            check=True,
        )
    assert result.exit_code == 0 and server.stats.probes >= 2
    assert "flaky" in caplog.text and "HTTP 500" in caplog.text


def test_a_rejected_key_still_refuses_the_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    """Item 3: what retrying cannot fix is still a refusal, before any work."""
    server = mock_server(faults={"Reply with one word": ["401"] * 20})
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    with pytest.raises(JuristError, match="key rejected"):
        run_quiet(
            models_file=models, models=["strong"], judges=["judge-good"], out=tmp_path / "r", check=True
        )
    assert server.stats.requests == 0


def run_with_file_size_limit(cwd: Path, limit: int, args: list[str]) -> subprocess.CompletedProcess[str]:
    """jurist under RLIMIT_FSIZE: the kernel refuses writes past ``limit`` bytes (EFBIG), as a full disk."""
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from jurist.cli import main\n"
        f"sys.argv = ['jurist', *{args!r}]\n"
        "main()\n"
    )
    env = {**os.environ, "JURIST_CACHE_DIR": str(cwd / "cache-limited")}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def test_a_full_disk_is_one_line_exit_1_and_the_run_resumes(tmp_path: Path, models: tuple[Any, Path]) -> None:
    """Item 4: no traceback, the path and what was being written are named, nothing is lost."""
    _, models_file = models
    args = ["run", "--models-file", str(models_file), *RUN_ARGS, "--out", "run"]
    full = run_with_file_size_limit(tmp_path, 9000, args)
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr
    error = [line for line in full.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "could not write" in error[0] and "run/" in error[0]
    resumed = subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    clean = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--models-file", str(models_file), *RUN_ARGS]
        + ["--out", "clean"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert clean.returncode == 0
    boards = {
        name: json.loads((tmp_path / name / "leaderboard.json").read_text()) for name in ("run", "clean")
    }
    scores = {
        name: {(r["model"], r["judge"], r["score"], r["n"]) for r in rows} for name, rows in boards.items()
    }
    assert scores["run"] == scores["clean"]


def test_a_question_file_without_a_final_newline_keeps_its_last_question(
    tmp_path: Path, models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 8."""
    _, models_file = models
    questions = tmp_path / "question.jsonl"
    questions.write_text("\n".join(json.dumps({"uid": f"q{i}", "prompt": f"prompt {i}"}) for i in range(5)))
    result = run_quiet(
        bench=str(questions), models_file=models_file, models=["strong"], judges=["judge-good"],
        baseline="base", out=tmp_path / "r",
    )  # fmt: skip
    assert next(r for r in result.leaderboard if r["model"] == "strong")["n"] == 5
    assert questions.read_text().count("\n") == 4  # an input file is read, never rewritten


def test_judge_only_over_an_empty_answers_file_is_an_error(
    tmp_path: Path, models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 8: it used to exit 0 and replace the leaderboard with []."""
    _, models_file = models
    (tmp_path / "r" / "answers").mkdir(parents=True)
    (tmp_path / "r" / "answers" / "strong.jsonl").write_text("")
    with pytest.raises(JuristError, match="--judge-only: no answers for 'strong'"):
        run_quiet(
            models_file=models_file,
            models=["strong"],
            judges=["judge-good"],
            out=tmp_path / "r",
            mode="judge-only",
        )


def test_out_naming_a_file_is_refused_before_any_request(tmp_path: Path, models: tuple[Any, Path]) -> None:
    """Item 8: detected before the pre-run probes, not after."""
    server, models_file = models
    (tmp_path / "taken").write_text("not a directory")
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--models-file", str(models_file), "--model", "strong"]
        + ["--judge", "judge-good", "--out", "taken"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "is a file, not a run directory" in result.stderr
    assert server.stats.requests == 0 and server.stats.probes == 0


def test_a_rerun_with_nothing_to_do_keeps_the_usage_totals(
    tmp_path: Path, models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 8: run.json's usage_total adds up every run; usage is the last run's own."""
    _, models_file = models
    args = {"models_file": models_file, "models": ["strong"], "judges": ["judge-good"], "out": tmp_path / "r"}
    first = run_quiet(**args, limit=3)
    total = json.loads((tmp_path / "r" / "run.json").read_text())["usage_total"]
    assert total["requests"] == first.requests == 9
    assert run_quiet(**args, limit=3).requests == 0
    run_json = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run_json["usage"]["requests"] == 0 and run_json["usage_total"]["requests"] == 9


def test_a_second_process_on_the_same_run_directory_is_refused(tmp_path: Path, mock_server: Any) -> None:
    """Item 1: two writers on one --out used to both write every line; now the second fails at once."""
    import time

    server = mock_server(delay=0.2)
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {"parallel": 2}, "judge-good": {}})
    args = [sys.executable, "-m", "jurist", "run", "--models-file", "m.yaml", *RUN_ARGS, "--out", "run"]
    first = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tmp_path / "run" / "run.json").exists():
        time.sleep(0.05)
    second = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert second.returncode == 2 and f"in use by jurist pid {first.pid}" in second.stderr
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    board = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert next(r for r in board if r["model"] == "strong")["n"] == 24
    assert server.stats.requests == 24 + 48  # every request once: the refused process sent none


@pytest.mark.parametrize(
    "args", [["--limit", "0"], ["--limit", "-1"], ["--max-concurrency", "0"], ["--ci", "2"]]
)
def test_out_of_range_values_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    """Item 8: one line and exit 2, before anything runs."""
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr and not (tmp_path / "runs").exists()


def test_a_models_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    """Item 8."""
    (tmp_path / "m.yaml").write_bytes(b"a:\n  model: x\nb:\n  model: \xff\xfe\n")
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--models-file", "m.yaml", "--model", "a"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2 and "m.yaml: line 4: not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr
