"""Issue 26 [trust], item 5 and the first half of item 7: every refusal is one line, and a run directory
whose process died says ``crashed``, not ``running``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.benchmarks.answers_file import read_answers_file
from jurist.benchmarks.arena_hard import read_questions
from jurist.benchmarks.base import Benchmark, Question
from jurist.benchmarks.baseline_file import read_answer_file
from jurist.benchmarks.healthbench import read_questions as read_healthbench
from jurist.engine.wire.transport import _parse_completion
from jurist.errors import InputError
from jurist.families import score_run_dir
from jurist.store import CRASHED, RunDir, file_stem, plain_stem
from jurist.view.collect import Files, read_run

RUN_ARGS = ["--model", "strong", "--judge", "judge-good", "--no-progress", "--no-check", "--limit", "4"]

DISK_FULL = """
import builtins, errno, io, os, sys
full = sys.argv.pop(1)
real_open = builtins.open
def open_on_a_full_disk(file, mode="r", *args, **kwargs):
    if any(flag in mode for flag in "wax+") and os.path.basename(str(file)).startswith(full):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
    return real_open(file, mode, *args, **kwargs)
builtins.open = io.open = open_on_a_full_disk
from jurist.cli import main
sys.argv[0] = "jurist"
main()
"""
"""jurist with ENOSPC on every write to a file whose name starts with the first argument: the disk is full
exactly when scoring writes that file (generation and judging append with os.write, untouched)."""


def jurist(cwd: Path, *args: str, full: str | None = None) -> subprocess.CompletedProcess[str]:
    command = (
        [sys.executable, "-c", DISK_FULL, full, *args] if full else [sys.executable, "-m", "jurist", *args]
    )
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def line_counts(root: Path) -> dict[str, int]:
    files = [*root.glob("answers/*.jsonl"), *root.glob("judgments/*/*.jsonl")]
    return {str(f.relative_to(root)): len(f.read_text().splitlines()) for f in files}


@pytest.mark.parametrize("full", ["battles.jsonl", "leaderboard.json"])
def test_a_full_disk_while_scoring_is_one_line_and_a_rerun_completes(
    tmp_path: Path, mock_server: Any, full: str
) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = ["run", "--models-file", "m.yaml", *RUN_ARGS]
    failed = jurist(tmp_path, *args, "--out", "run", full=full)
    assert failed.returncode == 1, failed.stderr
    assert "Traceback" not in failed.stderr
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"could not write {full}" in errors[0], failed.stderr
    assert "No space left on device" in errors[0]
    assert not list((tmp_path / "run").glob("*.tmp"))  # the half-written copy is gone
    saved, sent = line_counts(tmp_path / "run"), server.stats.requests
    assert len(saved) == 3 and set(saved.values()) == {4}  # every answer and judgment kept
    resumed = jurist(tmp_path, *args, "--out", "run")
    assert resumed.returncode == 0, resumed.stderr
    assert server.stats.requests == sent  # nothing asked again
    assert line_counts(tmp_path / "run") == saved
    assert resumed.stderr.count("stopped without finishing") == 1  # the dead run is named, once
    assert jurist(tmp_path, *args, "--out", "clean").returncode == 0
    boards = [json.loads((tmp_path / name / "leaderboard.json").read_text()) for name in ("run", "clean")]
    assert [{(r["model"], r["score"], r["n"]) for r in board} for board in boards][0] == {
        (r["model"], r["score"], r["n"]) for r in boards[1]
    }


LONG = "L" * 260
"""Two aliases sharing 260 bytes before they differ: over the 255-byte file name limit."""


def test_long_aliases_sharing_a_prefix_and_multibyte_ones_run_judge_and_score(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    judge = "判定" * 60 + "-judge"  # 366 bytes of UTF-8, 1,000+ once escaped
    aliases = {
        LONG + "-a": {"model": "strong"},
        LONG + "-b": {"model": "base"},
        judge: {"model": "judge-good"},
    }
    models_file = write_models_file(tmp_path / "m.yaml", server.base_url, aliases)
    args = {
        "models_file": models_file,
        "models": [LONG + "-a"],
        "baseline": LONG + "-b",
        "judges": [judge],
        "out": tmp_path / "r",
        "limit": 3,
    }
    first = run_quiet(**args)
    assert first.exit_code == 0 and first.requests == 3 + 3 + 6
    run = RunDir(tmp_path / "r")
    names = run.names()
    assert set(names) == set(aliases)  # each hashed name is listed with its alias
    for path in (tmp_path / "r").rglob("*"):
        assert len(path.name.encode()) <= 255
    assert len({names[LONG + "-a"], names[LONG + "-b"]}) == 2
    assert {run.alias_of(path.stem) for path in (tmp_path / "r" / "answers").iterdir()} == {
        LONG + "-a",
        LONG + "-b",
    }
    assert run_quiet(**args).requests == 0  # the second run finds every file again
    rows = {row["model"]: row for row in score_run_dir(tmp_path / "r").rows}
    assert rows[LONG + "-a"]["n"] == 3


def test_a_long_alias_in_an_existing_run_directory_is_no_os_error(tmp_path: Path) -> None:
    """The crash the probe found: with ``answers/`` present, a too long name raised ``File name too long``;
    Arena-Hard's plain names (its export) are cut to fit as well."""
    (tmp_path / "answers").mkdir()
    (tmp_path / "judgments").mkdir()
    run = RunDir(tmp_path)
    assert run.answers(LONG).name == file_stem(LONG) + ".jsonl"
    assert run.judgments("中" * 100, LONG).parent.name == file_stem("中" * 100)
    assert len(plain_stem(LONG).encode()) <= 249 and plain_stem(LONG) != plain_stem(LONG + "x")
    assert plain_stem("org/model") == "org__model" and plain_stem("a" * 249) == "a" * 249  # names that fit


