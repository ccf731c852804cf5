"""Synthetic run directories of checkpoints with known strengths, for the paired-decision tests.

Each question q has a difficulty; a checkpoint of strength s wins each of its two games against the
baseline with probability sigmoid(s - difficulty_q), drawn from a seeded generator, so the true win rate
of every checkpoint is known and two checkpoints share each question's difficulty (what pairing gains).
The files are what a pairwise jurist run writes: run.json and battles.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

JUDGE = "judge-synth"


def run_fields(name: str, model: str, n: int, *, judge: str = JUDGE, version: str = "1") -> dict[str, Any]:
    return {
        "status": "finished",
        "bench": name,
        "bench_name": name,
        "bench_info": {"version": version},
        "n_questions": n,
        "samples": 1,
        "models": [model],
        "baseline": "base",
        "baselines": ["base"],
        "judges": [judge],
        "judge_kind": "pairwise",
        "rule_suite": None,
        "protocols": {judge: "jurist-pairwise"},
        "judge_prompt": None,
        "judge_preset": None,
        "score_family": "pairwise",
        "scoring": {"metrics": ["winrate"]},
        "model_specs": {judge: {"model": judge, "temperature": 0.0}},
    }


def win_probabilities(strength: float, difficulty: np.ndarray[Any, np.dtype[np.float64]]) -> Any:
    return 1.0 / (1.0 + np.exp(-(strength - difficulty)))


def write_checkpoint(
    root: Path,
    model: str,
    strength: float,
    difficulty: np.ndarray[Any, np.dtype[np.float64]],
    seed: int,
    *,
    task: str = "synth",
    judge: str = JUDGE,
) -> Path:
    """A run directory of ``model`` judged against ``base`` in two games per question."""
    rng = np.random.default_rng(seed)
    p = win_probabilities(strength, difficulty)
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for q, p_q in enumerate(p):
        for game in range(2):
            won = bool(rng.random() < p_q)
            a, b = (model, "base") if game == 0 else ("base", model)
            winner = (
                ("model_a" if game == 0 else "model_b") if won else ("model_b" if game == 0 else "model_a")
            )
            lines.append(
                {"model_a": a, "model_b": b, "winner": winner, "weight": 1, "uid": f"q{q:04d}",
                 "sample": 0, "category": "c", "judge": judge, "source": "synth"}
            )  # fmt: skip
    (root / "battles.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    fields = run_fields(task, model, len(difficulty), judge=judge)
    (root / "run.json").write_text(json.dumps(fields), encoding="utf-8")
    return root


def true_win_rate(strength: float, difficulty: np.ndarray[Any, np.dtype[np.float64]]) -> float:
    """The checkpoint's expected win rate on these questions, in percent."""
    return 100.0 * float(np.mean(win_probabilities(strength, difficulty)))
