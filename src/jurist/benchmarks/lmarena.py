"""LMArena placement (JudgeArena's Elo pipeline) as a benchmark: real arena prompts, real opponents' answers.

A seeded sample of single-turn human-voted battles becomes the questions. For each, one side of the arena
battle is drawn as the opponent (its stored answer is shipped as the baseline alias ``arena-opponent``) and
the evaluated model answers the same first user turn; the judge compares the two, once, with the evaluated
model shown first or second as drawn (``-B positions=both`` plays both orders instead). Scoring
(:mod:`jurist.families.placement.fit`) maps ``arena-opponent`` back to the real model of each battle, adds
every human battle between well-voted models (the anchors) and fits one Bradley-Terry model over both, so the
evaluated model gets a rating on the arena's human scale.

Only battles whose two models are both anchors are sampled: a judged battle against a model the humans
barely voted on cannot place anything on their scale (its opponent's rating would be free), so judging it
would be paid for nothing. ``-B calibration=K`` makes the benchmark a judge calibration set instead: K
human battles, both stored answers shipped, from which scoring fits the judge's temperature.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, take_options
from jurist.benchmarks.catalog import BenchmarkCard, Found, Need, arena_hard_prompts, offline_hint
from jurist.benchmarks.lmarena_data import (
    HUB_ARENAS,
    ArenaTable,
    cached_snapshot_files,
    fingerprint,
    load_hub_arena,
    local_parquet_files,
    parse_languages,
    read_arena_file,
    sample_rows,
    side_draws,
)
from jurist.errors import JuristError
from jurist.ratings import anchor_battles

OPPONENT = "arena-opponent"
"""The baseline alias: for each question, the stored answer of that battle's drawn arena side."""
SIDE_A = "arena-model-a"
SIDE_B = "arena-model-b"
"""Calibration mode: the two stored answers of a human battle, judged against each other."""

ARENA_ELO: tuple[Any, ...] = ("arena-elo",)
ARENA_CALIBRATION: tuple[Any, ...] = ("arena-calibration",)
"""The metrics this benchmark reports (typed loosely: the Metric literal names them once registered)."""

DEFAULT_N = 100
DEFAULT_MIN_BATTLES = 500

OPTIONS = {
    "n": f"how many arena battles to judge (default {DEFAULT_N})",
    "seed": "seed of the battle sample and of the opponent/position draws (default 0)",
    "languages": "keep prompts in these languages, e.g. en,de (default: all)",
    "min_battles": f"human battles a model needs to anchor the scale (default {DEFAULT_MIN_BATTLES})",
    "anchor": "arena model pinned at anchor_rating (default: the anchors' mean is)",
    "anchor_rating": "the rating of the anchor, or of the anchors' mean (default 1000)",
    "positions": "draw (one game, position drawn, as JudgeArena) or both (two swapped games)",
    "temperature": "judge temperature for soft preferences sigmoid(T * score gap) (default: hard)",
    "calibration_run": "a calibration run directory whose calibration.json gives each judge's temperature",
    "calibration": "K: judge K human battles instead, to fit the judge's temperature",
}


@dataclass(frozen=True)
class HumanBattles:
    """The anchor battles: human votes between well-voted models, as model indices into ``models``."""

    models: tuple[str, ...]
    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    winner: tuple[str, ...]
    question_id: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.winner)

    def records(self) -> list[dict[str, Any]]:
        """The battles in JudgeArena's schema (``pref``: 0 when model_a won, 1 when model_b did)."""
        pref = {"model_a": 0.0, "model_b": 1.0, "tie": 0.5, "tie (bothbad)": 0.5}
        names = self.models
        return [
            {
                "model_a": names[int(i)],
                "model_b": names[int(j)],
                "winner": w,
                "source": "human",
                "pref": pref[w],
                "question_id": q,
                "judge_model": None,
            }
            for i, j, w, q in zip(self.a, self.b, self.winner, self.question_id, strict=True)
        ]


@dataclass(frozen=True)
class ArenaBenchmark(Benchmark):
    """A benchmark that carries its human anchor battles to scoring (too many for run.json's info)."""

    human: HumanBattles | None = field(default=None, repr=False, compare=False)


