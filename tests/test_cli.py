"""The command line as a user meets it: exit codes, one-line errors, kill -9 and resume."""

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

from conftest import SHARED_DATA, write_models_file
from jurist.store.jsonl import read_jsonl


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_bad_models_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("judge:\n  model: x\n  parallel: -3\n")
    result = jurist("run", "--models-file", "m.yaml", "--model", "judge", cwd=tmp_path)
    assert result.returncode == 2
    assert "m.yaml: model 'judge': field parallel" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_alias_and_bench_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("a:\n  model: x\n")
    result = jurist("run", "--models-file", "m.yaml", "--model", "nope", cwd=tmp_path)
    assert result.returncode == 2 and "model 'nope' is not defined" in result.stderr
    result = jurist("run", "--bench", "no-such-bench", cwd=tmp_path)
    assert result.returncode == 2 and "neither a known benchmark" in result.stderr
    result = jurist("run", "--inference-only", "--judge-only", cwd=tmp_path)
    assert result.returncode == 2


def test_failed_requests_give_exit_1_and_are_retried_next_run(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(faults={"water bottle": ["400"]})  # the first starter prompt
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = [
        "run",
        "--models-file",
        "m.yaml",
        "--model",
        "strong",
        "--judge",
        "judge-good",
        "--limit",
        "3",
        "--no-progress",
        "--retry-base-delay",
        "0.01",
    ]
    first = jurist(*args, cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    failures = read_jsonl(tmp_path / "runs" / "starter" / "failures.jsonl")
    assert len(failures) == 1 and failures[0]["stage"] == "generate" and failures[0]["status"] == 400
    assert len(read_jsonl(tmp_path / "runs" / "starter" / "answers" / "strong.jsonl")) == 2
    before = server.stats.requests
    second = jurist(*args, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert server.stats.requests - before == 1 + 2  # the missing answer, then its two games
    board = json.loads((tmp_path / "runs" / "starter" / "leaderboard.json").read_text())
    assert {row["model"]: row["score"] for row in board}["strong"] == 100.0


def test_kill_9_then_resume_sends_only_what_is_missing(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(delay=0.15)
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {"parallel": 2}, "judge-good": {}})
    args = [
        sys.executable,
        "-m",
        "jurist",
        "run",
        "--models-file",
        "m.yaml",
        "--model",
        "strong",
        "--judge",
        "judge-good",
        "--no-progress",
    ]
    answers = tmp_path / "runs" / "starter" / "answers" / "strong.jsonl"
    process = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if answers.exists() and answers.read_bytes().count(b"\n") >= 6:
            break
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    kept = len(read_jsonl(answers))
    assert 6 <= kept < 24
    generated_before = server.stats.requests_by_model["strong"]
    # Judging overlaps answering, so some games went out before the kill: the resumed run sends every game
    # not stored yet (those in flight at the kill included) and none that is.
    judgments = tmp_path / "runs" / "starter" / "judgments" / "judge-good" / "strong.jsonl"
    judged_before = server.stats.requests_by_model["judge-good"]
    stored_games = 2 * len(read_jsonl(judgments)) if judgments.exists() else 0
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert server.stats.requests_by_model["strong"] - generated_before == 24 - kept
    resent = server.stats.requests_by_model["judge-good"] - judged_before
    assert 24 * 2 - judged_before <= resent <= 24 * 2 - stored_games
    assert len(read_jsonl(answers)) == 24
    assert len({r["uid"] for r in read_jsonl(answers)}) == 24
    assert len(read_jsonl(tmp_path / "runs" / "starter" / "judgments" / "judge-good" / "strong.jsonl")) == 24


def test_several_judges_each_get_rows(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(
        tmp_path / "m.yaml", server.base_url, {"mixed": {}, "judge-good": {}, "judge-reask": {}}
    )
    result = jurist(
        "run",
        "--models-file",
        "m.yaml",
        "--model",
        "mixed",
        "--judge",
        "judge-good,judge-reask",
        "--limit",
        "4",
        "--no-progress",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    board = json.loads((tmp_path / "runs" / "starter" / "leaderboard.json").read_text())
    assert {(row["judge"], row["model"]) for row in board} == {
        ("judge-good", "mixed"),
        ("judge-good", "reference"),
        ("judge-reask", "mixed"),
        ("judge-reask", "reference"),
    }
    assert "judge-reask" in result.stdout  # the table shows a judge column


@pytest.mark.skipif(not (SHARED_DATA / "arena-hard").exists(), reason="shared data not present")
def test_arena_hard_question_file_with_generated_baseline(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "baseline": {}, "judge-good": {}})
    for version in ("arena-hard-v2.0", "arena-hard-v0.1"):
        questions = SHARED_DATA / "arena-hard" / "data" / version / "question.jsonl"
        out = tmp_path / version
        result = jurist(
            "run",
            "--bench",
            str(questions),
            "--models-file",
            "m.yaml",
            "--model",
            "strong",
            "--baseline",
            "baseline",
            "--judge",
            "judge-good",
            "--limit",
            "5",
            "--out",
            str(out),
            "--no-progress",
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        assert len(read_jsonl(out / "answers" / "baseline.jsonl")) == 5
        board = {row["model"]: row for row in json.loads((out / "leaderboard.json").read_text())}
        assert board["strong"]["score"] == 100.0 and board["strong"]["n"] == 5
    result = jurist(
        "run",
        "--bench",
        str(questions),
        "--models-file",
        "m.yaml",
        "--model",
        "strong",
        "--judge",
        "judge-good",
        "--limit",
        "5",
        "--out",
        str(tmp_path / "x"),
        cwd=tmp_path,
    )
    # No --baseline: a v0.1 file is judged against upstream's v0.1 baseline, gpt-4-0314, whose official
    # answers sit in model_answer/ beside it (nothing is generated for it).
    assert result.returncode == 0, result.stderr
    board = {row["model"]: row for row in json.loads((tmp_path / "x" / "leaderboard.json").read_text())}
    assert board["gpt-4-0314"]["baseline"] and board["strong"]["n"] == 5
    assert "gpt-4-0314" not in server.stats.requests_by_model
    other = tmp_path / "q.jsonl"
    other.write_text(json.dumps({"uid": "1", "category": "mine", "prompt": "p"}) + "\n")
    result = jurist(
        "run", "--bench", str(other), "--models-file", "m.yaml", "--model", "strong", cwd=tmp_path
    )
    assert result.returncode == 2 and "--baseline is required" in result.stderr


def test_no_help_text_holds_what_rich_would_read_as_markup() -> None:
    """Typer renders help with rich markup: ``[default: starter]`` or ``[the provider's limit]`` would be
    taken for a style tag and vanish from --help without a word."""
    import re

    import typer.main

    from jurist.cli import app

    root = typer.main.get_command(app)
    root.load_all()  # type: ignore[attr-defined]
    tag = re.compile(r"(?<!\\)\[[a-z#/@][^\[\]]*\]")

    def commands(group: Any) -> Any:
        for command in getattr(group, "commands", {}).values():
            yield command
            yield from commands(command)

    found = [
        f"{command.name} {param.name}: {param.help}"
        for command in commands(root)
        for param in command.params
        if getattr(param, "help", None) and tag.search(param.help)
    ]
    assert not found


def test_the_command_table_lists_every_command_with_its_own_help() -> None:
    """``jurist --help`` lists the commands from ``cli.COMMANDS`` without importing them: the table must
    name every command a module registers, and its text must be each command's own first paragraph (the
    short help click would have cut from it, at any width)."""
    import typer.main
    from typer._click.utils import make_default_short_help

    from jurist.cli import COMMANDS, app

    root = typer.main.get_command(app)
    root.load_all()  # type: ignore[attr-defined]
    assert set(root.commands) == set(COMMANDS)
    for name, (_, text) in COMMANDS.items():
        command = root.commands[name]
        for limit in (45, 80, 400):
            assert make_default_short_help(text, limit) == command.get_short_help_str(limit), name


def test_jurist_help_imports_no_command_module() -> None:
    """The point of the table: the list of commands costs none of the commands' imports."""
    code = (
        "import sys\n"
        "from jurist.cli import main\n"
        "sys.argv = ['jurist', '--help']\n"
        "try:\n    main()\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('jurist.commands.', 'rich'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Commands:" in result.stdout and "serve " in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_second_run_into_a_fresh_directory_answers_from_the_first_runs_cache(
    tmp_path: Path, mock_server: Any
) -> None:
    """What one ``jurist`` process stored, the next one finds (the process ends without the
    interpreter's teardown: cli.entry)."""
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"good": {}})
    args = ("run", "--models-file", "m.yaml", "--model", "good", "--inference-only", "--limit", "5")
    first = jurist(*args, "--no-progress", "--out", "one", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    sent = server.stats.requests
    second = jurist(*args, "--no-progress", "--out", "two", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert server.stats.requests == sent  # every answer came from the cache
    assert (tmp_path / "two" / "answers").is_dir()


@pytest.mark.parametrize(
    ("argv", "status", "said"),
    [(["--version"], 0, "jurist 0.1.0"), (["run", "--no-such-option"], 2, "No such option")],
)
def test_the_command_ends_after_its_exit_handlers_with_mains_code(
    tmp_path: Path, argv: list[str], status: int, said: str
) -> None:
    """cli.entry ends the process at once, but only after every exit handler has run (the request cache's
    last writes, logging's flush) and with the exit code main() gave; what was printed is all there."""
    marker = tmp_path / "handler-ran"
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
        f"sys.argv = ['jurist', *{argv!r}]\n"
        "from jurist.cli import entry\n"
        "entry()\n"
        "print('not reached')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == status
    assert said in result.stdout + result.stderr and "not reached" not in result.stdout
    assert marker.read_text() == "yes"


def test_a_mistyped_command_still_gets_the_suggestion(tmp_path: Path) -> None:
    """Commands load on first use; a name that is none of them loads them all, so the suggestion is
    made from the whole list, and the usage error is exit 2."""
    result = jurist("shwo", cwd=tmp_path)
    assert result.returncode == 2
    assert "No such command 'shwo'" in result.stderr and "Did you mean 'show'?" in result.stderr
    result = jurist("serve", "reward", "--help", cwd=tmp_path)  # a group of commands, loaded the same way
    assert result.returncode == 0 and "--token-file" in result.stdout
