"""JudgeBench (ScalerLab, Tan et al. 2025) as a benchmark: its response pairs, loaded locally or from the Hub.

JudgeBench measures the judge, not the answers: each pair holds one objectively correct and one wrong
response by the same strong model, so there is nothing to generate. As a jurist benchmark its pairs are
shipped answers: ``response_A`` plays the baseline (shown first in game 1, as upstream does) and
``response_B`` the candidate, so the pairwise judge kind runs both orders, and the metric is judge accuracy
with upstream's exact two-game rule (:mod:`jurist.benchmarks.judgebench_scoring`).

Options: ``-B split=gpt|claude|PATH`` (default gpt). A split name is found as every benchmark's data is
(:mod:`jurist.benchmarks.data_files`): ``$JURIST_DATA_DIR`` (``judgebench/data/<upstream file name>``, the
shared data's layout), jurist's cache, else one download of upstream's file at :data:`COMMIT`, sha256-checked;
``$JURIST_JUDGEBENCH_DIR`` (a copy of upstream's ``data/``, read as it is) comes first when set, and the Hub
dataset last, when the download fails and ``datasets`` is installed.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, take_options
from jurist.benchmarks.catalog import (
    BenchmarkCard,
    Found,
    Need,
    arena_hard_prompts,
    env_folder,
    fetch_line,
    pinned_copy,
)
from jurist.benchmarks.data_files import PinnedFile, resolve_files
from jurist.benchmarks.judgebench_scoring import (
    LABELS,
    Decision,
    JudgeScore,
    Label,
    Pair,
    normalize_decision,
    score_decisions,
    source_group,
    unswap,
)
from jurist.errors import InputError, JuristError

__all__ = [
    "Decision",
    "JudgeScore",
    "Pair",
    "load_pairs",
    "normalize_decision",
    "score_decisions",
    "source_group",
    "unswap",
]

HUB_DATASET = "ScalerLab/JudgeBench"
# Split name -> the response model whose pairs it holds (the upstream data file names embed it).
SPLITS: dict[str, str] = {"gpt": "gpt-4o-2024-05-13", "claude": "claude-3-5-sonnet-20240620"}
OVERRIDE_ENV = "JURIST_JUDGEBENCH_DIR"
"""A folder holding upstream's ``data/*.jsonl`` as they are, read before ``$JURIST_DATA_DIR`` (unchecked)."""
REPOSITORY = "ScalerLab/JudgeBench"
COMMIT = "e2c52c284e735e139b3daa61c206ee208f36c461"
_SHA256 = {
    "gpt": "d5106306b38dead1b2e964ecf5534a3e7b2fc4b8d3b8da327599edfcebd76042",
    "claude": "3b70504588e400613bf5744a20a345da8701b7150be9a30c9db0e6f3d7b70a62",
}
"""The shared data's copies of upstream's files at :data:`COMMIT` (its SOURCE.md)."""


def split_file_name(split: str) -> str:
    """Upstream's file name of a split (``dataset=judgebench,response_model=gpt-4o-2024-05-13.jsonl``)."""
    return f"dataset=judgebench,response_model={SPLITS[split]}.jsonl"


def pinned_split(split: str) -> PinnedFile:
    """A split's file as pinned data: ``judgebench/data/<name>`` (or ``judgebench/<name>``) in a data dir."""
    name = split_file_name(split)
    return PinnedFile(
        "judgebench",
        split,
        (f"judgebench/data/{name}", f"judgebench/{name}"),
        f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/data/{name}",
        _SHA256[split],
        f"{REPOSITORY}@{COMMIT[:7]} data/{name}",
    )


DEFAULT_SPLIT = "gpt"
BASELINE = "response_A"
CANDIDATE = "response_B"
_PAIR_TEXT_FIELDS = ("question", "response_model", "response_A", "response_B")

# --------------------------------------------------------------------------------------------------
# Reading pairs


def field_error(path: object, line: int, field: str, message: str) -> InputError:
    return InputError(path, f"line {line}, field {field!r}", message)


