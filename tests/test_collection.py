"""Garbage collection held through the ``jurist`` command's start (jurist.run.collection): off from the
entry until the command is under way, then back on with what the start made frozen; a caller that
turned it off itself keeps it off, and in-process callers of main() never see it held."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurist.run.collection import hold_collection, resume_collection

REPORT = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('collector', gc.isenabled(), gc.get_freeze_count() > 0))\n"
    "import jurist.run.collection as held\n"
    "original = held.resume_collection\n"
    "def resume():\n"
    "    print('held until resumed', not gc.isenabled())\n"
    "    original()\n"
    "held.resume_collection = resume\n"
    "sys.argv = ['jurist', *sys.argv[1:]]\n"
    "from jurist.cli import entry\n"
    "entry()\n"
)


@pytest.fixture
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("collector_restored")
def test_a_hold_is_undone_by_the_resume_with_the_start_frozen() -> None:
    gc.enable()
    hold_collection()
    assert not gc.isenabled()
    resume_collection()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    frozen = gc.get_freeze_count()
    resume_collection()  # once only: a second resume freezes nothing more
    assert gc.get_freeze_count() == frozen


@pytest.mark.usefixtures("collector_restored")
def test_a_caller_that_turned_collection_off_keeps_it_off() -> None:
    gc.disable()
    hold_collection()
    resume_collection()
    assert not gc.isenabled() and gc.get_freeze_count() == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],  # any command: collection back from its first step
        ["run", "--bench", "q.jsonl", "--model", "vllm/x", "--base-url", "http://127.0.0.1:9/v1"]
        + ["--inference-only", "--dry-run"],  # a run: back at its launch
    ],
)
def test_the_command_holds_collection_through_its_start_only(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "q.jsonl").write_text('{"uid": "q1", "prompt": "hi", "category": "x"}\n')
    result = subprocess.run(
        [sys.executable, "-c", REPORT, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "held until resumed True" in lines
    assert lines[-1] == "collector True True"


def test_main_in_process_leaves_the_collector_alone(tmp_path: Path) -> None:
    code = (
        "import gc, sys\n"
        "sys.argv = ['jurist', 'list']\n"
        "from jurist.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('collector', gc.isenabled(), gc.get_freeze_count())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "collector True 0"
