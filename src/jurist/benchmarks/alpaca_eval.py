"""AlpacaEval 2.0 (``--bench alpaca-eval``): 805 instructions, each answer judged once against GPT-4 Turbo's
reference output by the weighted logprob judge, scored as the leaderboard scores it.

The judge (:mod:`jurist.judging.alpaca_protocol`) reads one preference per answer from the first token's
logprobs; the win rate is ``100 * mean(preference - 1)``; the length-controlled win rate is AlpacaEval's
GLM (:mod:`jurist.ratings.lc_winrate`) with its official per-instruction difficulty and its two
length-gamed baselines' annotations. Those two files are fetched like the rest; only when they cannot be had
(offline, nothing cached) is the difficulty estimated from the run's own models, and the run says so.

Data, pinned at the hub dataset ``tatsu-lab/alpaca_eval`` @ :data:`REVISION` (sha256-checked wherever it
comes from: ``$JURIST_DATA_DIR/alpaca-eval/``, jurist's cache, else one download):
``alpaca_eval_gpt4_baseline.json`` (the instructions and reference outputs; the same bytes as the GitHub
repo's ``results/gpt4_1106_preview/model_outputs.json``, so the shared data's ``.json.gz`` of it is accepted
after decompression), ``instruction_difficulty.csv`` and ``df_gamed.csv``. The judge prompt is upstream's
``alpaca_eval_clf.txt`` at :data:`COMMIT`, handed to the judge kind (:data:`JUDGE_PROMPT`) and read when a
judge is built, never shipped.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from jurist.benchmarks import catalog
from jurist.benchmarks.alpaca_eval_lc import read_difficulty, read_gamed
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, OfficialScoring, Question, take_options
from jurist.benchmarks.data_files import DATA_DIR_ENV, PinnedFile, data_dirs, resolve, resolve_files
from jurist.benchmarks.presets import REFERENCE_KEY, ReferenceJudge
from jurist.errors import InputError, JuristError
from jurist.judging import JudgePromptSource
from jurist.ratings import GamedRows
from jurist.store import category_field

NAME = "alpaca-eval"
BASELINE = "gpt4_1106_preview"
"""AlpacaEval 2.0's reference generator (GPT-4 Turbo), the baseline of every instruction."""
HUB = "tatsu-lab/alpaca_eval"
REVISION = "2edc6fad8be6b14ea7230aabfd08188da6b8b814"
REPOSITORY = "tatsu-lab/alpaca_eval"
COMMIT = "cd543a149df89434d8a54582c0151c0b945c3d20"
_HUB_RAW = f"https://huggingface.co/datasets/{HUB}/resolve/{REVISION}"
_GITHUB_RAW = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}"
_HUB_MAIN = f"https://huggingface.co/datasets/{HUB}/resolve/main"
"""Where upstream's own code reads the files (no revision); tried only if the pinned revision cannot be
fetched, and accepted only with the pinned sha256 (the revision above comes from a public record of the
hub's history that could not be checked against the hub from here; the sha256s are the issue's)."""
_HUB = f"hub {HUB}@{REVISION[:7]}"

REFERENCE_OUTPUTS = PinnedFile(
    NAME,
    "reference-outputs",
    (
        "alpaca-eval/alpaca_eval_gpt4_baseline.json",
        "alpaca-eval/results/gpt4_1106_preview/model_outputs.json",
    ),
    f"{_HUB_RAW}/alpaca_eval_gpt4_baseline.json",
    "83db546b872ddebee8965fd05fa48461ee3c32bc695c62fb57f2d214ff741ec4",
    f"{_HUB} alpaca_eval_gpt4_baseline.json "
    f"(= {REPOSITORY}@{COMMIT[:7]} results/gpt4_1106_preview/model_outputs.json)",
)
GZ_COPY = "alpaca-eval/results/gpt4_1106_preview/model_outputs.json.gz"
"""The shared data's gzip of the reference outputs, accepted when its content is the pinned bytes."""
DIFFICULTY = PinnedFile(
    NAME,
    "instruction-difficulty",
    ("alpaca-eval/instruction_difficulty.csv",),
    f"{_HUB_RAW}/instruction_difficulty.csv",
    "e28d875bb334f75e17acd1e4ed659b261860e3db379cf5de29060301bed0a18b",
    f"{_HUB} instruction_difficulty.csv",
    (f"{_HUB_MAIN}/instruction_difficulty.csv",),
)
GAMED = PinnedFile(
    NAME,
    "gamed-baselines",
    ("alpaca-eval/df_gamed.csv",),
    f"{_HUB_RAW}/df_gamed.csv",
    "97aeec3f1c7de6dee6fd31fe66f1702623f4614c3efe1c6fc5f4927cd5fd674d",
    f"{_HUB} df_gamed.csv",
    (f"{_HUB_MAIN}/df_gamed.csv",),
)
_PROMPT_PATH = "src/alpaca_eval/evaluators_configs/alpaca_eval_clf_gpt4_turbo/alpaca_eval_clf.txt"
TEMPLATE = PinnedFile(
    NAME,
    "judge-prompt",
    (
        "alpaca-eval/alpaca_eval_clf.txt",
        "alpaca-eval/evaluators_configs/alpaca_eval_clf_gpt4_turbo/alpaca_eval_clf.txt",
    ),
    f"{_GITHUB_RAW}/{_PROMPT_PATH}",
    "784227e6dc2832fc08c43d2c8ea3a308e7523780187a1aaad2f85e30bac85f62",
    f"{REPOSITORY}@{COMMIT[:7]} {_PROMPT_PATH}",
)
"""Upstream's judge prompt (ChatML text with ``{instruction}``, ``{output_1}``, ``{output_2}``)."""


