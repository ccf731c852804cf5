"""WritingBench (Wu et al. 2025): writing queries, each graded 1-10 on five criteria of its own.

A critic grades every criterion of an answer in its own request (:mod:`jurist.judging.rubric_prompts`);
the run reports the micro average of all criterion scores (and x10, as the leaderboard shows it), means by
domain, and the requirement scores R (mean answer score over the queries that involve style, format or
length) and C (mean of the criteria named for that requirement), as upstream's ``calculate_scores.py``
defines them (:mod:`jurist.families.rubric.score`).

Data: ``benchmark_all.jsonl`` (1,000 queries) and upstream's six requirement subset files, pinned at
X-PLUG/WritingBench@ae2d517 and downloaded on first use. Offline, ``$JURIST_DATA_DIR/writingbench/`` may hold
``requirement_index.json`` (the compact R/C index of the shared data) instead of the six files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, RubricSuite, take_options
from jurist.benchmarks.catalog import (
    BenchmarkCard,
    Found,
    Need,
    data_dir_file,
    fetch_line,
    pinned_copy,
    reference_text,
)
from jurist.benchmarks.data_files import PinnedFile, data_dirs, resolve_files, sha256_of
from jurist.benchmarks.healthbench import PROMPT_HINT, grader_sampling
from jurist.benchmarks.presets import REFERENCE_KEY, ReferenceJudge
from jurist.errors import InputError, JuristError
from jurist.judging import JudgePromptSource
from jurist.store import read_input_jsonl

RUBRIC_SUITE = RubricSuite(
    name="writingbench",
    grading="criteria",
    headline_field="overall",
    shown_field="overall_x10",
    shown_factor=10.0,
    scale=(1.0, 10.0),
    headline="WritingBench overall (1-10)",
    title="WritingBench overall: mean criterion score (1-10)",
    paired_units="score (1-10)",
    paired_scale=10.0,
    board_label="overall (1-10)",
    breakdowns=(("domain1", "domain", "By domain (1-10)"),),
)
"""How WritingBench's scores read (:class:`jurist.benchmarks.base.RubricSuite`): the micro average of its
1-10 criterion scores, shown x10 as its leaderboard does."""

OPTIONS = {"file": "your own file in WritingBench's benchmark_all.jsonl schema (no requirement scores)"}
DIMENSIONS = ("style", "format", "length")
"""The requirement dimensions, in upstream's order."""

UPSTREAM = "X-PLUG/WritingBench@ae2d5176449b7b769815482641d35926f26793eb"
_RAW = "https://raw.githubusercontent.com/X-PLUG/WritingBench/ae2d5176449b7b769815482641d35926f26793eb"
DATA = PinnedFile(
    "writingbench",
    "2025-04-29",
    ("writingbench/benchmark_all.jsonl",),
    f"{_RAW}/benchmark_query/benchmark_all.jsonl",
    "18fee37c645166eb2e206b36366b2e354265b1e4201db2c86e759e825eaddcbe",
    f"{UPSTREAM} benchmark_query/benchmark_all.jsonl",
)
PROMPT_FILE = PinnedFile(
    "writingbench",
    "critic-prompt",
    ("writingbench/prompt.py",),
    f"{_RAW}/prompt.py",
    "c5bf21f28d4b4e54b682236cbe815831f3e362ff9b4f3e8c7c10467c491ecad1",
    f"{UPSTREAM} prompt.py (evaluate_system, evaluate_prompt)",
)
_SUBSET_SHA256 = {
    ("format", ""): "0c7ef01d92d071dcd8f176fa865ce8502f15201a4334d21b367d5089c2a0d253",
    ("format", "_C"): "0a13bd96d33813c87fb55c17ea301b6c52db53e8315788c0f9cc1fd924063a3c",
    ("length", ""): "5f12e5c85f8298f53045bfe2a37a3a37d5c04e3d6ef33b68b023478444ac85ab",
    ("length", "_C"): "c993517a96ec013e1551319fa95ed250fa9fa8fa4870662c75dd16a8fee66521",
    ("style", ""): "b71d1ea8f9e8d8e622bd644083f47c2569f236855b5fd6f5f75bcb0891b655e3",
    ("style", "_C"): "2b251f1d687b3c87c87b209debdc3a3e0c9c35b455ab47cf33b10b21214e651b",
}


def _subset_file(dim: str, suffix: str) -> PinnedFile:
    name = f"requirement/{dim}/{dim}_subset{suffix}.jsonl"
    return PinnedFile(
        "writingbench",
        f"requirement-{dim}{suffix}",
        (f"writingbench/{name}",),
        f"{_RAW}/benchmark_query/{name}",
        _SUBSET_SHA256[(dim, suffix)],
        f"{UPSTREAM} benchmark_query/{name}",
    )


