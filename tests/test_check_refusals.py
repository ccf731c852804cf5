"""Issue 26, point 6: the pre-run check refuses what retrying cannot fix, in one line with exit 2 before
anything is written; warns on transient trouble and lets the run go on; probes only what has requests to
send after what is on disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from conftest import write_models_file
from jurist.engine.servers.base import free_port
from mock_openai import MockOpenAI

SECRET = "sk-refusal-SECRET-0123456789"
PROBE = "Reply with one word"  # the probe's prompt: a fault keyed on it hits probes only
RUN = ["run", "--models-file", "m.yaml", "--model", "strong", "--judge", "judge-good", "--limit", "2"]


def jurist(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args, "--no-progress"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **env},
    )


def models(tmp_path: Path, base_url: str, **extra: Any) -> Path:
    return write_models_file(tmp_path / "m.yaml", base_url, {"strong": extra, "judge-good": extra})


def refused_in_one_line(result: subprocess.CompletedProcess[str], out: Path) -> str:
    """The refusal's one line (after the run's own notes); exit 2 and nothing written."""
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert not out.exists()
    return errors[0]


def test_a_non_http_api_base_is_refused_when_the_models_file_is_read(tmp_path: Path) -> None:
    path = models(tmp_path, "http://127.0.0.1:9/v1")
    data = yaml.safe_load(path.read_text())
    data["judge-good"]["endpoints"] = [{"api_base": "ftp://files.example.com/v1"}]
    path.write_text(yaml.safe_dump(data))
    line = refused_in_one_line(jurist(*RUN, "--out", "r", cwd=tmp_path), tmp_path / "r")
    assert "m.yaml: line " in line and "model 'judge-good': endpoints[0]" in line
    assert "'ftp://files.example.com/v1' is not an http:// or https:// URL" in line


def test_a_rejected_key_is_one_line_naming_alias_and_status_never_the_key(
    tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(require_key="sk-the-right-key-000")
    models(tmp_path, server.base_url)
    line = refused_in_one_line(
        jurist(*RUN, "--out", "r", cwd=tmp_path, OPENAI_API_KEY=SECRET), tmp_path / "r"
    )
    assert "strong" in line and "judge-good" in line and line.count("key rejected (HTTP 401)") == 2
    assert SECRET not in line and server.stats.requests == 0
    assert server.stats.probes == 2  # a rejected key is not tried again


def test_an_unknown_model_is_refused_naming_what_the_server_serves(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(served=("qwen-7b", "qwen-72b"), faults={PROBE: ["404"] * 10})
    models(tmp_path, server.base_url)
    line = refused_in_one_line(jurist(*RUN, "--out", "r", cwd=tmp_path), tmp_path / "r")
    assert "unknown model 'strong' (HTTP 404; the server lists qwen-7b, qwen-72b)" in line
    assert server.stats.probes == 2 and server.stats.requests == 0


def test_a_refused_connection_is_refused_in_seconds_not_after_every_retry(tmp_path: Path) -> None:
    models(tmp_path, f"http://127.0.0.1:{free_port()}/v1")
    started = time.monotonic()
    result = jurist(*RUN, "--out", "r", cwd=tmp_path)
    line = refused_in_one_line(result, tmp_path / "r")
    assert time.monotonic() - started < 15  # the interpreter's start included; 32 s of retries before
    assert line.count("failed all 3 attempts: unreachable") == 2


def test_the_same_server_error_on_every_attempt_is_refused(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(faults={PROBE: ["500"] * 6})
    models(tmp_path, server.base_url)
    line = refused_in_one_line(jurist(*RUN, "--out", "r", cwd=tmp_path), tmp_path / "r")
    assert line.count("failed all 3 attempts: HTTP 500") == 2 and server.stats.requests == 0


def test_transient_trouble_is_a_warning_and_the_run_goes_on(tmp_path: Path, mock_server: Any) -> None:
    # strong's first probe fails and its second gets through; judge-good is rate limited on every probe.
    flaky = mock_server(faults={PROBE: ["500"]})
    busy = mock_server(faults={PROBE: ["429"] * 3})
    write_models_file(tmp_path / "m.yaml", flaky.base_url, {"strong": {}})
    data = yaml.safe_load((tmp_path / "m.yaml").read_text())
    data["judge-good"] = {**data["strong"], "model": "judge-good", "endpoints": [{"api_base": busy.base_url}]}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(data))
    result = jurist(*RUN, "--out", "r", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("jurist: pre-run check:")]
    assert len(warnings) == 2, result.stderr
    assert any("flaky: 1 of 2 attempts failed (HTTP 500" in line for line in warnings)
    assert any("busy (HTTP 429" in line for line in warnings)
    assert flaky.stats.requests == 2 and busy.stats.requests == 2 * 2  # every answer and judgment


def test_a_finished_run_with_its_server_down_probes_nothing_and_scores_the_same(tmp_path: Path) -> None:
    """Everything on disk: nothing to send, so nothing to probe. (A NEW directory would need requests,
    and the cache cannot stand in for a server that does not answer: it cannot say which weights it
    serves now. That run is refused in one line: the refused-connection test above.)"""
    server = MockOpenAI()  # stopped by the test itself
    server.start()
    models(tmp_path, server.base_url)
    first = jurist(*RUN, "--out", "r", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert server.stats.probes == 2
    rows = json.loads((tmp_path / "r" / "run.json").read_text())["ledger"]["rows"]
    assert sum(row["requests"] for row in rows if row["phase"] == "check") == 2  # probes are counted there
    server.stop()
    shutil.copytree(tmp_path / "r", tmp_path / "copy")
    again = jurist(*RUN, "--out", "copy", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "pre-run check" not in again.stderr
    ledger = json.loads((tmp_path / "copy" / "run.json").read_text())["ledger"]
    assert not [row for row in ledger["rows"] if row["phase"] == "check"], ledger
    assert json.loads((tmp_path / "copy" / "run.json").read_text())["usage"]["requests"] == 0
    assert again.stdout == first.stdout  # the same scores, from the same answers and judgments