def question_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"uid": {"id": 1}, "prompt": "p"}, "line 2: field 'uid' is an object, not an id"),
        ({"uid": ["a"], "prompt": "p"}, "line 2: field 'uid' is a list, not an id"),
        ({"question_id": 1.5, "prompt": "p"}, "line 2: field 'question_id' is a number, not an id"),
        ({"uid": True, "prompt": "p"}, "line 2: field 'uid' is a boolean, not an id"),
        (
            {"uid": "b", "prompt": "p", "category": ["x"]},
            "line 2: field 'category' is a list, not a category",
        ),
        ({"uid": "b", "prompt": "p", "category": {"a": 1}}, "line 2: field 'category' is an object"),
    ],
)
def test_a_uid_or_category_of_the_wrong_type_is_refused_naming_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], message: str
) -> None:
    path = question_file(tmp_path, [{"uid": "a", "prompt": "p"}, row])
    with pytest.raises(InputError, match=message) as caught:
        read_questions(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_integer_uids_are_read_as_upstream_writes_them(tmp_path: Path) -> None:
    """FastChat's MT-Bench ``question_id`` (and so Arena-Hard v0.1's) is an integer; so is IFEval's key."""
    path = question_file(tmp_path, [{"question_id": 81, "turns": [{"content": "p"}], "category": "writing"}])
    assert read_questions(path) == [Question("81", "p", "writing")]


def test_a_wrong_uid_type_on_the_command_line_is_one_line_exit_2(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}, "base": {}})
    question_file(tmp_path, [{"uid": {"id": 1}, "prompt": "p"}])
    args = ["--bench", "q.jsonl", "--baseline", "base", "--models-file", "m.yaml", *RUN_ARGS, "--out", "r"]
    result = jurist(tmp_path, "run", *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    refusal = "error: q.jsonl: line 1: field 'uid' is an object, not an id (a string or an integer)"
    assert result.stderr.strip().splitlines() == [refusal]
    assert server.stats.requests == 0


def test_answers_file_keys_are_ids_or_refused(tmp_path: Path) -> None:
    bench = Benchmark("b", [Question("1000", "p"), Question("1001", "q")])
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"key": 1000, "response": "r"}) + "\n")  # IFEval's integer key
    assert read_answers_file(good, bench) == {"1000": "r"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"key": {"k": 1000}, "response": "r"}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl: line 1: field 'key' is an object"):
        read_answers_file(bad, bench)


PARTS = [{"type": "text", "text": "Hello"}, {"type": "text", "text": "world"}]