def _judge_prompt_files() -> list[Path]:
    return resolve_files(NAME, [TEMPLATE])


JUDGE_PROMPT = JudgePromptSource(TEMPLATE.origin, _judge_prompt_files)
"""What AlpacaEval hands the preference kind: upstream's prompt, found when a judge is built."""

REGULARIZE_LAMBDA = 0.2
"""``length_controlled_v1``'s weight of the gamed-baseline rows, shared by the two gamed baselines."""
GAMED_ROW_WEIGHT = REGULARIZE_LAMBDA / 2
"""Each gamed row's sample weight, as upstream sets it (lambda / 2: there are two gamed baselines)."""

REFERENCE = ReferenceJudge(
    model="gpt-4-1106-preview",
    temperature=1.0,
    max_tokens=1,
    prompt_version=TEMPLATE.origin,
    protocol="alpaca-eval",
    source=f"{REPOSITORY}@{COMMIT[:7]} evaluators_configs/weighted_alpaca_eval_gpt4_turbo/configs.yaml",
    params={"logprobs": True, "top_logprobs": 5},
    fixed=("max_tokens",),
    notes=(
        "upstream reuses this prompt and reader with gpt-4-turbo, gpt-4.1-2025-04-14 and "
        "gpt-4o-mini-2024-07-18 (weighted_alpaca_eval_* configs); gpt-4-1106-preview is being retired",
    ),
)
"""``weighted_alpaca_eval_gpt4_turbo``: one token, temperature 1 (logprobs are read, nothing is sampled)."""

OPTIONS = {
    "lc": "official (default: AlpacaEval's difficulty and gamed-baseline files; estimated only when they "
    "cannot be had) | estimate",
}
_HINT = (
    f" (or {GZ_COPY}, as in the shared data; judging also needs {TEMPLATE.local_paths[0]}, and the exact LC "
    f"{DIFFICULTY.local_paths[0]} and {GAMED.local_paths[0]})"
)

FloatArray = npt.NDArray[np.float64]


def question_uid(instruction: str) -> str:
    """An instruction's uid: the one AlpacaEval imports use too (``jurist import alpaca-eval``), so runs and
    imported leaderboards name the same questions alike."""
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:16]


