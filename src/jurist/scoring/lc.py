"""AlpacaEval 2's length-controlled win rate, from per-question preferences and answer lengths."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import InputError, JuristError
from jurist.scoring.common import Battle, Oriented, Row, r

if TYPE_CHECKING:
    from jurist.store.run_dir import RunDir


def _answer_lengths(run: RunDir, model: str) -> dict[str, int]:
    """uid -> answer length in characters, in file order (the order AlpacaEval's GLM folds depend on)."""
    from jurist.store.jsonl import iter_numbered_jsonl
    from jurist.store.line_index import answer_text

    lengths: dict[str, int] = {}
    for _, record in iter_numbered_jsonl(run.answers(model), repair=False):
        text = answer_text(record)
        if text is not None:
            lengths[str(record.get("uid", record.get("question_id")))] = len(text)
    return lengths


def load_instruction_difficulty(path: Path) -> dict[str, float]:
    """uid -> AlpacaEval's official instruction difficulty, from a CSV with ``instruction_difficulty`` and
    ``instruction`` (AlpacaEval's ``df_gamed.csv`` / ``instruction_difficulty.csv``) or ``uid`` columns."""
    import csv

    from jurist.interop.alpaca_eval import alpaca_uid

    if not path.is_file():
        raise InputError(path, "", "instruction difficulty file not found")
    values: dict[str, float] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = set(reader.fieldnames or ())
        if "instruction_difficulty" not in fields or not fields & {"instruction", "uid"}:
            raise InputError(
                path, "line 1", "needs columns 'instruction_difficulty' and 'instruction' or 'uid'"
            )
        for line, row in enumerate(reader, start=2):
            uid = row["uid"] if "uid" in fields else alpaca_uid(row["instruction"])
            try:
                values[uid] = float(row["instruction_difficulty"])
            except ValueError:
                raise InputError(
                    path, f"line {line}", "field 'instruction_difficulty': not a number"
                ) from None
    return values


def lc_rows(
    battles: list[Battle],
    baselines: list[str],
    run: RunDir,
    notes: list[str],
    difficulty: dict[str, float] | None = None,
) -> list[Row]:
    """AlpacaEval 2's length-controlled win rate per model, from per-question preferences and lengths."""
    import numpy as np

    from jurist.ratings.lc_winrate import length_controlled_win_rates

    oriented = Oriented(battles, set(baselines))
    used = sorted(set(oriented.baseline))
    if len(used) != 1:
        raise JuristError(f"--length-controlled needs one baseline per score; found {used} (use --category)")
    baseline = used[0]
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for model, p, weight, uid in zip(oriented.model, oriented.p, oriented.weight, oriented.uid, strict=True):
        cell = sums[(model, uid)]
        cell[0] += p * weight
        cell[1] += weight
    base_len = _answer_lengths(run, baseline)
    seen = set(oriented.uid)
    uids = [uid for uid in base_len if uid in seen]
    if not uids:
        raise JuristError(
            f"--length-controlled needs the answers of {baseline} (answers/ has none that match)"
        )
    models = sorted(set(oriented.model))
    column = {uid: i for i, uid in enumerate(uids)}
    prefs = np.full((len(models), len(uids)), np.nan)
    lens = np.full_like(prefs, np.nan)
    for m, model in enumerate(models):
        model_len = _answer_lengths(run, model)
        for uid, i in column.items():
            total = sums.get((model, uid))
            if total and total[1] > 0 and uid in model_len:
                prefs[m, i] = total[0] / total[1]
                lens[m, i] = model_len[uid]
    given = None
    if difficulty is not None:
        missing = [uid for uid in uids if uid not in difficulty]
        if missing:
            raise JuristError(
                f"--instruction-difficulty: {len(missing)} instructions of this run have no value"
            )
        given = np.array([difficulty[uid] for uid in uids], dtype=float)
    results = length_controlled_win_rates(
        prefs, lens, np.array([base_len[u] for u in uids], dtype=float), instruction_difficulty=given
    )
    if given is None:
        notes.append(
            f"instruction difficulty was estimated jointly from these {len(models)} models (AlpacaEval's "
            "official per-instruction values were not supplied: --instruction-difficulty); LC is approximate"
        )
    return _lc_table(models, results, baseline)


def _lc_table(models: list[str], results: list[Any], baseline: str) -> list[Row]:
    rows = [
        {
            "model": model,
            "score": r(res.length_controlled_win_rate),
            "ci_low": None,
            "ci_high": None,
            "lc_standard_error": r(res.lc_standard_error),
            "win_rate": r(res.win_rate),
            "win_rate_standard_error": r(res.standard_error),
            "difficulty_source": res.difficulty_source,
            "n": res.n,
        }
        for model, res in zip(models, results, strict=True)
    ]
    rows.append({"model": baseline, "score": 50.0, "ci_low": 50.0, "ci_high": 50.0, "n": 0, "baseline": True})
    return rows


def lc_intervals(rows: list[Row], ci_level: float) -> None:
    """Normal intervals from the LC standard error (AlpacaEval reports the standard error only)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + ci_level / 2.0)
    for row in rows:
        se = row.get("lc_standard_error")
        if se is not None and row["score"] is not None and not math.isnan(se):
            row["ci_low"], row["ci_high"] = r(row["score"] - z * se), r(row["score"] + z * se)