def pair_from_record(record: Mapping[str, Any], path: object, line: int) -> Pair:
    """Validate one JSON object into a ``Pair``; errors name the file, line and field."""
    texts: dict[str, str] = {}
    pair_id = record.get("pair_id")
    if not isinstance(pair_id, str) or not pair_id:
        raise field_error(path, line, "pair_id", f"expected a non-empty string, got {pair_id!r}")
    for field in ("source", *_PAIR_TEXT_FIELDS):
        if field not in record:
            raise field_error(path, line, field, "missing")
        value = record[field]
        if not isinstance(value, str):
            raise field_error(path, line, field, f"expected a string, got {type(value).__name__}")
        texts[field] = value
    try:
        source_group(texts["source"])
    except ValueError as exc:
        raise field_error(path, line, "source", str(exc)) from None
    original = record.get("original_id")
    original_id: int | None
    if original is None:
        original_id = None
    elif isinstance(original, bool):
        raise field_error(path, line, "original_id", f"expected an integer or null, got {original!r}")
    elif isinstance(original, int):
        original_id = original
    elif isinstance(original, float) and original.is_integer():
        original_id = int(original)
    elif isinstance(original, str) and original.strip().lstrip("-").isdigit():
        original_id = int(original)
    else:
        raise field_error(path, line, "original_id", f"expected an integer or null, got {original!r}")
    label = record.get("label")
    if label not in LABELS:
        raise field_error(path, line, "label", f"expected 'A>B' or 'B>A', got {label!r}")
    return Pair(
        pair_id=pair_id,
        original_id=original_id,
        source=texts["source"],
        question=texts["question"],
        response_model=texts["response_model"],
        response_A=texts["response_A"],
        response_B=texts["response_B"],
        label=cast(Label, label),
    )


