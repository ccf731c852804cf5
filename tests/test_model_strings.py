"""Models by string (issue 27): ``openai/NAME``, ``vllm/NAME``, ``litellm/P/NAME``, ``hf/ID`` and paths beside
models-file aliases; ``--base-url``, ``--api-key`` and ``-M``; the hint for an undefined name; keys kept
out of every artifact. The end-to-end runs go from outside (``python -m jurist``) against the mock server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, build_sweep_plan, write_models_file
from jurist.config import (
    ModelStringOptions,
    load_models_file,
    models_from_strings,
    parse_settings,
    undefined_model,
)
from jurist.errors import JuristError
from jurist.redact import mask

KEY = "sk-strings-SECRET-0123456789"
FAKE_VLLM = Path(__file__).resolve().parent / "fake_vllm"


def one(name: str, env: dict[str, str] | None = None, **options: Any) -> Any:
    """The spec of one model string, read with ``env`` as the environment."""
    return models_from_strings([name], ModelStringOptions(**options), env=env or {})[name]


# -- what each string becomes ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("prefix", "url", "parallel"),
    [
        ("vllm", "http://localhost:8000/v1", 64),
        ("sglang", "http://localhost:30000/v1", 64),
        ("llamacpp", "http://localhost:8080/v1", 8),
        ("ollama", "http://localhost:11434/v1", 8),
        ("lmstudio", "http://localhost:1234/v1", 8),
    ],
)
def test_a_server_string_reaches_its_conventional_address_with_no_key(
    prefix: str, url: str, parallel: int
) -> None:
    spec = one(f"{prefix}/Qwen/Qwen2.5-7B-Instruct", env={"OPENAI_API_KEY": KEY})
    (endpoint,) = spec.endpoints
    assert (spec.alias, spec.model, spec.api_type) == (
        f"{prefix}/Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "openai",
    )
    assert endpoint.base_url == url and spec.parallel == parallel and spec.serve is None
    assert endpoint.api_key is None  # an OpenAI key is never sent to another server
    mine = one(
        f"{prefix}/m",
        env={f"{prefix.upper()}_API_KEY": "own-key-123456"},
        base_url="http://gpu1.lab.org:9/v1/",
    )
    assert mine.endpoints[0].base_url == "http://gpu1.lab.org:9/v1"
    assert (
        mine.endpoints[0].api_key == "own-key-123456"
        and mine.endpoints[0].key_from == f"{prefix.upper()}_API_KEY"
    )


def test_openai_takes_its_url_as_the_sdk_does_and_its_key_from_the_environment() -> None:
    assert one("openai/gpt-4.1").endpoints[0].base_url == "https://api.openai.com/v1"
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    spec = one("openai/gpt-4.1", env=env)
    assert spec.model == "gpt-4.1" and spec.endpoints[0].base_url == "http://127.0.0.1:9/v1"
    assert spec.endpoints[0].api_key == KEY and spec.endpoints[0].key_from == "OPENAI_API_KEY"
    given = one("openai/gpt-4.1", env=env, base_url="http://10.0.0.1:8/v1", api_key="cli-key-999999")
    assert given.endpoints[0].base_url == "http://10.0.0.1:8/v1"  # --base-url before OPENAI_BASE_URL
    assert given.endpoints[0].api_key == "cli-key-999999" and "command line" in str(
        given.endpoints[0].key_from
    )
    with pytest.raises(JuristError, match="OPENAI_BASE_URL 'ftp://x' is not an http"):
        one("openai/gpt-4.1", env={"OPENAI_BASE_URL": "ftp://x"})


def test_litellm_own_urls_and_what_is_no_string() -> None:
    spec = one("litellm/anthropic/claude-sonnet-4", env={"OPENAI_API_KEY": KEY})
    assert (spec.api_type, spec.model) == ("litellm", "anthropic/claude-sonnet-4")
    assert spec.endpoints[0].api_base is None and spec.endpoints[0].api_key is None  # litellm finds its key
    with pytest.raises(JuristError, match="litellm/PROVIDER/NAME"):
        one("litellm/claude")
    own = models_from_strings(
        ["vllm/a@http://gpu1:8000/v1", "vllm/b"], ModelStringOptions(base_url="http://gpu2:8000/v1"), env={}
    )
    assert own["vllm/a@http://gpu1:8000/v1"].endpoints[0].base_url == "http://gpu1:8000/v1"
    assert (
        own["vllm/a@http://gpu1:8000/v1"].model == "a"
        and own["vllm/b"].endpoints[0].base_url == "http://gpu2:8000/v1"
    )
    with pytest.raises(JuristError, match="no user or password"):
        one("vllm/a@http://me:pw@gpu1:8000/v1")
    with pytest.raises(JuristError, match=r"name the model after the provider \(vllm/NAME\)"):
        one("vllm/")
    assert models_from_strings(["gpt-4.1", "Qwen/Qwen2.5-7B-Instruct"], env={}) == {}


def test_an_alias_wins_over_a_string_of_the_same_name(tmp_path: Path) -> None:
    path = write_models_file(tmp_path / "m.yaml", "http://127.0.0.1:1/v1", {"vllm/x": {}})
    defined = load_models_file(path, env={})
    assert models_from_strings(["vllm/x", "vllm/y"], defined=defined, env={}).keys() == {"vllm/y"}


def test_paths_and_hub_ids_are_served_by_jurist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ckpt" / "step_10").mkdir(parents=True)
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    options = ModelStringOptions(settings=parse_settings(["gpus=[1]", "n_ctx=4096", "max_tokens=300"]))
    specs = models_from_strings(["ckpt/step_10", "./tiny.gguf", "hf/Org/Name"], options, env={})
    folder, gguf, hub = specs["ckpt/step_10"], specs["./tiny.gguf"], specs["hf/Org/Name"]
    assert folder.serve is not None and gguf.serve is not None and hub.serve is not None
    assert (folder.serve.kind, folder.serve.model, folder.model) == (
        "vllm",
        str(tmp_path / "ckpt" / "step_10"),
        "step_10",
    )
    assert (gguf.serve.kind, gguf.serve.model, gguf.model) == (
        "llama.cpp",
        str(tmp_path / "tiny.gguf"),
        "tiny",
    )
    assert (hub.serve.kind, hub.serve.model, hub.model) == ("vllm", "Org/Name", "Org/Name")
    assert folder.serve.gpus == [1] and folder.serve.n_ctx == 4096 and folder.max_tokens == 300
    assert gguf.parallel == 1 and folder.parallel == 256  # a served model keeps its server's slots busy
    with pytest.raises(JuristError, match="no such file or folder"):
        one("./missing/step_1")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(JuristError, match=r"a folder \(served by vLLM\) or a .gguf file"):
        one("notes.txt")
    with pytest.raises(JuristError, match="a URL does not apply"):
        one("hf/Org/Name@http://gpu1:8000/v1")


# -- -M, and options that no string takes -----------------------------------------------------------------
def test_settings_are_checked_and_given_to_every_string() -> None:
    settings = parse_settings(
        ["temperature=0.7", "max_tokens=512", "seed=3", "stop=[END]", "system_prompt=Be brief: yes"]
    )
    spec = one("vllm/m", settings=settings)
    assert (spec.temperature, spec.max_tokens, spec.system_prompt) == (0.7, 512, "Be brief: yes")
    assert spec.passthrough_params() == {"seed": 3, "stop": ["END"]}
    with pytest.raises(
        JuristError,
        match=r"-M tempreature: unknown setting \(did you mean temperature\?\); valid keys: max_tokens, ",
    ) as raised:
        parse_settings(["tempreature=1"])
    assert "\n" not in str(raised.value)
    with pytest.raises(JuristError, match="-M temperature=hot: expected a number"):
        parse_settings(["temperature=hot"])
    with pytest.raises(JuristError, match="expected KEY=VALUE"):
        parse_settings(["temperature"])


@pytest.mark.parametrize(
    ("names", "options", "problem"),
    [
        (["alias"], {"base_url": "http://h:1/v1"}, "--base-url applies to model strings naming no URL"),
        (["vllm/a@http://h:1/v1"], {"base_url": "http://h:2/v1"}, "--base-url applies"),
        (["hf/Org/Name"], {"api_key": KEY}, "--api-key applies to model strings reaching an API"),
        (["alias"], {"settings": {"temperature": 0.0}}, "-M temperature applies to model strings"),
        (["vllm/m"], {"settings": {"gpus": 2}}, "-M gpus: applies to a server jurist starts"),
        (["vllm/m"], {"base_url": "gpu1:8000"}, "--base-url 'gpu1:8000' is not an http"),
    ],
)
def test_an_option_no_string_takes_is_an_error(
    names: list[str], options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(JuristError, match=problem) as raised:
        models_from_strings(names, ModelStringOptions(**options), env={})
    assert KEY not in str(raised.value)


def test_a_given_key_is_a_secret_from_the_start() -> None:
    options = ModelStringOptions(api_key="cli-secret-key-424242")
    assert "cli-secret-key-424242" not in repr(options)
    assert mask("HTTP 401: bad key cli-secret-key-424242") == "HTTP 401: bad key ***"
    assert options.without_key().api_key is None


# -- the hint for an undefined name ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "string", "api_type"),
    [
        (
            "Qwen/Qwen2.5-7B-Instruct",
            "vllm/Qwen/Qwen2.5-7B-Instruct --base-url http://localhost:8000/v1",
            "openai",
        ),
        ("gpt-4.1", "openai/gpt-4.1", "openai"),
        ("claude-sonnet-4", "anthropic/claude-sonnet-4", "anthropic"),
    ],
)
def test_an_undefined_name_shows_the_string_and_four_lines_of_yaml_that_load(
    tmp_path: Path, name: str, string: str, api_type: str
) -> None:
    first, *yaml_lines = str(undefined_model(name, "no --models-file")).split("\n")
    assert (
        first.startswith(f"model {name!r} is not defined (no --models-file)") and f"e.g. {string} " in first
    )
    assert len(yaml_lines) == 4
    path = tmp_path / "m.yaml"
    path.write_text("\n".join(line[4:] for line in yaml_lines) + "\n")
    spec = load_models_file(path, env={"OPENAI_API_KEY": KEY})[name]
    assert spec.api_type == api_type


def test_a_models_file_entry_with_no_url_honours_openai_base_url(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("gpt:\n  model: gpt-4.1\n  endpoints: null\n")
    (endpoint,) = (
        load_models_file(path, env={"OPENAI_BASE_URL": "http://proxy.lab:4000/v1"})["gpt"].endpoints or []
    )
    assert endpoint.base_url == "http://proxy.lab:4000/v1"
    (default,) = load_models_file(path, env={})["gpt"].endpoints or []
    assert default.base_url == "https://api.openai.com/v1"


# -- from outside: jurist run with no models file ----------------------------------------------------------
def jurist(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def clean_env(**extra: str) -> dict[str, str]:
    dropped = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "VLLM_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    return {**env, "JURIST_DATA_DIR": str(SHARED_DATA), **extra}


def everything_written(*folders: Path) -> str:
    return "".join(
        path.read_bytes().decode("utf-8", "replace")
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file()
    )


IFEVAL = ["run", "--bench", "ifeval", "--limit", "3", "--no-progress", "--format", "json"]


def test_one_command_evaluates_a_model_by_string_with_no_models_file(
    tmp_path: Path, mock_server: Any, _private_request_cache: Path
) -> None:
    keyed = mock_server(require_key=KEY)
    runs = {
        "flag": (["--model", "openai/M", "--base-url", keyed.base_url], clean_env(OPENAI_API_KEY=KEY)),
        "env": (["--model", "openai/M"], clean_env(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=keyed.base_url)),
        "given": (["--model", "openai/M", "--base-url", keyed.base_url, "--api-key", KEY], clean_env()),
    }
    for out, (args, env) in runs.items():
        fresh = [] if out == "flag" else ["--no-cache"]  # the first run fills the cache; each is sent
        result = jurist(*IFEVAL, *args, "--out", out, *fresh, cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        (row,) = json.loads(result.stdout)
        assert row["model"] == "openai/M" and row["n_answers"] == 3
        public = json.loads((tmp_path / out / "run.json").read_text())["model_specs"]["openai/M"]
        assert public["model"] == "M" and public["endpoints"][0]["api_base"] == keyed.base_url
        source = "--api-key (given on the command line)" if out == "given" else "OPENAI_API_KEY"
        assert public["endpoints"][0]["api_key_from"] == source
        assert KEY not in result.stdout + result.stderr
    assert keyed.stats.requests_by_model == {"M": 9} and keyed.stats.auth_headers == {f"Bearer {KEY}"}
    keyless = mock_server()  # a vLLM server with no key, and none anywhere in the environment
    result = jurist(
        *IFEVAL,
        "--model",
        "vllm/M",
        "--base-url",
        keyless.base_url,
        "--out",
        "vllm",
        cwd=tmp_path,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    assert keyless.stats.requests_by_model == {"M": 3} and keyless.stats.probes == 1
    assert not any(header.startswith("Bearer") for header in keyless.stats.auth_headers)
    assert any(_private_request_cache.rglob("*.sqlite"))  # the cache was written, and holds no key
    assert KEY not in everything_written(tmp_path, _private_request_cache)


def test_judges_by_string_and_the_hint_from_outside(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    args = [
        "run",
        "--bench",
        "starter",
        "--limit",
        "2",
        "--no-progress",
        "--format",
        "json",
        "--base-url",
        server.base_url,
    ]
    result = jurist(
        *args,
        "--model",
        "vllm/strong",
        "--judge",
        "vllm/judge-good",
        "-M",
        "temperature=0",
        cwd=tmp_path,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    assert server.stats.requests_by_model["judge-good"] == 4  # two questions, two games each
    assert all(body.get("temperature") == 0 for body in server.stats.bodies if body["model"] == "strong")
    undefined = jurist(
        "run", "--bench", "ifeval", "--model", "Qwen/Qwen2.5-7B-Instruct", cwd=tmp_path, env=clean_env()
    )
    assert undefined.returncode == 2
    assert "e.g. vllm/Qwen/Qwen2.5-7B-Instruct --base-url" in undefined.stderr
    assert "endpoints: [{api_base: 'http://localhost:8000/v1'}]" in undefined.stderr
    unknown = jurist("run", "--model", "vllm/m", "-M", "nope=1", cwd=tmp_path, env=clean_env())
    assert unknown.returncode == 2 and "valid keys: max_tokens" in unknown.stderr


def test_a_checkpoint_path_is_served_by_a_managed_vllm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ckpt" / "step_7").mkdir(parents=True)
    record = tmp_path / "vllm-starts.jsonl"
    path = f"{FAKE_VLLM}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = clean_env(PATH=path, CUDA_VISIBLE_DEVICES="0,1", FAKE_VLLM_RECORD=str(record))
    result = jurist(
        *IFEVAL, "--model", "./ckpt/step_7", "-M", "gpus=1", "-M", "max_tokens=64", cwd=tmp_path, env=env
    )
    assert result.returncode == 0, result.stderr
    (start,) = [json.loads(line) for line in record.read_text().splitlines()]
    argv = start["argv"]
    assert (
        str(tmp_path / "ckpt" / "step_7") in argv and argv[argv.index("--served-model-name") + 1] == "step_7"
    )
    assert start["cuda_visible_devices"] in ("0", "1")
    (row,) = json.loads(result.stdout)
    assert row["model"] == "./ckpt/step_7" and row["n_answers"] == 3


def test_jurist_check_and_a_sweeps_judges_take_strings(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurist.sweep.plan import judging_config

    server = mock_server()
    hosted = "openai/gpt-4.1@https://api.openai.com/v1"  # its own URL: --base-url is not its
    names = ["vllm/M", f"vllm/N@{server.base_url}", hosted, "nobody"]
    result = jurist("check", *names, "--base-url", server.base_url, cwd=tmp_path, env=clean_env())
    assert result.returncode == 1
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert "ok" in lines["vllm/M"] and "ok" in lines[f"vllm/N@{server.base_url}"]
    assert "no API key for a hosted API" in lines[hosted] and "not defined" in lines["nobody"]
    assert server.stats.probes == 2
    for step in (1, 2):
        (tmp_path / "run" / f"step_{step}").mkdir(parents=True)
        (tmp_path / "run" / f"step_{step}" / "config.json").write_text("{}")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    strings = ModelStringOptions(base_url=server.base_url, api_key=KEY, settings={"temperature": 0.0})
    plan = build_sweep_plan(
        checkpoints=str(tmp_path / "run"),
        tasks="starter",
        judges=["vllm/judge-good"],
        model_strings=strings,
        out=tmp_path / "sweep",
        check=False,
    )
    config = judging_config(plan, plan.checkpoints[0], "starter")
    assert config.judges == ["vllm/judge-good"] and config.model_strings == strings
    with pytest.raises(JuristError, match=r"model 'judge' is not defined \(no --models-file\)"):
        build_sweep_plan(
            checkpoints=str(tmp_path / "run"), tasks="starter", judges=["judge"], out=tmp_path / "s2"
        )
