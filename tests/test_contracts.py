"""The contracts module names the types a contributor builds against: each is the real one (no copy), it
loads nothing until used, and the store reads and writes run.json as its record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import get_type_hints

import pytest

import jurist.contracts as contracts
from jurist.benchmarks import Benchmark
from jurist.errors import JuristError
from jurist.families import Family, Scores
from jurist.judging import JudgeKind
from jurist.store import RunDir, RunJson
from jurist.store.records import SCHEMA_VERSION


def test_each_name_is_the_one_its_code_defines() -> None:
    assert contracts.Benchmark is Benchmark and contracts.JudgeKind is JudgeKind
    assert contracts.Family is Family and contracts.Scores is Scores and contracts.RunJson is RunJson
    assert all(getattr(contracts, name) is not None for name in contracts.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        contracts.Nope  # noqa: B018


def test_importing_it_loads_none_of_what_it_names() -> None:
    code = "import sys, jurist.contracts; print(sorted(m for m in sys.modules if m.startswith('jurist.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(loaded.stdout.replace("'", '"')) == ["jurist.contracts"]


def test_run_json_is_written_and_read_back_as_its_record(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    written = run.write_run_json("abc", "running", {"models": ("m",), "score_family": "pairwise"})
    assert written == run.read_run_json() and written["models"] == ["m"]  # as a reader reads it
    assert written["schema_version"] == SCHEMA_VERSION and written["status"] == "running"
    assert {"schema_version", "status", "score_family", "scoring"} <= set(get_type_hints(RunJson))
    run.refuse_older_layout()  # this jurist's own layout is read


def test_an_older_layout_is_refused_naming_the_run_json_and_its_version(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"jurist_version": "0.0.9", "status": "finished"}))
    with pytest.raises(JuristError) as refused:
        run.refuse_older_layout()
    assert str(refused.value).startswith(f"{tmp_path / 'run.json'}: written by jurist 0.0.9 ")
    assert "schema 1" in str(refused.value) and "\n" not in str(refused.value)
    (tmp_path / "run.json").write_text("{torn")  # not this check's to judge: left to its reader
    run.refuse_older_layout()


def test_jurist_run_refuses_an_older_layout_in_one_line_with_exit_code_2(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "run.json").write_text(json.dumps({"jurist_version": "0.0.9", "status": "finished"}))
    command = [sys.executable, "-m", "jurist", "run", "--out", "old", "--limit", "1"]
    refused = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "error: old/run.json: written by jurist 0.0.9 in an older run-directory layout (schema 1; this "
        "jurist reads schema 2): run it again into a new directory"
    ]
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == ["run.json"]
