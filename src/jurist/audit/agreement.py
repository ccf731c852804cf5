"""How far the judges of one run agree, and what they make of the models together (``jurist judges compare``).

A single LLM judge is one noisy instrument; a run judged by several says how much a verdict depends on the
judge. Agreement is measured game by game on the same question, model and answer, with every verdict put
in the candidate's perspective (game 1 shows the candidate second, so its label is mirrored), so a judge
that prefers the candidate in both orders agrees with itself and with a like-minded judge. The verdicts
are read through the card's view of a judgment (:mod:`jurist.audit.verdicts`); the statistics are
:mod:`jurist.ratings.agreement`'s.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

from jurist.audit.verdicts import Game
from jurist.errors import JuristError

GameKey = tuple[str, str, int]
"""(model, question uid, game number): one verdict slot that every judge of the run filled."""
Identity = tuple[Any, ...]
"""What a verdict judged (the answer's and the baseline's hashes): slots compare only on the same answers."""


def _no_judgments(run_dir: Path) -> str:
    """Why ``run_dir`` has no judgments, in the user's terms: a run checked by rule or answered only has
    no judge; a folder with no run.json is no run directory."""
    try:
        fields = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        fields = None
    if not isinstance(fields, dict):
        return f"{run_dir}: no judgments/ folder and no run.json (is this a jurist run directory?)"
    bench = fields.get("bench_name") or fields.get("bench") or "its benchmark"
    if fields.get("rule_suite"):
        return (
            f"{run_dir}: a run of {bench}, checked by rule ({fields['rule_suite']}) with no judge, so it has "
            "no judges to compare (`jurist show` gives its scores)"
        )
    if fields.get("mode") == "inference-only":
        return f"{run_dir}: a --inference-only run of {bench}: nothing judged yet, so no judges to compare"
    return f"{run_dir}: a run of {bench} with no judgments yet: no judges to compare"


def _game(entry: dict[str, Any], number: int) -> Game:
    """One stored game as the card's view holds it; a label that is not a string is no verdict."""
    label = entry.get("label")
    return Game(
        int(entry.get("game", number)),
        str(entry.get("a", "")),
        str(entry.get("b", "")),
        label if isinstance(label, str) else None,
    )


def load_verdicts(run_dir: Path) -> dict[str, dict[GameKey, tuple[str | None, Identity]]]:
    """judge -> game slot -> (label in the candidate's perspective, identity of the judged answers).

    The last record per (model, uid) wins, as on resume. The identity (answer and baseline hashes) lets
    a comparison skip slots where the judges saw different answers.
    """
    from jurist.store import iter_jsonl

    root = run_dir / "judgments"
    if not root.is_dir():
        raise JuristError(_no_judgments(run_dir))
    verdicts: dict[str, dict[GameKey, tuple[str | None, Identity]]] = defaultdict(dict)
    for path in sorted(root.glob("*/*.jsonl")):
        latest: dict[tuple[str, str, str], dict[str, Any]] = {}
        for record in iter_jsonl(path, repair=False):
            if record.get("uid") is None or not isinstance(record.get("games"), list):
                continue
            judge = str(record.get("judge") or path.parent.name)
            model = str(record.get("model") or path.stem)
            latest[(judge, model, str(record["uid"]))] = record
        for (judge, model, uid), record in latest.items():
            identity = (record.get("answer_hash"), record.get("baseline_hash"))
            for number, entry in enumerate(record["games"], start=1):
                if isinstance(entry, dict):
                    game = _game(entry, number)
                    verdicts[judge][(model, uid, game.number)] = (game.seen_from(model), identity)
    return dict(verdicts)


def load_leaderboards(run_dir: Path) -> dict[str, dict[str, float]]:
    """judge -> model -> score from ``leaderboard.json``, without baseline rows (fixed at 50 by design)."""
    path = run_dir / "leaderboard.json"
    if not path.is_file():
        return {}
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path}: not valid JSON ({exc})") from None
    boards: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or row.get("baseline") or row.get("score") is None:
            continue
        boards[str(row.get("judge", ""))][str(row["model"])] = float(row["score"])
    return dict(boards)


def _num(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _pair_row(
    names: tuple[str, str],
    verdicts: tuple[dict[GameKey, tuple[str | None, Identity]], dict[GameKey, tuple[str | None, Identity]]],
    boards: tuple[dict[str, float], dict[str, float]],
) -> dict[str, Any]:
    """Agreement, kappa and rank correlation of two judges, on the slots both filled on the same answers."""
    from jurist.ratings import (
        agreement_rate,
        align_leaderboards,
        collapse_five_to_three,
        kappa_five,
        kappa_three,
        rank_correlation,
    )

    mine, theirs = verdicts
    slots = [slot for slot in sorted(set(mine) & set(theirs)) if mine[slot][1] == theirs[slot][1]]
    a = [mine[slot][0] for slot in slots]
    b = [theirs[slot][0] for slot in slots]
    models, left, right = align_leaderboards(*boards)
    ranks = rank_correlation(left, right)
    return {
        "judge_a": names[0],
        "judge_b": names[1],
        "n": sum(x is not None and y is not None for x, y in zip(a, b, strict=True)),
        "agreement": _num(agreement_rate(a, b)),
        "agreement_three": _num(agreement_rate(collapse_five_to_three(a), collapse_five_to_three(b))),
        "kappa_five": _num(kappa_five(a, b)),
        "kappa_three": _num(kappa_three(a, b)),
        "n_models": len(models),
        "spearman": _num(ranks.spearman),
        "kendall": _num(ranks.kendall),
    }


def _ensemble(judges: list[str], boards: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """Every model's mean score over the judges that scored it, best first, with each judge's score."""
    import numpy as np

    from jurist.ratings import ensemble_mean

    models = sorted({model for board in boards.values() for model in board})
    matrix = np.array([[boards.get(j, {}).get(m, math.nan) for m in models] for j in judges], dtype=float)
    combined = ensemble_mean(matrix) if models else np.array([])
    rows: list[dict[str, Any]] = [
        {
            "model": model,
            "ensemble": _num(float(combined[i])),
            "scores": {judge: boards[judge][model] for judge in judges if model in boards.get(judge, {})},
        }
        for i, model in enumerate(models)
    ]
    rows.sort(key=lambda row: -(row["ensemble"] if row["ensemble"] is not None else -math.inf))
    return rows


def compare_judges(run_dir: Path) -> dict[str, Any]:
    """Agreement, kappa and rank correlation for each pair of judges, plus the ensemble leaderboard."""
    verdicts = load_verdicts(run_dir)
    boards = load_leaderboards(run_dir)
    judges = sorted(set(verdicts) | set(boards))
    if len(judges) < 2:
        found = ", ".join(judges) or "none"
        raise JuristError(f"{run_dir}: comparing judges needs a run judged by two or more (found: {found})")
    pairs = [
        _pair_row(
            (first, second),
            (verdicts.get(first, {}), verdicts.get(second, {})),
            (boards.get(first, {}), boards.get(second, {})),
        )
        for first, second in combinations(judges, 2)
    ]
    return {"run_dir": str(run_dir), "judges": judges, "pairs": pairs, "ensemble": _ensemble(judges, boards)}