def test_content_as_a_list_of_text_parts_is_read_in_replies() -> None:
    body = {
        "choices": [{"message": {"role": "assistant", "content": PARTS}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    assert _parse_completion(json.dumps(body).encode()).text == "Helloworld"
    image_only = {"choices": [{"message": {"content": [{"type": "image_url", "image_url": {}}]}}]}
    with pytest.raises(ValueError, match="without text parts"):
        _parse_completion(json.dumps(image_only).encode())


def test_content_as_a_list_of_text_parts_is_read_in_question_and_answer_files(tmp_path: Path) -> None:
    questions = question_file(tmp_path, [{"question_id": "q", "turns": [{"content": PARTS}]}])
    assert read_questions(questions)[0].prompt == "Hello\nworld"
    answers = tmp_path / "base.jsonl"
    answers.write_text(json.dumps({"uid": "q", "messages": [{"role": "assistant", "content": PARTS}]}) + "\n")
    assert read_answer_file(answers)[1] == {"q": "Hello\nworld"}
    health = tmp_path / "health.jsonl"
    row = {"prompt_id": "h", "prompt": [{"role": "user", "content": PARTS}], "rubrics": [
        {"criterion": "c", "points": 1}]}  # fmt: skip
    health.write_text(json.dumps(row) + "\n")
    assert read_healthbench(health)[0].metadata["messages"] == [{"role": "user", "content": "Hello\nworld"}]
    image = question_file(tmp_path, [{"question_id": "q", "turns": [{"content": [{"type": "image_url"}]}]}])
    with pytest.raises(InputError, match="line 1: field 'turns': the first turn's content is not text"):
        read_questions(image)


def test_a_run_killed_by_sigkill_reads_crashed_and_the_next_run_says_so(
    tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(delay=0.5)
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {"parallel": 1}, "judge-good": {}})
    args = [sys.executable, "-m", "jurist", "run", "--models-file", "m.yaml", *RUN_ARGS, "--out", "run"]
    child = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = RunDir(tmp_path / "run")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not server.stats.requests:
        time.sleep(0.05)
    assert run.recorded_status()[0] == "running"  # alive: the lock is held
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    recorded = json.loads(run.run_json.read_text())
    assert recorded["status"] == "running"  # what the dead process left
    assert run.recorded_status() == (CRASHED, recorded["run_id"])
    assert read_run(run.root, Files()).info["status"] == CRASHED  # jurist view
    usage = jurist(tmp_path, "show", "--usage", "run", "--format", "json")
    assert usage.returncode == 0 and json.loads(usage.stdout)  # stdout stays JSON
    assert [line for line in usage.stderr.splitlines() if "crashed" in line] == [
        f"note: run: run {recorded['run_id']} crashed (it stopped without finishing); what it saved is "
        "shown, and running the same command again resumes it"
    ]
    resumed = jurist(tmp_path, "run", "--models-file", "m.yaml", *RUN_ARGS, "--out", "run")
    assert resumed.returncode == 0, resumed.stderr
    notes = [line for line in resumed.stderr.splitlines() if "stopped without finishing" in line]
    assert len(notes) == 1 and recorded["run_id"] in notes[0]
    finished = json.loads(run.run_json.read_text())
    assert finished["status"] == "finished"
    assert finished["resumed"] == {"run_id": recorded["run_id"], "status": CRASHED}
    assert run.recorded_status()[0] == "finished"


BROKEN_JUDGING = """
import sys
import jurist.run.pipeline as pipeline
async def broken(*args, **kwargs):
    raise RuntimeError("a defect in the judging stage")
pipeline.answer_and_judge = broken
from jurist.cli import main
sys.argv[0] = "jurist"
main()
"""


def test_a_run_that_dies_of_an_error_writes_crashed_with_the_error_itself(
    tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = ["run", "--models-file", "m.yaml", *RUN_ARGS, "--out", "run"]
    died = subprocess.run(
        [sys.executable, "-c", BROKEN_JUDGING, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert died.returncode != 0
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["status"] == CRASHED  # written by the run itself, not inferred from a free lock
    assert recorded["error"] == "RuntimeError: a defect in the judging stage"
    resumed = jurist(tmp_path, *args)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "finished"
