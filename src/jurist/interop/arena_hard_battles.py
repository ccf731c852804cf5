"""Arena-Hard's own battles file (``data/arena_hard_battles.jsonl``, what the v0.1-era ``show_result.py`` of
lm-sys/arena-hard-auto and r4dm/arena-hard-local writes), scored by ``jurist show FILE`` as Arena-Hard does.

Each line is one battle ``{question_id, model_a, model_b, winner}``, ``model_a`` being the baseline and
``winner`` one of ``model_a``, ``model_b``, ``tie``; a strong verdict was written as three identical lines,
a game without a valid verdict not at all. Upstream fits Bradley-Terry to these rows and prints each model's
win rate against the baseline: with every battle against one baseline, that fit gives exactly the weighted
win rate, which is what jurist computes (the same number, without the fit). The interval is upstream's
too: the 2.5/97.5 percentiles of 100 rounds resampling the file's rows, drawn from NumPy's legacy generator
seeded 42 as upstream's are (:func:`jurist.ratings.row_bootstrap_intervals`), so the same file gives the
same interval; ``--resample questions`` (or ``--bootstrap``, ``--seed``, ``--ci``, ``--method``...) scores
it as jurist scores a run instead. Rows where the baseline met itself (upstream judges the baseline's own
answers too) move no score: they are drawn in the bootstrap, as upstream draws them, and scored by nothing.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from jurist.errors import InputError, JuristError
from jurist.families import ScoreRequest, Scores, score_run_dir
from jurist.interop.common import iter_foreign_jsonl, write_jsonl
from jurist.ratings import row_bootstrap_intervals

FIELDS = ("question_id", "model_a", "model_b", "winner")
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
OTHER_SCHEMAS = frozenset({"judge", "judge_model", "kind", "source"})
"""Keys of the battles files that are not Arena-Hard's (jurist's pairwise battles, JudgeArena's)."""
SETTINGS = {"method": "winrate", "bootstrap": 100, "seed": 42, "ci_level": 0.95}


def is_arena_hard_battles(path: Path) -> bool:
    """Whether ``path`` is a JSONL file whose first record has Arena-Hard's battle fields and nothing of
    jurist's or JudgeArena's battle schemas."""
    if not path.is_file() or path.suffix not in (".jsonl", ".json"):
        return False
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and set(FIELDS) <= set(record) and not OTHER_SCHEMAS & set(record)


def read_arena_hard_battles(path: Path) -> tuple[list[dict[str, Any]], list[str], int]:
    """jurist battles of the lines between two models (weight 1: upstream wrote a strong verdict as three
    lines), in file order; the models in ``model_a`` (upstream's baseline); how many lines the baseline
    played against itself."""
    battles: list[dict[str, Any]] = []
    baselines: dict[str, None] = {}
    itself = 0
    for line, record in iter_foreign_jsonl(path):
        where = f"line {line}"
        for name in ("model_a", "model_b"):
            if not isinstance(record.get(name), str) or not record[name]:
                raise InputError(path, where, f"field {name!r}: expected a model name")
        if record.get("winner") not in WINNERS:
            raise InputError(path, where, f"field 'winner': {record.get('winner')!r} is not one of {WINNERS}")
        uid = record.get("question_id")
        if not isinstance(uid, (str, int)) or isinstance(uid, bool):
            raise InputError(path, where, "field 'question_id': expected a question id")
        baselines[record["model_a"]] = None
        itself += record["model_a"] == record["model_b"]
        battles.append(
            {
                "kind": "battle",
                "model_a": record["model_a"],
                "model_b": record["model_b"],
                "winner": record["winner"],
                "weight": 1,
                "uid": str(uid),
                "sample": 0,
                "category": "default",
                "judge": "",
                "source": "llm-judge",
            }
        )
    return battles, list(baselines), itself


def score_arena_hard_battles(path: Path, request: ScoreRequest) -> Scores:
    """The file at ``path`` scored through jurist's scoring door, as Arena-Hard scores it (module
    docstring) unless ``request`` chooses otherwise; nothing is written."""
    rows, in_a, itself = read_arena_hard_battles(path)
    battles = [b for b in rows if b["model_a"] != b["model_b"]]
    if not battles:
        raise JuristError(f"{path}: no battles between two different models")
    if len(in_a) != 1 and not request.baselines:
        raise JuristError(f"{path}: several models play model_a ({', '.join(in_a[:5])}); pass --baseline")
    baseline = request.baselines[0] if request.baselines else in_a[0]
    recorded = {
        "score_family": "pairwise",
        "bench_name": path.name,
        "baseline": baseline,
        "invalid": {},
        "scoring": dict(SETTINGS),
    }
    with tempfile.TemporaryDirectory(prefix="jurist-arena-hard-") as folder:
        write_jsonl(Path(folder) / "battles.jsonl", battles)
        scores = score_run_dir(Path(folder), request, recorded=recorded)
    scores.title = f"Arena-Hard battles: {path}"
    upstream = _upstream_interval(request)
    if upstream:
        _row_intervals(scores, rows, baseline)
    how = "its interval" if upstream else "the interval resampling questions (--resample questions), not"
    scores.notes.insert(
        0,
        f"{path}: {len(battles)} battle rows against {baseline}, scored as Arena-Hard's show_result.py "
        f"(its Bradley-Terry fit against one baseline is this weighted win rate), with {how} "
        "upstream's resampling of rows",
    )
    if itself:
        scores.notes.append(f"{itself} row(s) where {baseline} met itself move no score")
    return scores


def _upstream_interval(request: ScoreRequest) -> bool:
    """Whether the interval is upstream's row bootstrap: unless an option asks for jurist's scoring."""
    return not request.chooses_method() and request.resample is None and not request.categories


def _row_intervals(scores: Scores, rows: list[dict[str, Any]], baseline: str) -> None:
    """Replace each model's interval by upstream's row bootstrap over every row of the file (in place)."""
    models = sorted({b["model_b"] if b["model_a"] == baseline else b["model_a"] for b in rows} - {baseline})
    index = {name: k for k, name in enumerate(models)}
    groups, p_model = [], []
    for battle in rows:
        a, b, winner = battle["model_a"], battle["model_b"], battle["winner"]
        model = b if a == baseline else a
        counts = a != b and baseline in (a, b)
        groups.append(index[model] if counts else -1)
        won = 0.5 if winner.startswith("tie") else float((winner == "model_b") == (model == b))
        p_model.append(won)
    settings = scores.settings
    low, high = row_bootstrap_intervals(
        groups, p_model, len(models), rounds=int(settings["bootstrap_rounds"]), seed=int(settings["seed"]),
        ci_level=float(settings["ci_level"]),
    )  # fmt: skip
    for row in scores.rows:
        k = index.get(row["model"])
        if k is not None and not row.get("baseline") and row.get("ci_low") is not None:
            row["ci_low"], row["ci_high"] = round(float(low[k]), 4), round(float(high[k]), 4)
    settings["resample"] = "rows (Arena-Hard v0.1's show_result.py: the whole file, numpy's legacy seed)"