REQUIREMENT_FILES = {(dim, suffix): _subset_file(dim, suffix) for dim in DIMENSIONS for suffix in ("", "_C")}
REQUIREMENT_INDEX = "writingbench/requirement_index.json"
REQUIREMENT_INDEX_SHA256 = "dd37a040697ad0fb309d11725649246512b6879ed32af6cef58186e8c77f4b59"
"""The shared data's compact index of the six requirement files (R indices, C criterion names)."""

GRADER: Mapping[str, Any] = {
    "protocol": "writingbench",
    "grader_model": "Claude-Sonnet-4-5 (upstream README since 2025-11-27)",
    "alternative": "AQuarterMile/WritingBench-Critic-Model-Qwen-7B (upstream critic, via vLLM)",
    "temperature": 1.0,
    "top_p": 0.95,
    "max_tokens": 2048,
    "prompt": f"{UPSTREAM} prompt.py evaluate_system + evaluate_prompt",
}
"""Upstream's critic settings: sent when the judge's models-file entry leaves the field unset."""

REFERENCE = ReferenceJudge(
    model="claude-sonnet-4-5",
    temperature=GRADER["temperature"],
    max_tokens=GRADER["max_tokens"],
    prompt_version=str(GRADER["prompt"]),
    protocol="writingbench",
    source=f"{UPSTREAM} README (judge model since 2025-11-27) and evaluate_benchmark.py (sampling)",
    params={"top_p": GRADER["top_p"]},
    notes=(str(GRADER["alternative"]),),
)
"""The reference critic in the form every named benchmark records (``GRADER`` stays summary.json's)."""


def _critic_files() -> list[Path]:
    """The critic's pinned texts: upstream's ``prompt.py`` (``evaluate_system``, ``evaluate_prompt``)."""
    return resolve_files("writingbench grading", [PROMPT_FILE], PROMPT_HINT)


JUDGE_PROMPT = JudgePromptSource(UPSTREAM, _critic_files, grader_sampling(GRADER))
"""What WritingBench hands the rubric kind: upstream's critic prompt, its reference sampling."""

Requirements = tuple[dict[str, set[int]], dict[str, dict[int, list[str]]]]
"""Per dimension: the indices of the queries involving it (R), and index -> its criterion names (C)."""


def _local_index() -> Path | None:
    for folder in data_dirs():
        path = folder / REQUIREMENT_INDEX
        if path.is_file():
            digest = sha256_of(path)
            if digest != REQUIREMENT_INDEX_SHA256:
                raise JuristError(
                    f"{path}: sha256 {digest[:12]}… is not that of the shared data's requirement index "
                    f"({REQUIREMENT_INDEX_SHA256[:12]}…); restore it, or remove it to use upstream's files"
                )
            return path
    return None


def read_requirement_index(path: Path) -> Requirements:
    """The compact index: ``{"dimensions": {dim: {"R_indices": [...], "C_criteria_names": {...}}}}``."""
    try:
        dims = json.loads(path.read_text(encoding="utf-8"))["dimensions"]
        r_sets = {d: {int(i) for i in dims[d]["R_indices"]} for d in DIMENSIONS}
        c_names = {
            d: {int(i): [str(n) for n in names] for i, names in dims[d]["C_criteria_names"].items()}
            for d in DIMENSIONS
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            path, "", f"not a WritingBench requirement index ({type(exc).__name__}: {exc})"
        ) from None
    return r_sets, c_names


def read_requirement_subsets(paths: Mapping[tuple[str, str], Path]) -> Requirements:
    """Upstream's six files: R from ``{dim}_subset.jsonl`` indices, C from ``{dim}_subset_C.jsonl``
    checklist names (what ``calculate_scores.read_requirement_file`` reads of them)."""
    r_sets: dict[str, set[int]] = {}
    c_names: dict[str, dict[int, list[str]]] = {}
    for dim in DIMENSIONS:
        r_path, c_path = paths[(dim, "")], paths[(dim, "_C")]
        r_sets[dim] = set()
        for number, row in read_input_jsonl(r_path):
            if isinstance(row.get("index"), bool) or not isinstance(row.get("index"), int):
                raise InputError(r_path, f"line {number}", "field 'index' is not an integer")
            r_sets[dim].add(row["index"])
        c_names[dim] = {}
        for number, row in read_input_jsonl(c_path):
            checklist = row.get("checklist")
            if not isinstance(row.get("index"), int) or not isinstance(checklist, list):
                raise InputError(c_path, f"line {number}", "fields 'index' and 'checklist' are required")
            c_names[dim][row["index"]] = [str(c.get("name")) for c in checklist if isinstance(c, dict)]
    return r_sets, c_names


