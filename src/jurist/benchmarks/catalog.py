"""What ``jurist list`` says about a benchmark without loading it: its kind, default samples, reference
judge, and whether its data and judge prompts are on this machine (and where), or the one line that gets them.

Each benchmark module describes itself with a ``catalog_card(name) -> BenchmarkCard`` function beside its
factory, so the facts stay with the code that uses them; the registry finds it
(:func:`jurist.benchmarks.registry.benchmark_card`). Presence checks only look at files (a data directory,
jurist's cache, the Hugging Face cache, the package, NLTK's folders): no network, no parsing, so the whole
list is quick.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jurist.store import data_dirs

if TYPE_CHECKING:
    from jurist.benchmarks.base import Benchmark
    from jurist.benchmarks.data_files import PinnedFile
    from jurist.benchmarks.presets import ReferenceJudge

BenchmarkKind = Literal["pairwise", "rubric", "rules", "judge-accuracy", "placement"]
"""What a benchmark asks of a run: judge against a baseline, grade by rubric, check by rule, measure the
judge on fixed pairs, or place a model among human-voted ratings."""

Source = Literal["data dir", "jurist cache", "hub cache", "package", "env", "nltk path"]
"""Where a local copy was found: ``$JURIST_DATA_DIR`` (``--data-dir``), jurist's download cache, the
Hugging Face hub cache, jurist's own package, a benchmark's own variable (named in ``path``), or a folder
NLTK searches."""


@dataclass(frozen=True)
class Found:
    """A local copy: where it was found and its path (the first file's folder when there are several)."""

    source: Source
    path: str


@dataclass(frozen=True)
class Need:
    """One thing a benchmark reads from disk (its data, its judge prompts): how to find it, how to get it."""

    what: str
    """``data``, ``judge prompts`` (the table's two columns), or another file set such as ``checker data``
    (NLTK's, for rule checkers) or AlpacaEval's ``official LC files``."""
    find: Callable[[], Found | None] = field(compare=False)
    """The local copy, if any (files only: no network, no parsing)."""
    get: str
    """The one line that gets it when absent (a command, or what to put where)."""


@dataclass(frozen=True)
class BenchmarkCard:
    """A benchmark as ``jurist list`` shows it."""

    name: str
    kind: BenchmarkKind
    default_samples: int
    reference_judge: str | None
    """The judge behind the published numbers, in a few words; None where there is none (rules, humans)."""
    needs: tuple[Need, ...]
    about: str = ""


def kind_of(bench: Benchmark) -> BenchmarkKind:
    """The kind of a loaded benchmark, as its metrics and judge kind say."""
    if bench.judge_kind is None:
        return "rules"
    if "judge-accuracy" in bench.metrics:
        return "judge-accuracy"
    if "arena-elo" in bench.metrics or "arena-calibration" in bench.metrics:
        return "placement"
    if "rubric" in bench.metrics:
        return "rubric"
    return "pairwise"


def reference_text(reference: ReferenceJudge | None) -> str | None:
    """``gpt-4.1 (temperature 0, max_tokens 16000)``: the reference judge in a few words."""
    if reference is None:
        return None
    settings = [
        f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}"
        for name, value in (("temperature", reference.temperature), ("max_tokens", reference.max_tokens))
        if value is not None
    ]
    model = reference.model or "any model"
    return f"{model} ({', '.join(settings)})" if settings else model


# -- finding local copies ---------------------------------------------------------------------------------
def pinned_copy(pins: Sequence[PinnedFile]) -> Found | None:
    """Where every one of ``pins`` has a local copy (data dir first, then jurist's cache), as
    :func:`jurist.benchmarks.data_files.resolve` would read them; None if one is missing. Bytes are
    checked when a run reads them, not here."""
    from jurist.benchmarks.data_files import cache_dir

    sources: list[Found] = []
    for pinned in pins:
        local = next(
            (
                folder / relative
                for folder in data_dirs()
                for relative in pinned.local_paths
                if (folder / relative).is_file()
            ),
            None,
        )
        cached = cache_dir() / pinned.cache_name
        if local is not None:
            sources.append(Found("data dir", str(local.parent)))
        elif cached.is_file():
            sources.append(Found("jurist cache", str(cached.parent)))
        else:
            return None
    return sources[0] if sources else None


def data_dir_file(*relatives: str) -> Found | None:
    """The first ``$JURIST_DATA_DIR/<relative>`` file that exists."""
    for folder in data_dirs():
        for relative in relatives:
            if (folder / relative).is_file():
                return Found("data dir", str((folder / relative).parent))
    return None


def package_file(package: str, relative: str) -> Found | None:
    """A file shipped in an installed package (jurist's, or a plugin's)."""
    from importlib.resources import files

    path = files(package).joinpath(relative)
    return Found("package", str(path)) if path.is_file() else None


def env_folder(variable: str, *relatives: str) -> Found | None:
    """A file under the folder a benchmark's own variable names (``$JURIST_JUDGEBENCH_DIR``)."""
    root = os.environ.get(variable)
    if not root:
        return None
    for relative in relatives:
        if (Path(root).expanduser() / relative).is_file():
            return Found("env", f"${variable}={root}")
    return None


def offline_hint(*relatives: str) -> str:
    """``offline: a --data-dir holding ifeval/input_data.jsonl`` (``$JURIST_DATA_DIR`` is the same)."""
    return f"offline: a --data-dir holding {', '.join(relatives)}"


def fetch_line(name: str, *relatives: str) -> str:
    """The one line for files a run downloads itself (pinned, sha256-checked) on first use: a dry run
    resolves the benchmark and builds its judge, so it fetches both data and judge prompts."""
    return f"`jurist run --bench {name} --dry-run` downloads the pinned files; {offline_hint(*relatives)}"


def nltk_data(*resources: str, note: str = "") -> Need:
    """The NLTK resources a rule-checked benchmark's checkers read (found without importing nltk)."""
    from jurist.rules import download_hint, installed_in

    def find() -> Found | None:
        folders = [installed_in(resource) for resource in resources]
        if any(folder is None for folder in folders):
            return None
        return Found("nltk path", str(folders[0]))

    return Need("checker data", find, f"{download_hint(*resources)}{note}")


def card_record(card: BenchmarkCard) -> dict[str, Any]:
    """The card as JSON (``jurist list --format json``), each need with ``present``, ``source``, ``path``
    and, when absent, ``get``."""
    needs = []
    for need in card.needs:
        found = need.find()
        entry: dict[str, Any] = {"what": need.what, "present": found is not None}
        if found is not None:
            entry |= {"source": found.source, "path": found.path}
        else:
            entry["get"] = need.get
        needs.append(entry)
    return {
        "name": card.name,
        "kind": card.kind,
        "default_samples": card.default_samples,
        "reference_judge": card.reference_judge,
        "about": card.about,
        "needs": needs,
    }


def arena_hard_prompts(name: str) -> Need:
    """Upstream Arena-Hard's judge prompts, which benchmark ``name``'s ``arena-hard`` protocol reads
    (Arena-Hard, JudgeBench, the arenas)."""
    from jurist.judging import local_settings_copy

    def find() -> Found | None:
        copy = local_settings_copy()
        return Found(copy[0], copy[1]) if copy is not None else None  # type: ignore[arg-type]

    folder = "arena-hard/official-prompts/arena-hard-v2.0.yaml and judge_settings.json"
    return Need("judge prompts", find, fetch_line(name, folder))
