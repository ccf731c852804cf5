"""AlpacaEval 2's length-controlled win rate, from per-question preferences and answer lengths."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import InputError, JuristError
from jurist.families.pairwise.common import Oriented
from jurist.ratings import Battle, Row, r

if TYPE_CHECKING:
    from jurist.benchmarks import OfficialLC
    from jurist.store import RunDir


def _answer_lengths(run: RunDir, model: str) -> tuple[dict[str, int], bool]:
    """uid -> answer length in characters (of the lowest sample: the baseline's one answer), in file order,
    and whether every answer came from a source (shipped by the benchmark, or imported) rather than from
    generation: such a file is written in its source's order, which AlpacaEval's GLM folds depend on."""
    from jurist.store import answer_text, iter_numbered_jsonl, sample_of

    lengths: dict[str, tuple[int, int]] = {}
    sourced = True
    for _, record in iter_numbered_jsonl(run.answers(model), repair=False):
        text = answer_text(record)
        if text is None:
            continue
        uid, sample = str(record.get("uid", record.get("question_id"))), sample_of(record)
        sourced = sourced and bool(record.get("source"))
        if uid not in lengths or sample <= lengths[uid][0]:
            lengths[uid] = (sample, len(text))
    return {uid: length for uid, (_, length) in lengths.items()}, sourced


def load_instruction_difficulty(path: Path) -> dict[str, float]:
    """uid -> AlpacaEval's official instruction difficulty, from a CSV with ``instruction_difficulty`` and
    ``instruction`` (AlpacaEval's ``df_gamed.csv`` / ``instruction_difficulty.csv``) or ``uid`` columns."""
    import csv

    from jurist.benchmarks import question_uid

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
            uid = row["uid"] if "uid" in fields else question_uid(row["instruction"])
            try:
                values[uid] = float(row["instruction_difficulty"])
            except ValueError:
                raise InputError(
                    path, f"line {line}", "field 'instruction_difficulty': not a number"
                ) from None
    return values


def alpaca_lc_inputs(run: RunDir) -> tuple[OfficialLC | None, str | None]:
    """For a run of ``--bench alpaca-eval`` (run.json ``bench_info.lc``): AlpacaEval's official LC inputs,
    or None and the warning saying why today's estimate is used; (None, None) for any other run."""
    from jurist.families.pairwise.battles import read_json

    lc = ((read_json(run.run_json) or {}).get("bench_info") or {}).get("lc")
    if not isinstance(lc, dict):
        return None, None
    from jurist.benchmarks import official_lc_for

    return official_lc_for(lc)


def lc_rows(
    battles: list[Battle],
    baselines: list[str],
    run: RunDir,
    notes: list[str],
    difficulty: dict[str, float] | None = None,
    official: OfficialLC | None = None,
) -> list[Row]:
    """AlpacaEval 2's length-controlled win rate per model, from per-question preferences and lengths;
    ``official``: AlpacaEval's own instruction difficulty and gamed-baseline rows (``length_controlled_v1``
    exactly), else ``difficulty`` if given, else one estimated from these models."""
    import numpy as np

    from jurist.ratings import length_controlled_win_rates

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
    base_len, sourced = _answer_lengths(run, baseline)
    seen = set(oriented.uid)
    # The questions' order, which the GLM's cross-validation folds follow: the source's own (AlpacaEval's
    # shipped baseline, as upstream orders it), else sorted uids, never the order answers were generated in.
    uids = [uid for uid in base_len if uid in seen]
    if not sourced:
        uids.sort()
    if not uids:
        raise JuristError(
            f"--length-controlled needs the answers of {baseline} (answers/ has none that match)"
        )
    models = sorted(set(oriented.model))
    column = {uid: i for i, uid in enumerate(uids)}
    prefs = np.full((len(models), len(uids)), np.nan)
    lens = np.full_like(prefs, np.nan)
    for m, model in enumerate(models):
        model_len, _ = _answer_lengths(run, model)
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
    base = np.array([base_len[u] for u in uids], dtype=float)
    if official is not None:
        absent = [uid for uid in uids if uid not in official.difficulty]
        if absent:
            raise JuristError(f"AlpacaEval's instruction difficulty has no value for {len(absent)} questions")
        gamma, gamed = official.design(uids)
        results = length_controlled_win_rates(
            prefs,
            lens,
            base,
            instruction_difficulty=gamma,
            gamed=[gamed],
            regularize_lambda=official.row_weight,
        )
        notes.append(
            "LC as AlpacaEval computes it: its official instruction difficulty and the gamed baselines' "
            f"{len(gamed.preference)} annotations (weight {official.row_weight:g} each)"
        )
        return _lc_table(models, results, baseline, prefs, "official")
    try:
        results = length_controlled_win_rates(prefs, lens, base, instruction_difficulty=given)
    except np.linalg.LinAlgError:  # e.g. every model won every game: the regression has no solution
        raise JuristError(
            "--length-controlled: the length-controlled fit has no solution on these battles (too few "
            "models, answers whose lengths barely differ, or models that won or lost every game: nothing "
            "separates length from quality); score without it, or with more models and questions"
        ) from None
    if given is None:
        notes.append(
            f"instruction difficulty was estimated jointly from these {len(models)} models (AlpacaEval's "
            "official per-instruction values were not supplied: --instruction-difficulty); LC is approximate"
        )
    return _lc_table(models, results, baseline, prefs)


def _head_to_head(p: Any) -> dict[str, Any]:
    """AlpacaEval's counts beside its win rate: wins (p > 1/2), losses, draws and the discrete win rate."""
    import numpy as np

    p = p[~np.isnan(p)]
    wins, losses, draws = int((p > 0.5).sum()), int((p < 0.5).sum()), int((p == 0.5).sum())
    total = wins + losses + draws
    discrete = r(100.0 * (wins + draws / 2) / total) if total else None
    return {"n_wins": wins, "n_wins_base": losses, "n_draws": draws, "discrete_win_rate": discrete}


def _lc_table(
    models: list[str], results: list[Any], baseline: str, prefs: Any, source: str | None = None
) -> list[Row]:
    """One row per model. The headline ``score`` is the LC win rate only when its instruction difficulty
    is AlpacaEval's (``official``, or a difficulty file given); with difficulty estimated from the run's own
    models, LC can be points off the official one, so the headline is the plain win rate and the LC is
    kept beside it as ``lc_estimate``."""
    rows: list[Row] = []
    for m, (model, res) in enumerate(zip(models, results, strict=True)):
        difficulty = source or res.difficulty_source
        estimated = difficulty == "estimated"
        lc, plain = r(res.length_controlled_win_rate), r(res.win_rate)
        rows.append(
            {
                "model": model,
                "score": plain if estimated else lc,
                "ci_low": None,
                "ci_high": None,
                **({"lc_estimate": lc} if estimated else {}),
                "lc_standard_error": r(res.lc_standard_error),
                "win_rate": plain,
                "win_rate_standard_error": r(res.standard_error),
                "difficulty_source": difficulty,
                "n": res.n,
                **_head_to_head(prefs[m]),
            }
        )
    rows.append({"model": baseline, "score": 50.0, "ci_low": 50.0, "ci_high": 50.0, "n": 0, "baseline": True})
    return rows


def lc_intervals(rows: list[Row], ci_level: float) -> None:
    """Normal intervals from the headline's standard error (AlpacaEval reports the standard error only):
    the LC's, or the win rate's where it is the headline (LC only estimated)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + ci_level / 2.0)
    for row in rows:
        se = row.get("win_rate_standard_error" if "lc_estimate" in row else "lc_standard_error")
        if se is not None and row["score"] is not None and not math.isnan(se):
            row["ci_low"], row["ci_high"] = r(row["score"] - z * se), r(row["score"] + z * se)
