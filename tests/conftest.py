"""Shared fixtures: a mock OpenAI server, a models file pointing at it, and a quiet pipeline runner."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jurist.engine.pacing.retry import RetryPolicy  # noqa: E402
from jurist.run.config import (  # noqa: E402
    BudgetSettings,
    EngineSettings,
    JudgeCardSettings,
    RunConfig,
    RunResult,
    ScoringSettings,
)
from jurist.run.pipeline import run_pipeline  # noqa: E402
from mock_openai import MockOpenAI  # noqa: E402

_GROUPS: dict[str, tuple[type[Any], dict[str, str]]] = {
    "engine": (EngineSettings, {}),
    "scoring": (ScoringSettings, {}),
    "budget": (BudgetSettings, {}),
    "card": (JudgeCardSettings, {"judge_card": "items", "judge_gate": "gate", "gold": "gold"}),
}


def run_config(**settings: Any) -> RunConfig:
    """A RunConfig from one flat list of settings, each sorted into its group (``progress=False`` is the
    engine's, ``judge_card=0`` the card's): tests name the setting they care about, not where it lives."""
    groups: dict[str, dict[str, Any]] = {}
    for group, (kind, renamed) in _GROUPS.items():
        names = renamed or {f.name: f.name for f in dataclasses.fields(kind)}
        for flat, own in names.items():
            if flat in settings:
                groups.setdefault(group, {})[own] = settings.pop(flat)
    built = {group: _GROUPS[group][0](**values) for group, values in groups.items()}
    return RunConfig(**settings, **built)


def build_sweep_plan(**flags: Any) -> Any:
    """``build_plan`` from the sweep command's flat option names (``judges=``, ``gpus=``, ``max_attempts=``),
    each sorted into its group: tests name the option they care about, not where it lives."""
    from jurist.sweep.build import SweepJudges, SweepPlacement, SweepTasks, build_plan

    def take(*names: str) -> dict[str, Any]:
        return {name: flags.pop(name) for name in names if name in flags}

    tasks = SweepTasks(**take("tasks", "suite", "bench_options", "samples", "limit", "baselines"))
    judging = take("judges", "models_file", "model_strings", "judge_concurrency")
    if "judge_concurrency" in judging:
        judging["concurrency"] = judging.pop("judge_concurrency")
    placement = SweepPlacement(
        **take("gpus", "tensor_parallel", "servers", "serve_kind", "checkpoint_settings", "local", "ray")
    )
    retry = take("max_attempts", "retry_base_delay")
    engine = take("max_concurrency", "cache", "check", "progress")
    if "cache_dir" in flags:
        engine["cache_path"] = flags.pop("cache_dir")
    if retry:
        engine["retry"] = RetryPolicy(retry.get("max_attempts", 6), retry.get("retry_base_delay", 1.0))
    scoring = take("seed")
    if "bootstrap" in flags:
        scoring["n_bootstrap"] = flags.pop("bootstrap")
    return build_plan(
        flags.pop("checkpoints"), tasks, SweepJudges(**judging), placement, EngineSettings(**engine),
        ScoringSettings(**scoring), **flags,
    )  # fmt: skip


SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


@pytest.fixture(autouse=True)
def _private_request_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own request cache directory: never ~/.cache, never another test's entries."""
    directory = tmp_path_factory.mktemp("jurist-cache")
    monkeypatch.setenv("JURIST_CACHE_DIR", str(directory))
    return directory


@pytest.fixture(autouse=True, scope="session")
def _official_arena_hard_prompts() -> Iterator[None]:
    """The "arena-hard" protocols read upstream's judge prompts from the shared data, never the network
    (session-wide, so module-scoped runs see it too)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_ARENA_HARD_PROMPTS", str(SHARED_DATA / "arena-hard" / "official-prompts"))
        yield


STOPWORDS_WHEEL = "llama-index-core==0.14.25"
"""A PyPI package that ships NLTK's stop-word corpus (``_static/nltk_cache/corpora/stopwords``): the only
registry source of the list IFBench's ``ratio:stop_words`` counts. Test data only, never a dependency."""


def nltk_stopwords_dir() -> Path | None:
    """An NLTK data folder holding ``corpora/stopwords``, taken once from :data:`STOPWORDS_WHEEL` into
    ``~/.cache/jurist-tests`` (pip download, a few seconds); None where PyPI cannot be reached."""
    import subprocess
    import zipfile

    folder = Path.home() / ".cache" / "jurist-tests" / "nltk_stopwords"
    if (folder / "corpora" / "stopwords" / "english").is_file():
        return folder
    download = folder.parent / "wheels"
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", STOPWORDS_WHEEL, "-d", download],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        (wheel,) = download.glob("llama_index_core-*.whl")
        prefix = "llama_index/core/_static/nltk_cache/"
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.startswith(prefix + "corpora/stopwords/") and not name.endswith("/"):
                    target = folder / name[len(prefix) :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
    except (OSError, ValueError, subprocess.SubprocessError, zipfile.BadZipFile):
        return None
    return folder if (folder / "corpora" / "stopwords" / "english").is_file() else None


@pytest.fixture(autouse=True, scope="session")
def _offline_nltk_data() -> Iterator[None]:
    """IFEval/IFBench checkers find NLTK's punkt_tab in the shared data (and the stop-word list where
    PyPI has it for us), never NLTK's downloader."""
    folders = [SHARED_DATA / "nltk_data", nltk_stopwords_dir()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NLTK_DATA", os.pathsep.join(str(f) for f in folders if f is not None))
        yield


@pytest.fixture
def mock_server() -> Iterator[Callable[..., MockOpenAI]]:
    servers: list[MockOpenAI] = []

    def start(**kwargs: Any) -> MockOpenAI:
        server = MockOpenAI(**kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def write_models_file(path: Path, base_url: str | list[str], aliases: dict[str, dict[str, Any]]) -> Path:
    """A models file whose every alias is served by the mock (``model`` = the alias unless given)."""
    urls = [base_url] if isinstance(base_url, str) else base_url
    data = {}
    for alias, extra in aliases.items():
        entry: dict[str, Any] = {
            "model": alias,
            "api_type": "openai",
            "endpoints": [{"api_base": url, "api_key": None} for url in urls],
            "parallel": 8,
            "max_tokens": 64,
            "temperature": 0.0,
            "timeout": 5,
        }
        entry.update(extra)
        data[alias] = entry
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def run_quiet() -> Callable[..., RunResult]:
    def run(**kwargs: Any) -> RunResult:
        kwargs.setdefault("progress", False)
        kwargs.setdefault("retry", FAST_RETRY)
        kwargs.setdefault("check", False)  # the pre-run probe has its own tests (test_check.py)
        return run_pipeline(run_config(**kwargs))

    return run
