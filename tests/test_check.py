"""``jurist check`` and the pre-run check: every problem reported at once, keys never shown."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import run_config, write_models_file
from jurist.engine.check import needs_key
from jurist.engine.local.embedded import EMBEDDED_ALIAS
from jurist.engine.servers.base import free_port
from jurist.errors import JuristError
from jurist.run.pipeline import Pipeline
from jurist.run.plan import resolve

SECRET = "sk-check-SECRET-0123456789"


def jurist(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY" and not k.startswith("JURIST_CHECK")}
    return {**env, **extra}


def models_with_problems(tmp_path: Path, base_url: str) -> Path:
    """One working alias, a dead port, a keyless hosted API, and a key from an unset variable."""
    path = write_models_file(
        tmp_path / "m.yaml",
        base_url,
        {
            "good": {"endpoints": [{"api_base": base_url, "api_key": SECRET}]},
            "dead": {"endpoints": [{"api_base": f"http://127.0.0.1:{free_port()}/v1", "api_key": None}]},
            "remote": {"endpoints": [{"api_base": "https://api.openai.com/v1", "api_key": None}]},
            "unset": {"endpoints": [{"api_base": base_url, "api_key": "${JURIST_CHECK_UNSET_KEY}"}]},
        },
    )
    return path


def test_check_reports_every_problem_in_one_run(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(require_key=SECRET)
    models_with_problems(tmp_path, server.base_url)
    result = jurist("check", "--models-file", "m.yaml", "--timeout", "5", cwd=tmp_path, env=clean_env())
    assert result.returncode == 1, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert set(lines) == {"good", "dead", "remote", "unset"}
    assert "ok" in lines["good"] and server.base_url in lines["good"]
    assert "unreachable" in lines["dead"] and "127.0.0.1" in lines["dead"]
    assert "https://api.openai.com/v1" in lines["remote"] and "no API key" in lines["remote"]
    assert "${JURIST_CHECK_UNSET_KEY}" in lines["unset"] and "not set" in lines["unset"]
    assert "3 problem(s) in 4 endpoint(s)" in result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert server.stats.probes == 1 and server.stats.requests == 0  # only the usable endpoint is probed
    assert server.stats.bodies == []  # a probe is no model request


def test_check_selected_aliases_and_rejected_key(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(require_key="sk-the-right-key-000")
    write_models_file(tmp_path / "m.yaml", server.base_url, {"a": {}, "b": {}})
    ok = jurist(
        "check",
        "--models-file",
        "m.yaml",
        "a",
        cwd=tmp_path,
        env=clean_env(OPENAI_API_KEY="sk-the-right-key-000"),
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("\n") == 1 and ok.stdout.startswith("a ")
    bad = jurist(
        "check", "--models-file", "m.yaml", "a,b", "nope", cwd=tmp_path, env=clean_env(OPENAI_API_KEY=SECRET)
    )
    assert bad.returncode == 1
    assert bad.stdout.count("key rejected") == 2 and "not defined" in bad.stdout
    assert SECRET not in bad.stdout + bad.stderr


def test_pre_run_check_stops_a_run_before_any_request(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    server = mock_server()
    models = models_with_problems(tmp_path, server.base_url)
    data = yaml.safe_load(models.read_text())
    del data["unset"]  # a run refuses to load an unset ${VAR} at all
    data["strong"] = {**data["good"], "model": "strong", "endpoints": [{"api_base": server.base_url}]}
    models.write_text(yaml.safe_dump(data))
    args: dict[str, Any] = {"models_file": models, "out": tmp_path / "run", "limit": 1}
    with pytest.raises(JuristError, match="pre-run check found 2 problem") as caught:
        run_quiet(**args, models=["strong", "dead"], judges=["remote"], check=True)
    message = str(caught.value)
    assert "dead" in message and "remote" in message and "--no-check" in message
    assert SECRET not in message
    assert server.stats.requests == 0 and not (tmp_path / "run").exists()
    # Without the check the run starts, and the dead endpoint fails request by request.
    result = run_quiet(**args, models=["strong", "dead"], judges=["good"])
    assert result.exit_code == 1 and result.failures == 1
    assert server.stats.requests == 1 + 2


def test_cli_no_check_flag_and_check_without_probe_counts(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = ["run", "--models-file", "m.yaml", "--model", "strong", "--judge", "judge-good"]
    result = jurist(*args, "--limit", "2", "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert server.stats.probes == 2 and server.stats.requests == 2 + 2 * 2
    again = jurist(*args, "--no-progress", "--limit", "3", "--no-check", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert server.stats.probes == 2 and server.stats.requests == 6 + 1 + 2


def test_pre_run_check_skips_the_embedded_model_and_idle_aliases(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurist.engine.check as check

    probed: list[str] = []
    real_probe = check._probe

    async def recording_probe(spec: Any, *args: Any) -> Any:
        probed.append(spec.alias)
        return await real_probe(spec, *args)

    monkeypatch.setattr(check, "_probe", recording_probe)
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "idle": {}})
    # The default judge is the embedded model: jurist starts it later (a serve block), so it is never probed.
    Pipeline(resolve(run_config(models_file=models, models=["strong"], out=tmp_path / "run")))._precheck()
    assert probed == ["strong"] and server.stats.probes == 1
    assert EMBEDDED_ALIAS not in probed


def test_a_managed_server_is_reported_not_probed() -> None:
    from jurist.engine.check import run_checks
    from jurist.engine.local.embedded import embedded_model_spec

    (result,) = run_checks({EMBEDDED_ALIAS: embedded_model_spec()})
    assert result.ok and result.endpoint.startswith("serve: llama.cpp")
    assert "not probed" in result.line()


@pytest.mark.parametrize(
    ("url", "needed"),
    [
        ("http://127.0.0.1:8000/v1", False),
        ("http://localhost:8000/v1", False),
        ("http://[::1]:8000/v1", False),
        ("http://10.1.2.3:8000/v1", False),
        ("http://gpu-node-3:8000/v1", False),
        ("http://box.local/v1", False),
        ("http://gpu1.lab.org:8000/v1", False),  # a lab's keyless vLLM on a dotted host (issue 27)
        ("https://api.example.com/v1", False),  # unknown: the probe finds out (401 refuses)
        ("https://8.8.8.8/v1", False),
        ("https://api.openai.com/v1", True),
        ("https://API.OpenAI.com./v1", True),
        ("https://my-east.openai.azure.com/openai", True),
        ("https://openrouter.ai/api/v1", True),
        ("https://notapi.openai.com.evil.org/v1", False),
    ],
)
def test_only_hosted_apis_need_a_key(url: str, needed: bool) -> None:
    assert needs_key(url) is needed
