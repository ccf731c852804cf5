"""Bounded input: sample counts, suite sizes, YAML nesting and credentials in URLs are one-line errors
(exit 2) before any work, and the open-file limit is fitted to ``--max-concurrency`` (the soft limit
raised where the hard one allows, else the concurrency lowered, said once)."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import write_models_file
from jurist.config import MAX_SAMPLES, load_models_file, load_suite, models_from_strings
from jurist.config.model_strings import ModelStringOptions
from jurist.errors import InputError, JuristError
from jurist.run.task_options import TaskFlags, task_settings

SECRET = "sk-live-do-not-print-9f8e7d"


def _jurist(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "jurist", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    return lines[0]


def test_sample_counts_are_bounded_on_the_command_line_and_in_a_suite(tmp_path: Path) -> None:
    with pytest.raises(JuristError, match=f"at most {MAX_SAMPLES:,} answers per prompt"):
        task_settings(["starter"], TaskFlags(samples=["1000000000"]))
    assert task_settings(["starter"], TaskFlags(samples=[str(MAX_SAMPLES)]))["starter"].samples == MAX_SAMPLES
    suite = tmp_path / "suite.yaml"
    suite.write_text("tasks:\n  starter:\n    samples: 1000000000\n")
    with pytest.raises(InputError, match="line 3: tasks.starter.samples: 1,000,000,000 is more than 1,000"):
        load_suite(suite)


def test_a_suite_of_too_many_tasks_and_too_deep_yaml_are_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text("tasks:\n" + "".join(f"  - task{i}\n" for i in range(1001)))
    with pytest.raises(InputError, match="1,001 tasks: at most 1,000"):
        load_suite(suite)
    deep = "tasks: " + "[" * 5000 + "]" * 5000 + "\n"
    suite.write_text(deep)
    with pytest.raises(InputError, match="nested too deeply"):
        load_suite(suite)
    models = tmp_path / "models.yaml"
    models.write_text("m:\n  model: m\n  extra: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError, match="nested too deeply"):
        load_models_file(models, {})
    models.write_text("m: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n")
    with pytest.raises(InputError, match="nested too deeply"):
        load_models_file(models, {})


def test_credentials_in_a_url_are_refused_without_echoing_them(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(f"m:\n  model: m\n  endpoints:\n    - api_base: http://user:{SECRET}@127.0.0.1:9/v1\n")
    with pytest.raises(InputError) as caught:
        load_models_file(models, {})
    assert "line 4: model 'm': endpoints[0]: api_base: the URL holds a user or password" in str(caught.value)
    assert SECRET not in str(caught.value)
    models.write_text("m:\n  model: m\n")  # sent to OPENAI_BASE_URL
    with pytest.raises(JuristError) as env_caught:
        load_models_file(models, {"OPENAI_BASE_URL": f"https://u:{SECRET}@h/v1"})
    assert "OPENAI_BASE_URL: the URL holds" in str(env_caught.value) and SECRET not in str(env_caught.value)
    with pytest.raises(JuristError) as own:
        models_from_strings([f"openai/gpt@http://u:{SECRET}@127.0.0.1/v1"], ModelStringOptions(), env={})
    assert "no user or password in the URL" in str(own.value) and SECRET not in str(own.value)


def test_the_command_line_says_each_bad_input_in_one_line(tmp_path: Path) -> None:
    models = write_models_file(tmp_path / "models.yaml", "http://127.0.0.1:9/v1", {"m": {}})
    base = ["run", "--models-file", str(models), "--model", "m", "--no-check", "--no-progress"]
    said = _one_line(_jurist(*base, "--samples", "1000000000", cwd=tmp_path))
    assert "--samples 1000000000: at most 1,000" in said
    models.write_text(
        models.read_text().replace("http://127.0.0.1:9/v1", f"http://user:{SECRET}@127.0.0.1:9/v1")
    )
    said = _one_line(_jurist(*base, cwd=tmp_path))
    assert "holds a user or password" in said and SECRET not in said
    models.write_text("m: " + "[" * 100000 + "\n")
    assert "nested too deeply" in _one_line(_jurist(*base, cwd=tmp_path))


_FIT = textwrap.dedent(
    """
    import logging, resource, sys
    logging.basicConfig(level=logging.WARNING, format="jurist: %(message)s")
    from jurist.engine.pacing.limits import fit_fd_limit
    print(fit_fd_limit(int(sys.argv[1])), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    """
)


def _fit_under(soft: int, hard: int, concurrency: int) -> tuple[list[int], str]:
    """``fit_fd_limit`` in a process whose open-file limit is really (soft, hard)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    done = subprocess.run(
        [sys.executable, "-c", _FIT, str(concurrency)],
        capture_output=True, text=True, timeout=60, preexec_fn=limit,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [int(word) for word in done.stdout.split()], done.stderr


def test_the_open_file_limit_is_raised_when_the_hard_one_allows_else_the_concurrency_lowered() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 400:
        pytest.skip(f"this machine's hard open-file limit is {hard}")
    (allowed, soft), said = _fit_under(100, hard, 300)
    assert allowed == 300 and soft >= 364 and not said  # raised: nothing to say
    (allowed, soft), said = _fit_under(100, 100, 300)
    assert allowed == 36 and soft == 100
    assert "--max-concurrency 300 lowered to 36: the open-file limit is 100 (hard 100)" in said
