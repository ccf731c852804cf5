"""Data found the same way everywhere, offline: JudgeBench from the common data dir, IFBench asking for an
NLTK resource only when a kept prompt needs it, and a hub that cannot be reached said in one line."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import hub
from test_list_command import jurist

NLTK_PUNKT_ONLY = {"NLTK_DATA": str(SHARED_DATA / "nltk_data"), "JURIST_DATA_DIR": str(SHARED_DATA)}
"""The shared data's NLTK folder holds punkt_tab only: no stop words, no POS tagger."""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed again: a connection to it is refused


def test_ifbench_by_name_starts_with_a_limit_that_needs_no_nltk_resource(
    tmp_path: Path, mock_server: Any
) -> None:
    """The first 20 IFBench prompts need no NLTK resource beyond punkt: they run; the first 140 include
    ``ratio:stop_words`` (key 133), so they are refused in one line, before any request, naming the
    prompt, the resource and how to install it."""
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}})
    common = ["run", "--bench", "ifbench", "--models-file", "m.yaml", "--model", "m", "--no-progress"]
    ran = jurist(*common, "--limit", "20", "--out", "few", cwd=tmp_path, env=NLTK_PUNKT_ONLY)
    assert ran.returncode == 0, ran.stderr
    assert server.stats.requests == 20
    refused = jurist(*common, "--limit", "140", "--out", "more", cwd=tmp_path, env=NLTK_PUNKT_ONLY)
    if refused.returncode == 0:
        pytest.skip("NLTK's stop words are installed on this machine outside NLTK_DATA")
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "prompt 133 (ratio:stop_words)" in line and "corpora/stopwords" in line
    assert "nltk.downloader" in line and "stopwords" in line
    assert server.stats.requests == 20 and not (tmp_path / "more").exists()


def test_judgebench_reads_the_common_data_dir(tmp_path: Path) -> None:
    """``--data-dir`` holding the shared data is all JudgeBench needs (no JURIST_JUDGEBENCH_DIR)."""
    result = jurist(
        "run", "--bench", "judgebench", "--data-dir", str(SHARED_DATA), "--limit", "4", "--dry-run",
        cwd=tmp_path, env={"JURIST_JUDGEBENCH_DIR": "", "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "downloading" not in result.stderr


def test_an_unreachable_hub_is_one_line(tmp_path: Path) -> None:
    """A placement run with the hub's address refusing connections: one line naming the dataset and the
    local way (--data-dir), no retry lines; it does not wait for the hub client's retries (~25 s)."""
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}", "HF_HUB_OFFLINE": ""}
    started = time.monotonic()
    result = jurist("run", "--bench", "lmarena-100k", "--dry-run", cwd=tmp_path, env=env)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "lmarena-100k" in line and "arena-human-preference-100k" in line
    assert "unreachable" in line and "--data-dir" in line and "lmarena-100k/*.parquet" in line
    assert "Retry" not in result.stderr
    print(f"refused in {elapsed:.1f} s")  # about 1.5 s here; shown with -s, not asserted (loaded machine)


def test_hub_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_HUB_OFFLINE says offline without a probe; a closed port is refused; an open one is reachable."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub.unreachable_reason("http://127.0.0.1:1") == "HF_HUB_OFFLINE is set"
    monkeypatch.delenv("HF_HUB_OFFLINE")
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    reason = hub.unreachable_reason(f"http://127.0.0.1:{_closed_port()}")
    assert reason is not None and "cannot connect to 127.0.0.1" in reason
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        assert hub.unreachable_reason(f"http://127.0.0.1:{listening.getsockname()[1]}") is None