def human_anchors(table: ArenaTable, min_battles: int) -> tuple[HumanBattles, list[bool]]:
    """Human battles whose two models each have ``min_battles`` single-turn battles, and the row mask."""
    names = sorted(set(table.model_a) | set(table.model_b))
    index = {name: k for k, name in enumerate(names)}
    a = np.fromiter((index[m] for m in table.model_a), dtype=np.int64, count=len(table))
    b = np.fromiter((index[m] for m in table.model_b), dtype=np.int64, count=len(table))
    keep = anchor_battles(a, b, len(names), min_battles) & (a != b)
    rows = np.flatnonzero(keep)
    used = sorted({names[int(i)] for i in a[rows]} | {names[int(i)] for i in b[rows]})
    local = {name: k for k, name in enumerate(used)}
    human = HumanBattles(
        models=tuple(used),
        a=np.fromiter((local[names[int(i)]] for i in a[rows]), dtype=np.int64, count=rows.size),
        b=np.fromiter((local[names[int(i)]] for i in b[rows]), dtype=np.int64, count=rows.size),
        winner=tuple(table.winner[int(r)] for r in rows),
        question_id=tuple(table.question_id[int(r)] for r in rows),
    )
    return human, [bool(k) for k in keep]


def _int(options: dict[str, str], name: str, default: int, minimum: int) -> int:
    text = options.get(name)
    try:
        value = int(text) if text is not None else default
    except ValueError:
        raise JuristError(f"-B {name}: {text!r} is not a whole number") from None
    if value < minimum:
        raise JuristError(f"-B {name}: must be at least {minimum}, not {value}")
    return value


def _float(options: dict[str, str], name: str) -> float | None:
    text = options.get(name)
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise JuristError(f"-B {name}: {text!r} is not a number") from None


def _temperatures(options: dict[str, str]) -> float | dict[str, float] | None:
    """``-B temperature`` for every judge, or per judge from a calibration run's calibration.json."""
    single = _float(options, "temperature")
    run = options.get("calibration_run")
    if run is None:
        return single
    if single is not None:
        raise JuristError("-B temperature and -B calibration_run: give one of them")
    path = Path(run) / "calibration.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return {str(j): float(fit["temperature"]) for j, fit in document["judges"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JuristError(f"-B calibration_run: cannot read a temperature from {path} ({exc})") from None


def _unique_uids(ids: Sequence[str]) -> list[str]:
    """Question ids as uids, a repeated id getting ``#2``, ``#3``... (uids must be unique in a run)."""
    seen: Counter[str] = Counter()
    out = []
    for qid in ids:
        seen[qid] += 1
        out.append(qid if seen[qid] == 1 else f"{qid}#{seen[qid]}")
    return out


def arena_benchmark(
    table: ArenaTable, name: str, options: BenchmarkOptions, origin: dict[str, Any]
) -> Benchmark:
    """The placement benchmark (or, with ``-B calibration``, the calibration set) over ``table``."""
    chosen = take_options(name, options, OPTIONS)
    n = _int(chosen, "n", DEFAULT_N, 1)
    seed = _int(chosen, "seed", 0, 0)
    min_battles = _int(chosen, "min_battles", DEFAULT_MIN_BATTLES, 1)
    languages = parse_languages(chosen.get("languages"))
    positions = chosen.get("positions", "draw")
    if positions not in ("draw", "both"):
        raise JuristError(f"-B positions: {positions!r} is not draw or both")
    human, is_anchor = human_anchors(table, min_battles)
    if len(human.models) < 2:
        raise JuristError(
            f"{name}: fewer than two models have {min_battles} single-turn human battles; "
            "lower -B min_battles"
        )
    anchor_rating = _float(chosen, "anchor_rating")
    eligible = [i for i, ok in enumerate(is_anchor) if ok and (not languages or table.lang[i] in languages)]
    placement = {
        "min_human_battles": min_battles,
        "anchor": chosen.get("anchor"),
        "anchor_rating": 1000.0 if anchor_rating is None else anchor_rating,
        "temperature": _temperatures(chosen),
        "positions": positions,
    }
    if placement["anchor"] is not None and placement["anchor"] not in human.models:
        raise JuristError(f"-B anchor: {placement['anchor']!r} is not an anchor model of {name}")
    info = {
        **origin,
        "arena": table.label,
        "rows_read": table.n_rows_read,
        "single_turn_battles": len(table),
        "anchor_models": len(human.models),
        "human_anchor_battles": len(human),
        "languages": list(languages) or "all",
        "placement": placement,
    }
    calibration = _int(chosen, "calibration", 0, 0)
    if calibration:
        decisive = [i for i in eligible if table.winner[i] in ("model_a", "model_b")]
        return _calibration(table, name, sample_rows(decisive, calibration, seed), seed, info, human)
    if not eligible:
        raise JuristError(f"{name}: no single-turn battles between anchor models in {languages or 'any'}")
    rows = sample_rows(eligible, n, seed)
    ids = [table.question_id[r] for r in rows]
    info["selection"] = {
        "method": "random",
        "n": len(rows),
        "of": len(eligible),
        "seed": seed,
        "question_ids_sha256": fingerprint(ids),
    }
    opponent_is_a, model_first = side_draws(len(rows), seed)
    questions, opponent_answers = [], {}
    for uid, row, from_a, first, (prompt, answer_a, answer_b) in zip(
        _unique_uids(ids), rows, opponent_is_a, model_first, table.texts(rows), strict=True
    ):
        metadata = {
            "question_id": table.question_id[row],
            "opponent": table.model_a[row] if from_a else table.model_b[row],
            "opponent_side": "model_a" if from_a else "model_b",
            "model_a": table.model_a[row],
            "model_b": table.model_b[row],
            "human_winner": table.winner[row],
        }
        if positions == "draw":
            metadata["model_position"] = "A" if first else "B"
        questions.append(Question(uid=uid, prompt=prompt, category=table.lang[row], metadata=metadata))
        opponent_answers[uid] = answer_a if from_a else answer_b
    return ArenaBenchmark(
        name=name,
        questions=questions,
        shipped_answers={OPPONENT: opponent_answers},
        baseline=OPPONENT,
        metrics=ARENA_ELO,
        info={**info, "answers_source": {OPPONENT: table.label}},
        human=human,
    )


