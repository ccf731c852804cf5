"""Arena-Hard-Local by name (``--bench arena-hard-local``): r4dm/arena-hard-local, the Russian translation of
the 500 Arena-Hard v0.1 questions judged against Phi-3-medium-128k-instruct's answers with upstream's own
simplified judge, scored as Arena-Hard v0.1 scores it.

Everything that makes it Arena-Hard-Local is upstream's data, pinned by sha256 and read at run time: the
questions, the baseline's answers, and ``config/judge_config.yaml`` (the judge's system prompt, user
template, verdict regex, temperature 0, max_tokens 512, the baseline's name; the "arena-hard-local"
protocol reads it: :mod:`jurist.judging.upstream_local`). Files come from ``$JURIST_DATA_DIR``
(``arena-hard-local/…`` as the shared data lays them out, or upstream's own
``arena-hard-local/data/arena-hard-v0.1/…``), jurist's cache, else one download from the pinned commit.

``-B lang=en`` takes the English originals. Upstream ships no English answers of the baseline (its answers
are to the Russian questions, and the judge prefers an answer in the request's language), so then the run
answers the baseline itself: define it as a model, or name another with ``--baseline``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurist.benchmarks.arena_hard import read_answer_row, read_questions
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, OfficialScoring, take_options
from jurist.benchmarks.catalog import BenchmarkCard
from jurist.benchmarks.data_files import DATA_DIR_ENV, PinnedFile, resolve_files
from jurist.benchmarks.lazy_answers import LazyAnswerFiles, answer_rows
from jurist.benchmarks.presets import REFERENCE_KEY, ReferenceJudge
from jurist.errors import JuristError
from jurist.judging import LocalJudgeSettings, load_local_settings

NAME = "arena-hard-local"
REPOSITORY = "r4dm/arena-hard-local"
COMMIT = "f9be4e981495235b477d5bf8a0f394cc930fb0c2"
_RAW = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}"
_UPSTREAM_DIR = "data/arena-hard-v0.1"

QUESTION_FILES = {
    "ru": (
        "question_ru.jsonl",
        "question.jsonl",
        "fcab77fcd307909e2410300bd7f596a6393d6b6e7e4d3aaddb37ea03734211dc",
    ),
    "en": (
        "question_en.jsonl",
        "question_en.jsonl",
        "4daad38811161c3ba5c248f26b90c3cef89634f4c772002ed9138c1e13f63e9f",
    ),
}
"""Language -> (name in the shared data, name upstream, sha256 of upstream's bytes at :data:`COMMIT`)."""
BASELINE = "Phi-3-medium-128k-instruct"
"""The config's ``baseline_model`` (checked against it at run time)."""
BASELINE_SHA256 = "02abb733cd331f8d7f628d964100dc61bdcc23e0f42152395bfb7a15eb4b3c43"
"""sha256 of the baseline's answer file (answers to the Russian questions) at :data:`COMMIT`."""
OPTIONS = {"lang": "ru (default: upstream's Russian questions) | en (the English originals)"}
LEADERBOARD_JUDGE = "Llama-3-70B-Instruct-AH-AWQ"
"""The judge of the README's leaderboard (the config names Qwen2-72B-Instruct-AWQ, its other table's)."""
CONFIG_JUDGE = "Qwen2-72B-Instruct-AWQ"
"""The config's ``judge_model`` at :data:`COMMIT`: the reference judge a run compares its judges with, and
what ``jurist list`` names without reading the config (a test checks it against the pinned file)."""


def _pinned(local: str, upstream: str, sha256: str) -> PinnedFile:
    return PinnedFile(
        NAME,
        Path(local).stem,
        (f"{NAME}/{local}", f"{NAME}/{_UPSTREAM_DIR}/{upstream}"),
        f"{_RAW}/{_UPSTREAM_DIR}/{upstream}",
        sha256,
        f"{REPOSITORY}@{COMMIT[:7]} {_UPSTREAM_DIR}/{upstream}",
    )


def question_file(lang: str) -> PinnedFile:
    local, upstream, sha256 = QUESTION_FILES[lang]
    return _pinned(local, upstream, sha256)


def answer_file() -> PinnedFile:
    relative = f"model_answer/{BASELINE}.jsonl"
    return _pinned(relative, relative, BASELINE_SHA256)


def reference_judge(settings: LocalJudgeSettings) -> ReferenceJudge:
    """Upstream's judge and sampling, as its config states them."""
    return ReferenceJudge(
        model=settings.judge_model,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        prompt_version=f"{settings.origin} (system_prompt, prompt_template, regex_pattern)",
        protocol="arena-hard-local",
        source=f"{settings.origin} (judge_model, temperature, max_tokens)",
        notes=(
            f"the README's leaderboard is judged by {LEADERBOARD_JUDGE} (fine-tuned on gpt-4-1106-preview "
            "judgments); both are served locally by vLLM",
            "upstream asks a judge whose reply has no verdict to continue up to twice in its own words; "
            "jurist asks once, in its own",
        ),
    )


def _lang(options: BenchmarkOptions) -> str:
    chosen = take_options(NAME, options, OPTIONS).get("lang", "ru")
    if chosen not in QUESTION_FILES:
        raise JuristError(f"-B lang={chosen}: {NAME} has ru and en questions")
    return chosen


def benchmark(options: BenchmarkOptions) -> Benchmark:
    """Arena-Hard-Local's questions in ``-B lang`` (ru by default) against its baseline's answers."""
    lang = _lang(options)
    pins = [question_file(lang)] + ([answer_file()] if lang == "ru" else [])
    hint = f", and {NAME}/judge_config.yaml for its judge (../shared/data is laid out so)"
    paths = resolve_files(f"{NAME} (-B lang={lang})", pins, hint)
    settings = load_local_settings()
    baseline = settings.baseline_model
    if baseline != BASELINE:
        raise JuristError(f"{settings.source}: baseline_model {baseline!r} is not {BASELINE!r}")
    questions = read_questions(paths[0])
    shipped = LazyAnswerFiles()  # which uids the file answers now, its texts where first used
    notes: list[str] = []
    kept = questions
    if lang == "ru":
        wanted = {q.uid for q in questions}
        rows = {uid: row for uid, row in answer_rows(paths[1]).items() if uid in wanted}
        answers = set(rows)
        shipped.add(baseline, paths[1], rows, read_answer_row)
        kept = [q for q in questions if q.uid in answers]
        if len(kept) < len(questions):
            notes.append(
                f"{NAME}: {len(questions) - len(kept)} question(s) have no {baseline} answer in {paths[1]}, "
                "so they are left out"
            )
    else:
        notes.append(
            f"{NAME} -B lang=en: upstream has no English answers of {baseline}; the run answers the baseline "
            f"itself (define {baseline} as a model, or give --baseline)"
        )
    if not kept:
        raise JuristError(f"{NAME}: no question has a {baseline} answer; check ${DATA_DIR_ENV}")
    info: dict[str, Any] = {
        "suite": NAME,
        "version": "arena-hard-v0.1",
        "lang": lang,
        "source": pins[0].origin,
        "sha256": pins[0].sha256,
        "baseline_answers": shipped.sources,
        "judge_config": settings.source,
        "n_questions_upstream": len(questions),
        REFERENCE_KEY: reference_judge(settings).as_info(),
        "official_scoring": {"style_control": [], "style_categories": []},
        "notes": notes,
    }
    return Benchmark(
        NAME if lang == "ru" else f"{NAME}-en",
        kept,
        shipped_answers=shipped.texts,
        shipped_metadata=shipped.metadata,
        baseline=baseline,
        judge_protocol="arena-hard-local",
        official_scoring=OfficialScoring(),
        info=info,
    )


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the Russian questions, the baseline's answers, the judge config."""
    from jurist.benchmarks.catalog import Found, Need, fetch_line, pinned_copy

    pins = [question_file("ru"), answer_file()]

    def judge_config() -> Found | None:
        from jurist.judging import local_config_copy

        copy = local_config_copy()
        return Found(copy[0], copy[1]) if copy is not None else None  # type: ignore[arg-type]

    return BenchmarkCard(
        name,
        "pairwise",
        1,
        f"{CONFIG_JUDGE} (temperature 0, max_tokens 512)",
        (
            Need("data", lambda: pinned_copy(pins), fetch_line(name, *(p.local_paths[0] for p in pins))),
            Need("judge prompts", judge_config, fetch_line(name, f"{NAME}/judge_config.yaml")),
        ),
        about=f"Arena-Hard v0.1 in Russian (r4dm), judged against {BASELINE} with upstream's own judge",
    )
