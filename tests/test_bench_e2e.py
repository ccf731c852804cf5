"""The end-to-end benchmark's own logic, without running it: which system runs which leg, the peers'
interpreters by option or environment, the IFEval launches' arguments, and the profile's split of a
py-spy trace into phases (bench/bench_e2e.py, e2e_ifeval.py, e2e_profile.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_e2e  # noqa: E402
import e2e_ifeval  # noqa: E402
import e2e_profile  # noqa: E402


def test_legs_of_each_system() -> None:
    assert [m for m in bench_e2e.MODES if bench_e2e.runs_leg("inspect", m)] == ["ifeval"]
    assert [m for m in bench_e2e.MODES if bench_e2e.runs_leg("jurist-card", m)] == ["full"]
    assert [m for m in bench_e2e.MODES if bench_e2e.runs_leg("arena-hard-auto", m)] == ["answers", "full"]
    assert [m for m in bench_e2e.MODES if bench_e2e.runs_leg("jurist", m)] == list(bench_e2e.MODES)


def test_peer_python_from_option_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(e2e_ifeval.INSPECT_PYTHON_ENV, raising=False)
    assert e2e_ifeval.find_python(None, e2e_ifeval.INSPECT_PYTHON_ENV) is None
    monkeypatch.setenv(e2e_ifeval.INSPECT_PYTHON_ENV, "/venv/bin/python")
    assert e2e_ifeval.find_python(None, e2e_ifeval.INSPECT_PYTHON_ENV) == Path("/venv/bin/python")
    given = Path("/other/bin/python")
    assert e2e_ifeval.find_python(given, e2e_ifeval.INSPECT_PYTHON_ENV) == given


def test_ifeval_launches_share_the_file_and_the_limit(tmp_path: Path) -> None:
    url = "http://127.0.0.1:1/v1"
    python = Path("/venv/bin/python")
    inspect = e2e_ifeval.inspect_launch(python, tmp_path, url, 32, 64)
    assert inspect.argv[0] == "/venv/bin/inspect"
    assert inspect.argv[inspect.argv.index("--max-connections") + 1] == "32"
    assert inspect.argv[-2:] == ["--limit", "64"]
    assert inspect.env["IFEVAL_INPUT"] == str(e2e_ifeval.IFEVAL_INPUT)
    framework = e2e_ifeval.eval_framework_launch(python, tmp_path, url, 32, None)
    assert framework.argv[framework.argv.index("--ifeval-input") + 1] == str(e2e_ifeval.IFEVAL_INPUT)
    assert "--max-examples" not in framework.argv
    jurist = e2e_ifeval.jurist_launch(tmp_path, url, 32, 10)
    assert jurist.argv[jurist.argv.index("--bench") + 1] == "ifeval"
    assert jurist.argv[-2:] == ["--limit", "10"]
    assert (tmp_path / "models.json").is_file()


def _event(ph: str, name: str, ts: int, tid: int = 1) -> dict[str, object]:
    return {"ph": ph, "name": name, "ts": ts, "tid": tid, "args": {"filename": f"/x/jurist/{name}.py"}}


def test_profile_splits_a_trace_at_phase_boundaries() -> None:
    # main() for 3 s; work() on top of it from 0.5 to 1.5 s; select() from 1.5 to 3 s
    events = [
        _event("B", "main", 0),
        _event("B", "work", 500_000),
        _event("E", "work", 1_500_000),
        _event("B", "select", 1_500_000),
        _event("E", "select", 3_000_000),
        _event("E", "main", 3_000_000),
    ]
    spans = e2e_profile.intervals(events)[1]
    assert [(a, b, [f[0] for f in s]) for a, b, s in spans] == [
        (0, 500_000, ["main"]),
        (500_000, 1_500_000, ["main", "work"]),
        (1_500_000, 3_000_000, ["main", "select"]),
    ]
    lines = e2e_profile.phase_report(spans, 1_000_000, 3_000_000, top=5)
    assert "      1.500  (idle)" in lines
    assert "      0.500  jurist.work:work" in lines
    # main() is on the stack through the whole phase: left out of the inclusive list as saying nothing
    assert not any("jurist.main:main" in line for line in lines)