# -- the instructions and reference outputs ------------------------------------------------------------------
def _parse_outputs(data: bytes, where: str) -> list[dict[str, Any]]:
    try:
        rows = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise JuristError(f"{where}: not JSON ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise JuristError(f"{where}: expected a JSON list of objects")
    return rows


def reference_outputs() -> tuple[list[dict[str, Any]], str]:
    """The reference file's rows (``instruction``, ``output``, ``dataset``, ``generator``) and where they were
    read: the shared data's ``.json.gz`` (its content checked), else the pinned JSON (data dir, cache or a
    download); one error naming the variable and every file when none can be had."""
    for folder in data_dirs():
        path = folder / GZ_COPY
        if path.is_file():
            data = gzip.decompress(path.read_bytes())
            digest = hashlib.sha256(data).hexdigest()
            if digest != REFERENCE_OUTPUTS.sha256:
                raise JuristError(
                    f"{path}: its content has sha256 {digest[:12]}…, not that of {REFERENCE_OUTPUTS.origin} "
                    f"({REFERENCE_OUTPUTS.sha256[:12]}…); restore it or point ${DATA_DIR_ENV} elsewhere"
                )
            return _parse_outputs(data, str(path)), str(path)
    (path,) = resolve_files(NAME, [REFERENCE_OUTPUTS], _HINT)
    return _parse_outputs(path.read_bytes(), str(path)), str(path)


def read_questions(rows: Sequence[Mapping[str, Any]], where: str) -> tuple[list[Question], dict[str, str]]:
    """The instructions as questions (category: the source dataset) and the reference outputs by uid."""
    questions: list[Question] = []
    answers: dict[str, str] = {}
    for position, row in enumerate(rows):
        instruction, output = row.get("instruction"), row.get("output")
        if not isinstance(instruction, str) or not isinstance(output, str):
            raise InputError(
                Path(where), f"record {position}", "fields 'instruction' and 'output' must be strings"
            )
        uid = question_uid(instruction)
        if uid in answers:
            raise InputError(Path(where), f"record {position}", "field 'instruction': appears twice")
        dataset = category_field(Path(where), f"record {position}", row, "dataset")
        metadata = {"dataset": dataset, "position": position}
        questions.append(Question(uid=uid, prompt=instruction, category=dataset, metadata=metadata))
        answers[uid] = output
    if not questions:
        raise InputError(Path(where), "", "no instructions")
    return questions, answers


# -- LC's official inputs ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OfficialLC:
    """What AlpacaEval's LC GLM takes besides a model's own rows: each instruction's difficulty and the
    rows of the two length-gamed baselines (preference in [0, 1], standardised length gap, difficulty)."""

    difficulty: Mapping[str, float]
    """uid -> the instruction's difficulty, as df_gamed.csv gives it (what upstream's LC reads)."""
    gamed_preference: tuple[float, ...]
    gamed_std_delta_len: tuple[float, ...]
    gamed_difficulty: tuple[float, ...]
    row_weight: float = GAMED_ROW_WEIGHT

    def design(self, uids: Sequence[str]) -> tuple[FloatArray, GamedRows]:
        """(difficulty of each of ``uids``, then of each gamed row; the gamed rows indexing their own
        difficulties in that array), as :func:`~jurist.ratings.lc_winrate.length_controlled_win_rates`
        takes them."""
        gamma = np.array(
            [self.difficulty[uid] for uid in uids] + list(self.gamed_difficulty), dtype=np.float64
        )
        rows = GamedRows(
            preference=np.array(self.gamed_preference, dtype=np.float64),
            std_delta_len=np.array(self.gamed_std_delta_len, dtype=np.float64),
            instruction=np.arange(len(uids), len(uids) + len(self.gamed_preference), dtype=np.int64),
        )
        return gamma, rows


def read_official_lc(
    difficulty: Path, gamed: Path, instructions: Sequence[str]
) -> tuple[OfficialLC, dict[str, Any]]:
    """The official LC inputs for ``instructions`` (in AlpacaEval's order), and facts about them for run.json
    (how many gamed rows, whether the two files give the same difficulties)."""
    by_position, prefs, gaps, gammas = read_gamed(gamed)
    missing = [i for i in range(len(instructions)) if i not in by_position]
    if missing:
        raise InputError(gamed, "", f"no difficulty for instruction {missing[0]} (of {len(instructions)})")
    listed = read_difficulty(difficulty, instructions)
    common = [i for i in range(len(instructions)) if i in listed and not math.isnan(listed[i])]
    gap = max((abs(listed[i] - by_position[i]) for i in common), default=0.0)
    uid_gamma = {question_uid(text): by_position[i] for i, text in enumerate(instructions)}
    facts = {
        "gamed_rows": len(prefs),
        "gamed_row_weight": GAMED_ROW_WEIGHT,
        "difficulty_files_agree": len(common) == len(instructions) and gap <= 1e-6,
        "difficulty_max_gap": gap,
    }
    return OfficialLC(uid_gamma, prefs, gaps, gammas), facts


def _lc_info(choice: str, instructions: Sequence[str]) -> dict[str, Any]:
    """run.json's account of LC's inputs: the official files, or why today's estimate is used instead."""
    if choice == "estimate":
        return {"source": "estimated", "reason": "chosen with -B lc=estimate"}
    try:
        difficulty, gamed = resolve_files(NAME, [DIFFICULTY, GAMED])
    except JuristError as exc:
        reason = "offline: not in $JURIST_DATA_DIR nor the cache, and the download failed"
        return {"source": "estimated", "reason": reason, "error": str(exc)}
    try:
        _, facts = read_official_lc(difficulty, gamed, instructions)
    except InputError as exc:
        raise JuristError(f"{exc}; run with -B lc=estimate to score LC without it") from None
    files = {p.url.rsplit("/", 1)[-1]: {"sha256": p.sha256, "origin": p.origin} for p in (DIFFICULTY, GAMED)}
    return {"source": "official", "files": files, **facts}


def estimate_warning(reason: str) -> str:
    """The line a run and ``jurist show`` print when LC cannot use AlpacaEval's official inputs."""
    return (
        f"AlpacaEval LC is today's estimate, not the official LC ({reason}): instruction difficulty is "
        "estimated from this run's models and no gamed-baseline rows regularise the fit, so LC is "
        f"approximate and not comparable with the leaderboard; put {DIFFICULTY.local_paths[0]} and "
        f"{GAMED.local_paths[0]} ({_HUB}) in ${DATA_DIR_ENV} for the official one"
    )


def official_lc_for(lc: Mapping[str, Any]) -> tuple[OfficialLC | None, str | None]:
    """For scoring a run whose ``bench_info["lc"]`` is ``lc``: the official inputs, or None and the warning
    to print (the files were not had when the run began, or cannot be read now)."""
    if lc.get("source") != "official":
        return None, estimate_warning(str(lc.get("reason") or "not available"))
    try:
        rows, _ = reference_outputs()
        instructions = [str(row.get("instruction")) for row in rows]
        official, _ = read_official_lc(resolve(DIFFICULTY), resolve(GAMED), instructions)
    except JuristError as exc:
        return None, estimate_warning(f"its files could not be read now: {exc}")
    return official, None


# -- the benchmark -------------------------------------------------------------------------------------------
def benchmark(options: BenchmarkOptions) -> Benchmark:
    chosen = take_options(NAME, options, OPTIONS)
    choice = chosen.get("lc", "official")
    if choice not in ("official", "estimate"):
        raise JuristError(f"-B lc: {choice!r} is not official or estimate")
    rows, where = reference_outputs()
    questions, answers = read_questions(rows, where)
    lc = _lc_info(choice, [q.prompt for q in questions])
    notes = [] if lc["source"] == "official" else [estimate_warning(str(lc["reason"]))]
    info: dict[str, Any] = {
        "suite": NAME,
        "version": "2.0",
        "source": REFERENCE_OUTPUTS.origin,
        "sha256": REFERENCE_OUTPUTS.sha256,
        "read_from": where,
        "baseline_generator": BASELINE,
        REFERENCE_KEY: REFERENCE.as_info(),
        "lc": lc,
        "notes": notes,
    }
    return Benchmark(
        NAME,
        questions,
        shipped_answers={BASELINE: answers},
        baseline=BASELINE,
        judge_kind="preference",
        judge_protocol="alpaca-eval",
        judge_prompt_source=JUDGE_PROMPT,
        metrics=("winrate",),
        official_scoring=OfficialScoring(length_controlled=True),
        info=info,
    )


def catalog_card(name: str) -> catalog.BenchmarkCard:
    """``jurist list``: the reference outputs, the judge prompt, the official LC files (else estimated)."""

    def outputs() -> catalog.Found | None:
        return catalog.data_dir_file(GZ_COPY) or catalog.pinned_copy([REFERENCE_OUTPUTS])

    def lc_files() -> catalog.Found | None:
        return catalog.pinned_copy([DIFFICULTY, GAMED])

    get = functools.partial(catalog.fetch_line, name)
    needs = (
        catalog.Need("data", outputs, get(f"{REFERENCE_OUTPUTS.local_paths[0]} (or {GZ_COPY})")),
        catalog.Need("judge prompts", lambda: catalog.pinned_copy([TEMPLATE]), get(TEMPLATE.local_paths[0])),
        catalog.Need("official LC files", lc_files, get(DIFFICULTY.local_paths[0], GAMED.local_paths[0])),
    )
    about = "805 instructions judged once against GPT-4 Turbo's outputs by a logprob judge"
    return catalog.BenchmarkCard(name, "pairwise", 1, catalog.reference_text(REFERENCE), needs, about)
