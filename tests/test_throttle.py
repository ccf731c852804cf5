"""The cross-process throttle: request starts spaced through a file lock, across engines and processes."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.config import Endpoint, ModelSpec
from jurist.engine.client import Engine
from jurist.engine.pacing.throttle import Throttle, default_throttle_file, make_throttle
from jurist.errors import JuristError

INTERVAL = 0.05
# A request released more than this after its slot books a new one (Throttle.wait), so releases are spaced
# by at least INTERVAL - LATE; arrivals at the server add network and scheduling jitter on top.
LATE = max(0.002, 0.1 * INTERVAL)


class RecordingThrottle(Throttle):
    """Notes when each request is let go (wall clock, comparable across processes)."""

    def __init__(self, min_interval: float, path: Path) -> None:
        super().__init__(min_interval, path)
        self.releases: list[float] = []

    async def wait(self) -> None:
        await super().wait()
        self.releases.append(time.time())


def spec(alias: str, url: str) -> ModelSpec:
    return ModelSpec(alias=alias, model=alias, endpoints=[Endpoint(api_base=url)], timeout=5.0)


async def send(url: str, alias: str, state: Path, n: int) -> list[float]:
    """``n`` concurrent requests through a throttled engine; returns their release times."""
    throttle = RecordingThrottle(INTERVAL, state)
    engine = Engine({alias: spec(alias, url)}, max_concurrency=8, throttle=throttle)
    try:
        client = engine.client(alias)
        await asyncio.gather(*(client.complete([{"role": "user", "content": f"hi {i}"}]) for i in range(n)))
    finally:
        await engine.aclose()
    return throttle.releases


def gaps(times: list[float]) -> list[float]:
    ordered = sorted(times)
    return [b - a for a, b in zip(ordered, ordered[1:], strict=False)]


def assert_spaced(releases: dict[str, list[float]], arrivals: dict[str, list[float]]) -> None:
    """Releases strictly spaced; arrivals at the server spaced too, up to jitter; the users overlapped."""
    released = [t for times in releases.values() for t in times]
    assert min(gaps(released)) >= INTERVAL - LATE, sorted(gaps(released))[:3]
    arrived = [t for alias in releases for t in arrivals[alias]]
    assert len(arrived) == len(released)
    assert statistics.median(gaps(arrived)) >= INTERVAL - LATE
    assert max(arrived) - min(arrived) >= (len(arrived) - 2) * INTERVAL  # unthrottled: a few ms in all
    spans = [(min(times), max(times)) for times in releases.values()]
    assert all(lo < max(hi for _, hi in spans) and hi > min(lo for lo, _ in spans) for lo, hi in spans)


def test_booking_spaces_slots_and_survives_bad_state(tmp_path: Path) -> None:
    state = tmp_path / "throttle.lock"
    throttle = Throttle(0.5, state)
    assert throttle.book(now=100.0) == 100.0
    assert throttle.book(now=100.0) == 100.5
    assert throttle.book(now=100.2) == 101.0
    assert throttle.book(now=200.0) == 200.0  # idle time is not banked
    assert float(state.read_text()) == pytest.approx(200.5)
    state.write_text("not a number")
    assert throttle.book(now=300.0) == 300.0
    state.write_text("1e12\n")  # far in the future: a clock set back, or a foreign file
    assert throttle.book(now=300.0) == 300.0


def test_disabled_throttle_and_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_throttle(0.0, tmp_path / "x") is None and not (tmp_path / "x").exists()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_throttle_file() == tmp_path / "cache" / "jurist" / "throttle.lock"
    throttle = make_throttle(0.01)
    assert throttle is not None and throttle.path.parent.is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(JuristError, match="--throttle-file"):
        Throttle(0.01, tmp_path / "file" / "sub" / "state")


def test_two_engines_in_threads_share_the_spacing(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    state = tmp_path / "throttle.lock"
    releases: dict[str, list[float]] = {}

    def user(alias: str) -> None:
        releases[alias] = asyncio.run(send(server.base_url, alias, state, 10))

    threads = [threading.Thread(target=user, args=(alias,)) for alias in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert server.stats.requests == 20
    assert_spaced(releases, server.stats.arrivals)


CHILD = """
import asyncio, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[5])
from test_throttle import send
url, state, alias, barrier = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
(barrier / alias).touch()
deadline = time.monotonic() + 60
while len(list(barrier.iterdir())) < 2 and time.monotonic() < deadline:
    time.sleep(0.005)
print(json.dumps(asyncio.run(send(url, alias, state, 6))))
"""


def test_two_processes_share_the_spacing(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    barrier = tmp_path / "ready"
    barrier.mkdir()
    tests_dir = str(Path(__file__).resolve().parent)
    children = {
        alias: subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                server.base_url,
                str(tmp_path / "t.lock"),
                alias,
                str(barrier),
                tests_dir,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for alias in ("proc-a", "proc-b")
    }
    releases = {alias: json.loads(child.communicate(timeout=60)[0]) for alias, child in children.items()}
    assert all(child.returncode == 0 for child in children.values())
    assert server.stats.requests == 12
    assert_spaced(releases, server.stats.arrivals)


def test_run_options_reach_the_engine(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = ["--models-file", "m.yaml", "--model", "strong", "--judge", "judge-good", "--limit", "2"]
    args += ["--min-interval", "0.03", "--throttle-file", "state/t.lock", "--no-progress", "--out", "run"]
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "run" / "run.json").read_text())["min_interval"] == 0.03
    assert (tmp_path / "state" / "t.lock").is_file()
    times = [t for model in ("strong", "judge-good") for t in server.stats.arrivals[model]]
    assert len(times) == 2 + 4 and max(times) - min(times) >= 4 * 0.03