def read_jsonl_any(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a .jsonl or .jsonl.gz file."""
    try:
        handle = (
            gzip.open(path, "rt", encoding="utf-8")
            if path.name.endswith(".gz")
            else path.open(encoding="utf-8")
        )
    except OSError as exc:
        raise InputError(path, "", f"cannot open: {exc.strerror or exc}") from None
    with handle:
        try:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise InputError(path, f"line {number}", f"invalid JSON: {exc.msg}") from None
                if not isinstance(record, dict):
                    raise InputError(
                        path, f"line {number}", f"expected a JSON object, got {type(record).__name__}"
                    )
                yield number, record
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise InputError(path, "", f"cannot read: {exc}") from None


def _resolve_split(split: str, data_dir: str | os.PathLike[str] | None) -> Path:
    root = data_dir if data_dir is not None else os.environ.get(OVERRIDE_ENV)
    if root is None:
        raise JuristError(
            f"JudgeBench split {split!r} needs a local copy: pass data_dir= or set {OVERRIDE_ENV} "
            f"to the folder holding upstream's data/*.jsonl, or use load_split({split!r})"
        )
    base = Path(root)
    name = split_file_name(split)
    for candidate in (base / name, base / "data" / name):
        if candidate.exists():
            return candidate
    raise InputError(base, "", f"no {name} for split {split!r} in this folder or its data/ subfolder")


def load_pairs(
    path_or_split: str | os.PathLike[str], *, data_dir: str | os.PathLike[str] | None = None
) -> list[Pair]:
    """Read JudgeBench pairs from a local .jsonl(.gz) file or a split name ("gpt"/"claude") in ``data_dir``.

    Split names resolve to upstream's file names inside ``data_dir`` (or ``$JURIST_JUDGEBENCH_DIR``), so the
    same call works on a checkout of the upstream repository. Duplicate ``pair_id``s are rejected.
    """
    text = os.fspath(path_or_split)
    path = _resolve_split(text, data_dir) if text in SPLITS and not Path(text).exists() else Path(text)
    pairs: list[Pair] = []
    seen: dict[str, int] = {}
    for number, record in read_jsonl_any(path):
        pair = pair_from_record(record, path, number)
        if pair.pair_id in seen:
            raise field_error(path, number, "pair_id", f"duplicate of line {seen[pair.pair_id]}")
        seen[pair.pair_id] = number
        pairs.append(pair)
    if not pairs:
        raise InputError(path, "", "no JudgeBench pairs in file")
    return pairs


def load_pairs_from_hub(split: str, *, revision: str | None = None) -> list[Pair]:
    """Download a split ("gpt": 350 pairs, "claude": 270) of the HF dataset ``ScalerLab/JudgeBench``.

    ``datasets`` is imported here so the rest of the harness works without it; pin ``revision`` (a commit
    hash) for reproducible runs.
    """
    if split not in SPLITS:
        raise JuristError(f"unknown JudgeBench split {split!r}; choose one of {', '.join(SPLITS)}")
    try:
        import datasets  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise JuristError(
            "loading JudgeBench from the Hub needs the 'datasets' package: pip install datasets"
        ) from None
    rows = datasets.load_dataset(HUB_DATASET, split=split, revision=revision)
    where = f"hf://datasets/{HUB_DATASET}[{split}]"
    return [pair_from_record(row, where, number) for number, row in enumerate(rows, start=1)]


# --------------------------------------------------------------------------------------------------
# The benchmark


def _override_file(split: str) -> Path | None:
    """Upstream's file of ``split`` under ``$JURIST_JUDGEBENCH_DIR`` (or its data/), if set and there."""
    root = os.environ.get(OVERRIDE_ENV)
    if not root:
        return None
    name = split_file_name(split)
    for candidate in (Path(root) / name, Path(root) / "data" / name):
        if candidate.is_file():
            return candidate
    return None


def load_split(split: str) -> tuple[str, list[Pair]]:
    """(set name, pairs) for a split: a pairs file; or gpt/claude from ``$JURIST_JUDGEBENCH_DIR``, the data
    dir, the cache or one download; else the HF Hub (one error naming every way when none works)."""
    path = Path(split)
    if path.is_file():
        return path.name.removesuffix(".gz").removesuffix(".jsonl"), load_pairs(path)
    if split not in SPLITS:
        raise JuristError(f"-B split: {split!r} is neither {' nor '.join(SPLITS)} nor an existing pairs file")
    local = _override_file(split)
    if local is not None:
        return split, load_pairs(local)
    pinned = pinned_split(split)
    hint = f" (or {OVERRIDE_ENV} to a folder holding upstream's data/)"
    try:
        (found,) = resolve_files(f"judgebench -B split={split}", [pinned], hint)
    except JuristError as exc:
        if pinned_copy([pinned]) is not None:
            raise  # a local copy with other bytes: never replaced by the Hub's
        return split, _from_hub(split, str(exc))
    return split, load_pairs(found)


def hub_client_installed() -> bool:
    """Whether ``datasets`` (the Hub fallback's client) is installed; it is not imported to find out."""
    import importlib.util

    return importlib.util.find_spec("datasets") is not None


def _from_hub(split: str, no_file: str) -> list[Pair]:
    """The split from the Hub when no file could be had: tried only with ``datasets`` installed and the
    hub reachable (checked in seconds), else ``no_file`` is the error."""
    from jurist.benchmarks import hub

    if not hub_client_installed():
        raise JuristError(no_file)
    why = hub.unreachable_reason()
    if why is not None:
        raise JuristError(f"{no_file}; the Hugging Face hub is unreachable too ({why})")
    try:
        with hub.quiet_hub_logs():
            return load_pairs_from_hub(split)
    except Exception as exc:  # the Hub client raises many types (offline, missing package, not found)
        reason = " ".join(str(exc).split())[:300]
        raise JuristError(f"{no_file}; loading hf://datasets/{HUB_DATASET} failed too ({reason})") from None


def pair_of(question: Question) -> Pair:
    """The JudgeBench pair a question was made from (kept whole in its metadata)."""
    pair = question.metadata["pair"]
    assert isinstance(pair, Pair)
    return pair


def benchmark(options: BenchmarkOptions) -> Benchmark:
    """Registry entry: ``-B split=gpt|claude|PATH``."""
    chosen = take_options("judgebench", options, {"split": "gpt, claude or a pairs .jsonl"})
    name, pairs = load_split(chosen.get("split", DEFAULT_SPLIT))
    questions = [
        Question(uid=pair.pair_id, prompt=pair.question, category=pair.group, metadata={"pair": pair})
        for pair in pairs
    ]
    return Benchmark(
        name=f"judgebench-{name}",
        questions=questions,
        shipped_answers={
            BASELINE: {pair.pair_id: pair.response_A for pair in pairs},
            CANDIDATE: {pair.pair_id: pair.response_B for pair in pairs},
        },
        baseline=BASELINE,
        candidates=(CANDIDATE,),
        metrics=("judge-accuracy",),
        info={"split": name, "response_models": sorted({pair.response_model for pair in pairs})},
    )


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the default split's pairs, and the ``arena-hard`` protocol's prompts."""
    pinned = pinned_split(DEFAULT_SPLIT)
    override = (split_file_name(DEFAULT_SPLIT), f"data/{split_file_name(DEFAULT_SPLIT)}")

    def data() -> Found | None:
        return env_folder(OVERRIDE_ENV, *override) or pinned_copy([pinned])

    return BenchmarkCard(
        name,
        "judge-accuracy",
        1,
        None,
        (
            Need(
                "data",
                data,
                fetch_line(name, pinned.local_paths[0]),
            ),
            arena_hard_prompts(name),
        ),
        about="fixed response pairs (one right, one wrong): how often the judge picks the right one",
    )
