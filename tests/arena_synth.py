"""A synthetic human-voted arena with known true strengths, in the unified schema, as JSONL or parquet.

About 60 models get true Elo ratings; human battles are drawn from the Bradley-Terry model with ties
that keep the expected score equal to the BT probability (so a fit recovers the truth without bias). A
few models are voted on rarely (below the 500-battle anchor threshold), a few battles are multi-turn, and
prompts come in three languages, so the loader's filters have something to filter.

Each stored answer starts with a strength tag the mock server's judges read (``[weak]`` ... ``[strong]``,
by the model's true-rating quintile), so a judged run against tests/mock_openai.py gives verdicts that
follow the arena's own ordering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jurist.ratings.bt import elo_win_probability

TIERS = ("weak", "worse", "baseline", "better", "strong")
"""The mock judges' strength names (0..4), lowest first."""
TIE_RATE = 0.08
LANGUAGES = (("en", 0.85), ("de", 0.10), ("fr", 0.05))


@dataclass(frozen=True)
class SynthArena:
    """The truth behind a synthetic arena and its battles as unified-schema records."""

    models: list[str]
    true: np.ndarray[Any, np.dtype[np.float64]]
    tiers: dict[str, str]
    rows: list[dict[str, Any]]

    @property
    def rating(self) -> dict[str, float]:
        return {name: float(value) for name, value in zip(self.models, self.true, strict=True)}


def build_arena(
    *,
    n_models: int = 60,
    n_battles: int = 80_000,
    n_rare: int = 6,
    multi_turn: float = 0.03,
    seed: int = 0,
) -> SynthArena:
    """``n_battles`` human battles over ``n_models`` models; the last ``n_rare`` are seldom drawn."""
    rng = np.random.default_rng(seed)
    models = [f"arena-{k:02d}" for k in range(n_models)]
    true = rng.normal(1150.0, 120.0, n_models)
    quintile = np.searchsorted(np.quantile(true, [0.2, 0.4, 0.6, 0.8]), true)
    tiers = {name: TIERS[int(q)] for name, q in zip(models, quintile, strict=True)}
    weight = np.ones(n_models)
    weight[n_models - n_rare :] = 0.02
    p = weight / weight.sum()
    a = rng.choice(n_models, size=n_battles, p=p)
    b = rng.choice(n_models, size=n_battles, p=p)
    clash = a == b
    while clash.any():
        b[clash] = rng.choice(n_models, size=int(clash.sum()), p=p)
        clash = a == b
    win = elo_win_probability(true[a], true[b])
    tie = rng.random(n_battles) < TIE_RATE
    # P(a wins | no tie) chosen so that E[score of a] = win: 0.5 * TIE_RATE + (1 - TIE_RATE) * p_a = win.
    p_a = np.clip((win - 0.5 * TIE_RATE) / (1.0 - TIE_RATE), 0.0, 1.0)
    a_wins = rng.random(n_battles) < p_a
    bothbad = rng.random(n_battles) < 0.3
    langs = rng.choice([c for c, _ in LANGUAGES], size=n_battles, p=[w for _, w in LANGUAGES])
    turns = np.where(rng.random(n_battles) < multi_turn, 2, 1)
    rows = []
    for k in range(n_battles):
        ma, mb = models[int(a[k])], models[int(b[k])]
        winner = (
            ("tie (bothbad)" if bothbad[k] else "tie") if tie[k] else ("model_a" if a_wins[k] else "model_b")
        )
        prompt = f"{langs[k]} question {k}: explain topic {k % 97}?"
        rows.append(
            {
                "question_id": f"q{k:06d}",
                "model_a": ma,
                "model_b": mb,
                "winner": winner,
                "conversation_a": _conversation(prompt, ma, tiers[ma], int(turns[k])),
                "conversation_b": _conversation(prompt, mb, tiers[mb], int(turns[k])),
                "lang": str(langs[k]),
            }
        )
    return SynthArena(models, true, tiers, rows)


def _conversation(prompt: str, model: str, tier: str, turns: int) -> list[dict[str, str]]:
    out = []
    for t in range(turns):
        out.append({"role": "user", "content": prompt if t == 0 else f"and then? ({t})"})
        out.append({"role": "assistant", "content": f"[{tier}] {model} says: answer {t} to {prompt}"})
    return out


def write_jsonl(arena: SynthArena, path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in arena.rows), encoding="utf-8")
    return path


def write_parquet(arena: SynthArena, path: Path, *, shards: int = 1, hub_style: bool = False) -> Path:
    """The arena as parquet (``shards`` files in ``path`` when > 1). ``hub_style`` writes 140k's shape:
    ``id`` and ``language`` columns, content as typed blocks, ``both_bad`` for a bad tie."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = arena.rows
    if hub_style:
        rows = [_hub_row(row) for row in rows]
    if shards == 1:
        pq.write_table(pa.Table.from_pylist(rows), str(path))
        return path
    path.mkdir(parents=True, exist_ok=True)
    size = -(-len(rows) // shards)
    for k in range(shards):
        chunk = rows[k * size : (k + 1) * size]
        pq.write_table(pa.Table.from_pylist(chunk), str(path / f"train-{k:05d}-of-{shards:05d}.parquet"))
    return path


def _hub_row(row: dict[str, Any]) -> dict[str, Any]:
    def blocks(conversation: list[dict[str, str]]) -> list[dict[str, Any]]:
        return [
            {"role": t["role"], "content": [{"type": "text", "text": t["content"]}]} for t in conversation
        ]

    return {
        "id": row["question_id"],
        "model_a": row["model_a"],
        "model_b": row["model_b"],
        "winner": "both_bad" if row["winner"] == "tie (bothbad)" else row["winner"],
        "conversation_a": blocks(row["conversation_a"]),
        "conversation_b": blocks(row["conversation_b"]),
        "language": {"en": "English", "de": "German", "fr": "French"}[row["lang"]],
    }


def judged_battles(
    arena: SynthArena,
    evaluated: str,
    true_rating: float,
    n: int,
    *,
    judge: str = "mock-judge",
    seed: int = 1,
    anchors: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Battles of a mock judge that prefers the evaluated model over an opponent with the BT probability
    of their true ratings (JudgeArena's schema); opponents drawn uniformly from ``anchors``."""
    rng = np.random.default_rng(seed)
    pool = sorted(anchors or set(arena.models))
    out = []
    for k in range(n):
        opponent = pool[int(rng.integers(len(pool)))]
        p_win = float(elo_win_probability(true_rating, arena.rating[opponent]))
        won = rng.random() < p_win
        first = rng.random() < 0.5
        a, b = (evaluated, opponent) if first else (opponent, evaluated)
        winner = ("model_a" if first else "model_b") if won else ("model_b" if first else "model_a")
        out.append(
            {
                "model_a": a,
                "model_b": b,
                "winner": winner,
                "source": "llm-judge",
                "pref": 0.0 if winner == "model_a" else 1.0,
                "question_id": f"j{k:05d}",
                "judge_model": judge,
            }
        )
    return out