def _calibration(
    table: ArenaTable, name: str, rows: list[int], seed: int, info: dict[str, Any], human: HumanBattles
) -> Benchmark:
    """K human battles judged side against side: both answers shipped, one game at a drawn position."""
    ids = [table.question_id[r] for r in rows]
    _, model_first = side_draws(len(rows), seed)
    info["selection"] = {
        "method": "random",
        "n": len(rows),
        "seed": seed,
        "question_ids_sha256": fingerprint(ids),
    }
    questions, side_a, side_b = [], {}, {}
    for uid, row, first, (prompt, answer_a, answer_b) in zip(
        _unique_uids(ids), rows, model_first, table.texts(rows), strict=True
    ):
        metadata = {
            "question_id": table.question_id[row],
            "model_a": table.model_a[row],
            "model_b": table.model_b[row],
            "human_winner": table.winner[row],
            "model_position": "A" if first else "B",
        }
        questions.append(Question(uid=uid, prompt=prompt, category=table.lang[row], metadata=metadata))
        side_a[uid], side_b[uid] = answer_a, answer_b
    return ArenaBenchmark(
        name=f"{name}-calibration",
        questions=questions,
        shipped_answers={SIDE_A: side_a, SIDE_B: side_b},
        baseline=SIDE_A,
        candidates=(SIDE_B,),
        metrics=ARENA_CALIBRATION,
        info={**info, "answers_source": {SIDE_A: table.label, SIDE_B: table.label}},
        human=human,
    )


def _hub_benchmark(name: str, options: BenchmarkOptions) -> Benchmark:
    arena = HUB_ARENAS[name]
    take_options(name, options, OPTIONS)  # refuse a bad option before any download
    origin = {"dataset": arena.repo_id, "revision": arena.revision}
    return arena_benchmark(load_hub_arena(arena), name, options, origin)


def benchmark_100k(options: BenchmarkOptions) -> Benchmark:
    """Registry entry ``lmarena-100k``."""
    return _hub_benchmark("lmarena-100k", options)


def benchmark_140k(options: BenchmarkOptions) -> Benchmark:
    """Registry entry ``lmarena-140k``."""
    return _hub_benchmark("lmarena-140k", options)


def benchmark_file(path: Path, options: BenchmarkOptions) -> Benchmark:
    """A local arena file (parquet, or JSONL in the unified schema) given as ``--bench PATH``."""
    take_options(f"arena file {path}", options, OPTIONS)
    table = read_arena_file(path)
    return arena_benchmark(table, f"arena-{table.label}", options, {"dataset": str(path)})


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the arena's parquet files (data dir or hub cache), upstream Arena-Hard's
    judge prompts; the reference is the humans' votes, not a judge."""
    arena = HUB_ARENAS[name]

    def data() -> Found | None:
        local = local_parquet_files(arena)
        if local is not None:
            return Found("data dir", str(local[0].parent))
        cached = cached_snapshot_files(arena)
        return Found("hub cache", str(cached[0].parent)) if cached is not None else None

    return BenchmarkCard(
        name,
        "placement",
        1,
        None,
        (
            Need(
                "data",
                data,
                f"`jurist run --bench {name} --dry-run` fetches hf://datasets/{arena.repo_id} once; "
                + offline_hint(f"{name}/*.parquet"),
            ),
            arena_hard_prompts(name),
        ),
        about=f"a model placed among {arena.label}'s human-voted ratings",
    )