def _checklist(path: Path, where: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise InputError(path, where, "field 'checklist' is not a non-empty list")
    names: set[str] = set()
    for number, criterion in enumerate(value, start=1):
        if not (isinstance(criterion, dict) and isinstance(criterion.get("name"), str)):
            raise InputError(path, where, f"field 'checklist': criterion {number} has no name")
        if criterion["name"] in names:  # upstream keys scores by name: a repeat would be lost
            raise InputError(path, where, f"field 'checklist': name {criterion['name']!r} appears twice")
        names.add(criterion["name"])
    return [dict(criterion) for criterion in value]


def read_questions(path: Path, requirements: Requirements | None) -> list[Question]:
    """Queries as questions; ``metadata`` holds the checklist, the domains and the requirement membership
    (``requirements``: per dimension R and C, or None for a file of one's own)."""
    r_sets, c_names = requirements or ({}, {})
    questions: list[Question] = []
    seen: set[int] = set()
    for number, row in read_input_jsonl(path):
        where = f"line {number}"
        index = row.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise InputError(path, where, "field 'index' is not an integer")
        if index in seen:
            raise InputError(path, where, f"field 'index': {index} appears twice")
        seen.add(index)
        if not isinstance(row.get("query"), str):
            raise InputError(path, where, "field 'query' is not a string")
        checklist = _checklist(path, where, row.get("checklist"))
        names = {c["name"] for c in checklist}
        involved = [dim for dim in DIMENSIONS if index in r_sets.get(dim, ())]
        named = {dim: c_names[dim].get(index, []) for dim in involved}
        for dim, listed in named.items():
            unknown = [n for n in listed if n not in names]
            if unknown:
                problem = f"the {dim} requirement names {unknown[0]!r}, which is not in its checklist"
                raise InputError(path, where, problem)
        domain1, domain2 = row.get("domain1"), row.get("domain2")
        metadata = {
            "checklist": checklist,
            "domain1": domain1 if isinstance(domain1, str) else None,
            "domain2": domain2 if isinstance(domain2, str) else None,
            "lang": row.get("lang"),
            "requirements": {"R": involved, "C": named},
        }
        category = domain1 if isinstance(domain1, str) else "default"
        questions.append(Question(uid=str(index), prompt=row["query"], category=category, metadata=metadata))
    if not questions:
        raise InputError(path, "", "no questions")
    return questions


def benchmark(options: BenchmarkOptions) -> Benchmark:
    chosen = take_options("writingbench", options, OPTIONS)
    info: dict[str, Any] = {"suite": "writingbench", "grader": dict(GRADER)}
    info[REFERENCE_KEY] = REFERENCE.as_info()
    requirements: Requirements | None = None
    if "file" in chosen:
        path = Path(chosen["file"]).expanduser()
        if not path.is_file():
            raise JuristError(f"-B file: {path} is not a file")
        info |= {"version": "file", "file": str(path), "sha256": sha256_of(path), "requirements": None}
    else:
        index = _local_index()
        pins = [DATA] + ([] if index is not None else list(REQUIREMENT_FILES.values()))
        hint = f" (or {REQUIREMENT_INDEX} instead of the requirement files)" if index is None else ""
        path, *subsets = resolve_files("writingbench", pins, hint)
        if index is not None:
            requirements = read_requirement_index(index)
            info["requirements"] = f"{index} (sha256 {REQUIREMENT_INDEX_SHA256[:12]}…)"
        else:
            requirements = read_requirement_subsets(dict(zip(REQUIREMENT_FILES, subsets, strict=True)))
            info["requirements"] = f"{UPSTREAM} benchmark_query/requirement/"
        info |= {"version": DATA.version, "source": DATA.origin, "sha256": DATA.sha256}
    return Benchmark(
        "writingbench",
        read_questions(path, requirements),
        judge_kind="rubric",
        judge_protocol="writingbench",
        judge_prompt_source=JUDGE_PROMPT,
        metrics=("rubric",),
        info=info,
    )


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the queries with their requirement index (or upstream's six files), and
    the critic's prompt."""

    def data() -> Found | None:
        requirements = data_dir_file(REQUIREMENT_INDEX) or pinned_copy(list(REQUIREMENT_FILES.values()))
        return pinned_copy([DATA]) if requirements is not None else None

    prompt = PROMPT_FILE.local_paths[0]

    return BenchmarkCard(
        name,
        "rubric",
        1,
        reference_text(REFERENCE),
        (
            Need("data", data, fetch_line(name, DATA.local_paths[0], REQUIREMENT_INDEX)),
            Need("judge prompts", lambda: pinned_copy([PROMPT_FILE]), fetch_line(name, prompt)),
        ),
        about="1,000 writing queries, each graded 1-10 on five criteria of its own",
    )
