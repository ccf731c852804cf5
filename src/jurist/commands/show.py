"""``jurist show RUN_DIR``: score a finished (or imported) run again, with any method, without new requests.

Scoring reads ``battles.jsonl`` (small: a few fields per game), or the judgments when a run has no battles
file. With the run's own settings (run.json ``scoring``) the default method reproduces its ratings.json
exactly. Nothing is written unless ``--write`` is given.

Methods: the weighted win rate against the baseline (Arena-Hard v2's headline), Bradley-Terry on the Elo
scale with the win rate against the baseline it implies (Arena-Hard v0.1), style control (BT with z-scored
length/markdown features; Arena-Hard v2's ``-f``) and AlpacaEval's length-controlled win rate. Scores can
be split by category (each battle's baseline is whichever side is a baseline, so each category keeps its
own), shown per judge side by side, or pooled over judges as an ensemble.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
import typer.core

from jurist.errors import InputError, JuristError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from jurist.store.run_dir import RunDir

Method = Literal["winrate", "bt"]
Format = Literal["table", "json", "csv", "markdown"]
Resample = Literal["questions", "entries"]

STYLE_FEATURES = ("length", "markdown")
_OUTCOME = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}
_CSV_COLUMNS = (
    "category",
    "judge",
    "model",
    "score",
    "rating",
    "ci_low",
    "ci_high",
    "winrate",
    "winrate_ci_low",
    "winrate_ci_high",
    "win_rate",
    "win_rate_standard_error",
    "lc_standard_error",
    "difficulty_source",
    "n",
    "n_battles",
    "invalid",
    "baseline",
)


@dataclass(frozen=True)
class ShowOptions:
    """How to score; ``None`` settings come from the run's run.json (else 100 rounds, seed 0, 90%)."""

    method: Method = "winrate"
    style_control: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    baselines: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    ensemble: bool = False
    length_controlled: bool = False
    instruction_difficulty: Path | None = None
    n_bootstrap: int | None = None
    seed: int | None = None
    ci_level: float | None = None
    resample: Resample = "questions"


@dataclass
class Scored:
    """Rows to print, notes for the reader, the settings used and the battles that were scored."""

    rows: list[dict[str, Any]]
    notes: list[str]
    settings: dict[str, Any]
    battles: list[dict[str, Any]] = field(repr=False)


@dataclass(frozen=True)
class _Settings:
    n_bootstrap: int
    seed: int
    ci_level: float


class _Oriented:
    """Battles seen from the non-baseline side: model, baseline, P(model wins), weight and uid columns.

    Battles between two baselines or two non-baselines are left out (they say nothing about a win rate
    against a baseline).
    """

    def __init__(self, battles: list[dict[str, Any]], baselines: set[str]) -> None:
        self.model: list[str] = []
        self.baseline: list[str] = []
        self.p: list[float] = []
        self.weight: list[float] = []
        self.uid: list[str] = []
        for battle in battles:
            a, b = battle["model_a"], battle["model_b"]
            p_a = _OUTCOME[battle["winner"]]
            if b in baselines and a not in baselines:
                self._add(a, b, p_a, battle)
            elif a in baselines and b not in baselines:
                self._add(b, a, 1.0 - p_a, battle)

    def _add(self, model: str, baseline: str, p: float, battle: dict[str, Any]) -> None:
        self.model.append(model)
        self.baseline.append(baseline)
        self.p.append(p)
        self.weight.append(float(battle.get("weight", 1)))
        self.uid.append(str(battle["uid"]))

    def __len__(self) -> int:
        return len(self.model)

    def counts(self, keep: list[int]) -> tuple[dict[str, int], dict[str, int]]:
        """Questions and battles per model (both sides) over the rows in ``keep``."""
        uids: dict[str, set[str]] = defaultdict(set)
        battles: dict[str, int] = defaultdict(int)
        for k in keep:
            for name in (self.model[k], self.baseline[k]):
                uids[name].add(self.uid[k])
                battles[name] += 1
        return {name: len(u) for name, u in uids.items()}, dict(battles)


# ---------------------------------------------------------------------------------------------------------
# Reading the run (read-only: nothing here repairs or rewrites a file).


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path}: not valid JSON ({exc})") from None


def _battle_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a battle record (None when it can be scored)."""
    for name in ("model_a", "model_b", "uid"):
        if name not in record:
            return f"field '{name}' is missing"
    if record.get("winner") not in _OUTCOME:
        return f"field 'winner': {record.get('winner')!r} is not model_a|model_b|tie"
    weight = record.get("weight", 1)
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not weight >= 0:
        return f"field 'weight': {weight!r} is not a non-negative number"
    return None


def _is_battle(record: Any) -> bool:
    """Fast path of :func:`_battle_problem` for the common, valid record."""
    weight = record.get("weight", 1) if type(record) is dict else None
    return (
        weight is not None
        and "model_a" in record
        and "model_b" in record
        and "uid" in record
        and record.get("winner") in _OUTCOME
        and type(weight) in (int, float)
        and weight >= 0
    )


def read_battles_file(path: Path) -> list[dict[str, Any]]:
    """All records of battles.jsonl, parsed as one JSON array (2x faster than line by line).

    A torn last line (an interrupted write) is left out, as the JSONL reader does; any problem is reported
    with its line number by a second, line-by-line pass.
    """
    from jurist.store.jsonl import parse_jsonl_bytes

    data = path.read_bytes()
    data = data[: data.rfind(b"\n") + 1]
    lines = [line for line in data.split(b"\n") if line.strip()]
    try:
        records = json.loads(b"[" + b",".join(lines) + b"]")
    except ValueError:
        records = None
    if records is not None and all(_is_battle(r) for r in records):
        return records  # type: ignore[no-any-return]
    for number, record in parse_jsonl_bytes(path, data):
        problem = _battle_problem(record)
        if problem:
            raise InputError(path, f"line {number}", problem)
    raise InputError(path, "", "unreadable battles file")  # pragma: no cover - every failure is found above


def load_battles(run: RunDir) -> tuple[list[dict[str, Any]], str]:
    """The run's battles and where they came from (battles.jsonl, else rebuilt from the judgments)."""
    if run.battles.is_file():
        return read_battles_file(run.battles), "battles.jsonl"
    return _battles_from_judgments(run), "judgments"


def _battles_from_judgments(run: RunDir) -> list[dict[str, Any]]:
    """Battles of every judgment file, the last record per (judge, model, uid) winning."""
    from jurist.judging.pairwise import battles_from_judgment
    from jurist.store.jsonl import iter_numbered_jsonl
    from jurist.store.peer_formats import battles_from_preference

    root = run.root / "judgments"
    if not root.is_dir():
        raise JuristError(f"{run.root}: no battles.jsonl and no judgments/ to score")
    battles: list[dict[str, Any]] = []
    for path in sorted(root.glob("*/*.jsonl")):
        latest: dict[str, dict[str, Any]] = {}
        for _, record in iter_numbered_jsonl(path, repair=False):
            latest[str(record.get("uid"))] = record
        for record in latest.values():
            if "games" in record:
                battles.extend(battles_from_judgment(record))
            else:
                battles.extend(battles_from_preference(record))
    return battles


def _settings(opts: ShowOptions, run_json: dict[str, Any]) -> _Settings:
    scoring = run_json.get("scoring") or {}
    return _Settings(
        n_bootstrap=opts.n_bootstrap if opts.n_bootstrap is not None else int(scoring.get("bootstrap", 100)),
        seed=opts.seed if opts.seed is not None else int(scoring.get("seed", 0)),
        ci_level=opts.ci_level if opts.ci_level is not None else float(scoring.get("ci_level", 0.90)),
    )


def _infer_baselines(battles: list[dict[str, Any]]) -> list[str]:
    """Per category, the model that plays in every battle (a star design's centre)."""
    common: dict[str, set[str]] = {}
    for battle in battles:
        pair = {battle["model_a"], battle["model_b"]}
        category = battle.get("category", "")
        common[category] = common[category] & pair if category in common else pair
    return sorted({name for names in common.values() if len(names) == 1 for name in names})


def resolve_baselines(
    opts: ShowOptions, run_json: dict[str, Any], battles: list[dict[str, Any]]
) -> list[str]:
    """``--baseline``, else run.json's baselines, else inferred from the battles."""
    if opts.baselines:
        return list(opts.baselines)
    listed = run_json.get("baselines")
    if isinstance(listed, list) and listed:
        return [str(name) for name in listed]
    if isinstance(run_json.get("baseline"), str):
        return [run_json["baseline"]]
    inferred = _infer_baselines(battles)
    if not inferred:
        raise JuristError("cannot tell which model is the baseline; pass --baseline")
    return inferred


ALL = "*"  # the category key of whole-run counts

InvalidCounts = dict[tuple[str, str, str], int]
"""Questions left out for invalid verdicts, per (judge, model, category or ``ALL``)."""


def _invalid_counts(run: RunDir, run_json: dict[str, Any]) -> InvalidCounts:
    """Invalid-question counts from run.json (imports), else from the run's leaderboard.json."""
    counts: InvalidCounts = {}
    recorded = run_json.get("invalid")
    if isinstance(recorded, dict):
        for judge, per_model in recorded.items():
            for model, n in (per_model or {}).items():
                counts[(judge, model, ALL)] = int(n)
        for judge, per_model in (run_json.get("invalid_by_category") or {}).items():
            for model, per_category in (per_model or {}).items():
                for category, n in (per_category or {}).items():
                    counts[(judge, model, category)] = int(n)
        return counts
    board = _read_json(run.leaderboard)
    for row in board if isinstance(board, list) else []:
        if isinstance(row, dict) and row.get("invalid") and "category" not in row:
            counts[(row.get("judge", ""), row["model"], ALL)] = int(row["invalid"])
    return counts


def _select_judges(
    battles: list[dict[str, Any]], invalid: InvalidCounts, opts: ShowOptions
) -> tuple[list[dict[str, Any]], InvalidCounts]:
    """Keep the chosen judges; with ``--ensemble`` relabel their battles as one pooled judge."""
    available = sorted({b.get("judge", "") for b in battles})
    chosen = list(opts.judges) or available
    unknown = [j for j in chosen if j not in available]
    if unknown:
        raise JuristError(f"--judge: no battles for {', '.join(unknown)} (judges: {', '.join(available)})")
    keep = set(chosen)
    battles = [b for b in battles if b.get("judge", "") in keep]
    invalid = {key: n for key, n in invalid.items() if key[0] in keep}
    if not opts.ensemble or len(chosen) < 2:
        return battles, invalid
    name = "+".join(chosen)
    pooled: dict[tuple[str, str, str], int] = defaultdict(int)
    for (_, model, category), n in invalid.items():
        pooled[(name, model, category)] += n
    return [{**b, "judge": name} for b in battles], dict(pooled)


def _invalid_for(invalid: InvalidCounts, category: str | None) -> dict[tuple[str, str], int] | None:
    """(judge, model) -> count for one category (None: the run does not record it per category)."""
    key = ALL if category is None else category
    if category is not None and not any(k[2] != ALL for k in invalid) and invalid:
        return None
    return {(judge, model): n for (judge, model, cat), n in invalid.items() if cat == key}


# ---------------------------------------------------------------------------------------------------------
# Scoring.


def score_run(root: Path, opts: ShowOptions) -> Scored:
    """Score a run directory's battles as ``opts`` says; pure reading, no writes."""
    from jurist.store.run_dir import RunDir

    run = RunDir(root)
    if not run.root.is_dir():
        raise JuristError(f"{root}: no such run directory")
    _check_options(opts)
    run_json = _read_json(run.run_json) or {}
    battles, source = load_battles(run)
    if not battles:
        raise JuristError(f"{root}: the run has no battles to score (from {source})")
    settings = _settings(opts, run_json)
    battles, invalid = _select_judges(battles, _invalid_counts(run, run_json), opts)
    baselines = resolve_baselines(opts, run_json, battles)
    notes: list[str] = []
    if source == "judgments":
        notes.append("battles rebuilt from the judgments (the run has no battles.jsonl)")
    if not opts.categories:
        _note_pooled_baselines(battles, baselines, notes)
    rows: list[dict[str, Any]] = []
    for category, subset in _by_category(battles, opts.categories):
        counts = _invalid_for(invalid, category)
        part = _score_subset(subset, baselines, run, opts, settings, counts or {}, notes)
        for row in part:
            if category is not None:
                row["category"] = category
            if counts is None:
                row["invalid"] = None  # only known for the whole run
        rows.extend(part)
    if opts.categories:
        battles = [b for b in battles if b.get("category", "default") in set(opts.categories)]
    return Scored(rows, notes, _describe(opts, settings, baselines), battles)


def _note_pooled_baselines(battles: list[dict[str, Any]], baselines: list[str], notes: list[str]) -> None:
    """Say so when one score mixes several baselines (e.g. Arena-Hard v2's two categories)."""
    names = set(baselines)
    used = {b["model_a"] for b in battles if b["model_a"] in names}
    used |= {b["model_b"] for b in battles if b["model_b"] in names}
    if len(used) > 1:
        notes.append(
            f"these battles have {len(used)} baselines ({', '.join(sorted(used))}); each score pools "
            "them: use --category to score each category against its own"
        )


def _check_options(opts: ShowOptions) -> None:
    unknown = set(opts.style_control) - set(STYLE_FEATURES)
    if unknown:
        raise JuristError(f"--style-control: unknown feature(s) {sorted(unknown)}; choose length, markdown")
    if opts.length_controlled and (opts.style_control or opts.method != "winrate"):
        raise JuristError(
            "--length-controlled is a win rate; it cannot be combined with --method bt or style control"
        )
    if opts.resample == "entries" and opts.method == "winrate" and not opts.style_control:
        raise JuristError("--resample entries applies to --method bt and --style-control")
    if opts.ci_level is not None and not 0.0 < opts.ci_level < 1.0:
        raise JuristError(f"--ci: {opts.ci_level} is not in (0, 1)")


def _by_category(
    battles: list[dict[str, Any]], categories: tuple[str, ...]
) -> list[tuple[str | None, list[dict[str, Any]]]]:
    if not categories:
        return [(None, battles)]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for battle in battles:
        groups[battle.get("category", "default")].append(battle)
    missing = [c for c in categories if c not in groups]
    if missing:
        raise JuristError(
            f"--category: no battles in {', '.join(missing)} (categories: {', '.join(sorted(groups))})"
        )
    return [(c, groups[c]) for c in dict.fromkeys(categories)]


def _describe(opts: ShowOptions, settings: _Settings, baselines: list[str]) -> dict[str, Any]:
    method = (
        "lc-winrate" if opts.length_controlled else "style-control" if opts.style_control else opts.method
    )
    described: dict[str, Any] = {
        "method": method,
        "seed": settings.seed,
        "bootstrap_rounds": settings.n_bootstrap,
        "ci_level": settings.ci_level,
        "baselines": baselines,
        "resample": opts.resample,
    }
    if opts.style_control:
        described["style_features"] = list(opts.style_control)
    if opts.categories:
        described["categories"] = list(opts.categories)
    if opts.ensemble:
        described["ensemble"] = True
    return described


def _score_subset(
    battles: list[dict[str, Any]],
    baselines: list[str],
    run: RunDir,
    opts: ShowOptions,
    settings: _Settings,
    invalid: dict[tuple[str, str], int],
    notes: list[str],
) -> list[dict[str, Any]]:
    if opts.length_controlled:
        difficulty = (
            load_instruction_difficulty(opts.instruction_difficulty) if opts.instruction_difficulty else None
        )
        rows = _per_judge(battles, lambda sub: _lc_rows(sub, baselines, run, notes, difficulty))
        _lc_intervals(rows, settings.ci_level)
    elif opts.style_control:
        styles = _StyleCache(run, notes)
        rows = _per_judge(battles, lambda sub: _style_rows(sub, baselines, styles, opts, settings, notes))
    elif opts.method == "bt":
        rows = _per_judge(battles, lambda sub: _bt_rows(sub, baselines, opts, settings))
    else:
        from jurist.scoring import win_rate_leaderboard

        return win_rate_leaderboard(
            battles,
            set(baselines),
            invalid=invalid,
            n_bootstrap=settings.n_bootstrap,
            seed=settings.seed,
            ci_level=settings.ci_level,
        )
    for row in rows:
        row.setdefault("invalid", invalid.get((row["judge"], row["model"]), 0))
    return rows


def _per_judge(
    battles: list[dict[str, Any]], score: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Score each judge's battles separately; rows carry the judge, sorted best first within a judge."""
    by_judge: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for battle in battles:
        by_judge[battle.get("judge", "")].append(battle)
    rows: list[dict[str, Any]] = []
    for judge in sorted(by_judge):
        for row in score(by_judge[judge]):
            rows.append({"model": row.pop("model"), "judge": judge, **row})
    key = "rating" if rows and "rating" in rows[0] else "score"
    rows.sort(key=lambda r: (r["judge"], -(r[key] if r[key] is not None else -math.inf)))
    return rows


def _anchor(names: list[str], baselines: list[str]) -> int:
    for baseline in baselines:
        if baseline in names:
            return names.index(baseline)
    raise JuristError(f"none of the baselines ({', '.join(baselines)}) has battles here; pass --baseline")


def _questions_per_model(battles: list[dict[str, Any]]) -> dict[str, int]:
    uids: dict[str, set[str]] = defaultdict(set)
    for battle in battles:
        uids[battle["model_a"]].add(str(battle["uid"]))
        uids[battle["model_b"]].add(str(battle["uid"]))
    return {model: len(u) for model, u in uids.items()}


def _explode(weights: npt.NDArray[np.float64]) -> npt.NDArray[np.int64] | None:
    """Row indices repeating each row ``weight`` times (Arena-Hard's exploded rows); None if not integral."""
    import numpy as np

    if not np.all(weights == np.round(weights)):
        return None
    return np.repeat(np.arange(weights.size), weights.astype(np.int64))


def _bt_rows(
    battles: list[dict[str, Any]], baselines: list[str], opts: ShowOptions, settings: _Settings
) -> list[dict[str, Any]]:
    """Elo-scale BT ratings anchored at the baseline (1000) and each model's implied win rate against it."""
    import numpy as np

    from jurist.ratings.bt import bradley_terry, win_rate_vs_anchor

    names = sorted({b["model_a"] for b in battles} | {b["model_b"] for b in battles})
    index = {name: i for i, name in enumerate(names)}
    a = np.array([index[b["model_a"]] for b in battles])
    b_ = np.array([index[b["model_b"]] for b in battles])
    y = np.array([_OUTCOME[b["winner"]] for b in battles])
    w = np.array([float(b.get("weight", 1)) for b in battles])
    clusters: Any = np.array([str(b["uid"]) for b in battles])
    weights: Any = w
    if opts.resample == "entries":
        rows = _explode(w)
        clusters = None
        if rows is not None:
            a, b_, y, weights = a[rows], b_[rows], y[rows], None
    anchor = _anchor(names, baselines)
    try:
        result = bradley_terry(
            a,
            b_,
            y,
            weights=weights,
            n_models=len(names),
            anchor=anchor,
            n_bootstrap=settings.n_bootstrap,
            ci_level=settings.ci_level,
            seed=settings.seed,
            clusters=clusters,
        )
    except ValueError as exc:
        raise JuristError(f"Bradley-Terry: {exc}") from None
    wr = win_rate_vs_anchor(result, anchor, ci_level=settings.ci_level)
    questions = _questions_per_model(battles)
    battle_counts = _battle_counts(battles)
    return [
        {
            "model": name,
            "rating": _r(result.ratings[i]),
            "ci_low": _r(result.ci_low[i]),
            "ci_high": _r(result.ci_high[i]),
            "winrate": _r(wr.score[i]),
            "winrate_ci_low": _r(wr.ci_low[i]),
            "winrate_ci_high": _r(wr.ci_high[i]),
            "n": questions.get(name, 0),
            "n_battles": battle_counts.get(name, 0),
            **({"baseline": True} if name in baselines else {}),
        }
        for i, name in enumerate(names)
    ]


def _battle_counts(battles: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for battle in battles:
        counts[battle["model_a"]] += 1
        counts[battle["model_b"]] += 1
    return dict(counts)


def _r(value: float) -> float:
    return round(float(value), 4)


class _StyleCache:
    """Style vectors per (model, uid) from answers/<model>.jsonl, computed where an answer has none."""

    def __init__(self, run: RunDir, notes: list[str]) -> None:
        self.run = run
        self.notes = notes
        self._models: dict[str, dict[str, tuple[int, int, int, int]]] = {}

    def model(self, name: str) -> dict[str, tuple[int, int, int, int]]:
        if name not in self._models:
            self._models[name] = self._load(name)
        return self._models[name]

    def _load(self, name: str) -> dict[str, tuple[int, int, int, int]]:
        from jurist.store.jsonl import iter_numbered_jsonl
        from jurist.store.run_dir import answer_text
        from jurist.style import answer_style_metadata, style_vector

        vectors: dict[str, tuple[int, int, int, int]] = {}
        computed = 0
        path = self.run.answers(name)
        for _, record in iter_numbered_jsonl(path, repair=False):
            uid = record.get("uid", record.get("question_id"))
            metadata = record.get("metadata") or record.get("conv_metadata")
            if metadata is None:
                text = answer_text(record)
                if text is None:
                    continue
                metadata = answer_style_metadata(text)
                computed += 1
            vectors[str(uid)] = style_vector(metadata)
        if computed:
            self.notes.append(f"style metadata computed for {computed} answers of {name} (none stored)")
        return vectors


def _style_rows(
    battles: list[dict[str, Any]],
    baselines: list[str],
    styles: _StyleCache,
    opts: ShowOptions,
    settings: _Settings,
    notes: list[str],
) -> list[dict[str, Any]]:
    """Arena-Hard v2 style-controlled win rates (bootstrap median and quantiles) against the baseline."""
    import numpy as np

    from jurist.ratings.style_control import style_controlled_win_rates

    oriented = _Oriented(battles, set(baselines))
    keep, model_style, base_style = [], [], []
    for k in range(len(oriented)):
        uid = oriented.uid[k]
        ms, bs = styles.model(oriented.model[k]).get(uid), styles.model(oriented.baseline[k]).get(uid)
        if ms is not None and bs is not None:
            keep.append(k)
            model_style.append(ms)
            base_style.append(bs)
    if len(keep) < len(oriented):
        notes.append(f"{len(oriented) - len(keep)} battles left out of style control: an answer is missing")
    if not keep:
        raise JuristError("style control: no battle has both answers' style metadata")
    names = sorted({oriented.model[k] for k in keep} | {oriented.baseline[k] for k in keep})
    index = {name: i for i, name in enumerate(names)}
    m_idx = np.array([index[oriented.model[k]] for k in keep])
    b_idx = np.array([index[oriented.baseline[k]] for k in keep])
    y = np.array([oriented.p[k] for k in keep])
    w = np.array([oriented.weight[k] for k in keep])
    ms_arr, bs_arr = np.array(model_style, dtype=float), np.array(base_style, dtype=float)
    clusters: Any = np.array([oriented.uid[k] for k in keep])
    weights: Any = w
    if opts.resample == "entries":
        rows = _explode(w)
        clusters = None
        if rows is not None:
            m_idx, b_idx, y, ms_arr, bs_arr, weights = (
                m_idx[rows],
                b_idx[rows],
                y[rows],
                ms_arr[rows],
                bs_arr[rows],
                None,
            )
    try:
        result = style_controlled_win_rates(
            m_idx,
            b_idx,
            y,
            ms_arr,
            bs_arr,
            features=opts.style_control,
            weights=weights,
            n_models=len(names),
            reference=_anchor(names, baselines),
            n_bootstrap=settings.n_bootstrap,
            ci_level=settings.ci_level,
            seed=settings.seed,
            clusters=clusters,
        )
    except ValueError as exc:
        raise JuristError(f"style control: {exc}") from None
    coefs = ", ".join(
        f"{n}={c:+.4f}" for n, c in zip(result.feature_names, result.feature_coefs_median, strict=True)
    )
    notes.append(f"style coefficients (bootstrap median, z-scored features): {coefs}")
    questions, counts = oriented.counts(keep)
    return [
        {
            "model": name,
            "score": _r(result.median[i]),
            "ci_low": _r(result.ci_low[i]),
            "ci_high": _r(result.ci_high[i]),
            "n": questions.get(name, 0),
            "n_battles": counts.get(name, 0),
            **({"baseline": True} if name in baselines else {}),
        }
        for i, name in enumerate(names)
    ]


def _answer_lengths(run: RunDir, model: str) -> dict[str, int]:
    """uid -> answer length in characters, in file order (the order AlpacaEval's GLM folds depend on)."""
    from jurist.store.jsonl import iter_numbered_jsonl
    from jurist.store.run_dir import answer_text

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

    from jurist.store.peer_formats import alpaca_uid

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


def _lc_rows(
    battles: list[dict[str, Any]],
    baselines: list[str],
    run: RunDir,
    notes: list[str],
    difficulty: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """AlpacaEval 2's length-controlled win rate per model, from per-question preferences and lengths."""
    import numpy as np

    from jurist.ratings.lc_winrate import length_controlled_win_rates

    oriented = _Oriented(battles, set(baselines))
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


def _lc_table(models: list[str], results: list[Any], baseline: str) -> list[dict[str, Any]]:
    rows = [
        {
            "model": model,
            "score": _r(res.length_controlled_win_rate),
            "ci_low": None,
            "ci_high": None,
            "lc_standard_error": _r(res.lc_standard_error),
            "win_rate": _r(res.win_rate),
            "win_rate_standard_error": _r(res.standard_error),
            "difficulty_source": res.difficulty_source,
            "n": res.n,
        }
        for model, res in zip(models, results, strict=True)
    ]
    rows.append({"model": baseline, "score": 50.0, "ci_low": 50.0, "ci_high": 50.0, "n": 0, "baseline": True})
    return rows


def _lc_intervals(rows: list[dict[str, Any]], ci_level: float) -> None:
    """Normal intervals from the LC standard error (AlpacaEval reports the standard error only)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + ci_level / 2.0)
    for row in rows:
        se = row.get("lc_standard_error")
        if se is not None and row["score"] is not None and not math.isnan(se):
            row["ci_low"], row["ci_high"] = _r(row["score"] - z * se), _r(row["score"] + z * se)


# ---------------------------------------------------------------------------------------------------------
# Output.


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    present = {key for row in rows for key in row}
    return [c for c in _CSV_COLUMNS if c in present]


def render_csv(rows: list[dict[str, Any]]) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(rows), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def render_markdown(rows: list[dict[str, Any]]) -> str:
    columns = _columns(rows)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _interval(row: dict[str, Any], value: str, low: str, high: str) -> str:
    v, lo, hi = row.get(value), row.get(low), row.get(high)
    if v is None or lo is None or hi is None:
        return "-"
    return f"(-{v - lo:.1f} / +{hi - v:.1f})"


def _table_columns(rows: list[dict[str, Any]], ci_level: float) -> list[tuple[str, Any]]:
    """(header, row -> cell text) for the columns these rows need."""
    ci = f"{ci_level:.0%} CI"
    columns: list[tuple[str, Any]] = []
    if any("category" in row for row in rows):
        columns.append(("category", lambda r: str(r.get("category", ""))))
    if len({row.get("judge") for row in rows}) > 1:
        columns.append(("judge", lambda r: str(r.get("judge", ""))))
    columns.append(("model", lambda r: str(r["model"]) + (" (baseline)" if r.get("baseline") else "")))
    if any("rating" in row for row in rows):
        columns += [
            ("rating", lambda r: _cell(r.get("rating"))),
            (ci, lambda r: _interval(r, "rating", "ci_low", "ci_high")),
            ("win rate", lambda r: _cell(r.get("winrate"))),
            (ci + " ", lambda r: _interval(r, "winrate", "winrate_ci_low", "winrate_ci_high")),
        ]
    else:
        columns += [
            ("score", lambda r: _cell(r.get("score"))),
            (ci, lambda r: _interval(r, "score", "ci_low", "ci_high")),
        ]
    if any("win_rate" in row for row in rows):
        columns.append(("win rate", lambda r: _cell(r.get("win_rate"))))
    columns += [("n", lambda r: str(r.get("n", ""))), ("invalid", lambda r: _cell(r.get("invalid", 0)))]
    return columns


def render_table(rows: list[dict[str, Any]], *, title: str, ci_level: float) -> Any:
    """A rich table: rank, model and the numbers of the chosen method, CIs as (-low / +high)."""
    from rich.table import Table

    table = Table(title=title)
    columns = _table_columns(rows, ci_level)
    table.add_column("#", justify="right")
    for header, _ in columns:
        table.add_column(header, justify="left" if header in ("model", "judge", "category") else "right")
    for rank, row in enumerate(rows, start=1):
        table.add_row(str(rank), *(cell(row) for _, cell in columns))
    return table


def write_outputs(root: Path, scored: Scored) -> None:
    """ratings.json (settings + per-model numbers) and leaderboard.json (the rows), as ``jurist run`` does."""
    from jurist.scoring import ratings_document
    from jurist.store.jsonl import write_json_atomic
    from jurist.store.run_dir import RunDir

    run = RunDir(root)
    settings = scored.settings
    document = ratings_document(
        scored.rows,
        method=settings["method"],
        seed=settings["seed"],
        n_bootstrap=settings["bootstrap_rounds"],
        ci_level=settings["ci_level"],
        battles=scored.battles,
        extra={
            k: v for k, v in settings.items() if k not in ("method", "seed", "bootstrap_rounds", "ci_level")
        },
    )
    for entry, row in zip(document["models"], scored.rows, strict=True):
        for key, value in row.items():
            entry.setdefault(key, value)
    write_json_atomic(run.root / "ratings.json", document)
    write_json_atomic(run.leaderboard, scored.rows)


# ---------------------------------------------------------------------------------------------------------
# Command line.


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(part.strip() for value in values or [] for part in value.split(",") if part.strip())


def _is_feature_list(token: str) -> bool:
    parts = [p.strip() for p in token.split(",")]
    return bool(parts) and all(p in STYLE_FEATURES + ("all",) for p in parts)


class _ShowCommand(typer.core.TyperCommand):
    """Lets ``--style-control`` stand alone (meaning length and markdown) or take a feature list."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        fixed: list[str] = []
        for k, token in enumerate(args):
            fixed.append(token)
            if token == "--style-control" and (k + 1 == len(args) or not _is_feature_list(args[k + 1])):
                fixed.append(",".join(STYLE_FEATURES))
        return super().parse_args(ctx, fixed)


def show(
    run_dir: Annotated[Path, typer.Argument(help="run directory (jurist run or jurist import)")],
    method: Annotated[str, typer.Option(help="winrate | bt (Bradley-Terry, Elo scale)")] = "winrate",
    style_control: Annotated[
        str | None,
        typer.Option("--style-control", help="control for style: length,markdown (alone: both)"),
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option("--category", help="score this category alone (repeatable)")
    ] = None,
    baseline: Annotated[
        list[str] | None, typer.Option("--baseline", help="baseline model (repeatable)")
    ] = None,
    bootstrap: Annotated[
        int | None, typer.Option(min=0, help="bootstrap rounds (default: the run's)")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="bootstrap seed (default: the run's)")] = None,
    ci: Annotated[float | None, typer.Option(help="CI level, e.g. 0.90 or 0.95 (default: the run's)")] = None,
    resample: Annotated[
        str, typer.Option(help="bootstrap unit: questions | entries (Arena-Hard's exploded rows)")
    ] = "questions",
    length_controlled: Annotated[
        bool, typer.Option("--length-controlled", help="AlpacaEval's length-controlled win rate")
    ] = False,
    instruction_difficulty: Annotated[
        Path | None,
        typer.Option(help="AlpacaEval's instruction difficulty CSV for --length-controlled (else estimated)"),
    ] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="only this judge (repeatable)")] = None,
    ensemble: Annotated[
        bool, typer.Option("--ensemble", help="pool the judges' battles into one score")
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv | markdown")] = "table",
    write: Annotated[
        bool, typer.Option("--write", help="also write ratings.json and leaderboard.json")
    ] = False,
) -> None:
    """Score a run again from its battles: win rate, Bradley-Terry, style control or LC win rate."""
    from rich.console import Console

    opts = _options(
        method,
        style_control,
        category,
        baseline,
        bootstrap,
        seed,
        ci,
        resample,
        length_controlled,
        judge,
        ensemble,
    )
    opts = replace(opts, instruction_difficulty=instruction_difficulty)
    if fmt not in ("table", "json", "csv", "markdown"):
        raise JuristError(f"--format: {fmt!r} is not table, json, csv or markdown")
    scored = score_run(run_dir, opts)
    _print(scored, fmt, run_dir)
    for note in scored.notes:
        Console(stderr=True).print(f"[dim]note: {note}[/dim]", highlight=False, soft_wrap=True)
    if write:
        write_outputs(run_dir, scored)


def _options(
    method: str,
    style_control: str | None,
    category: list[str] | None,
    baseline: list[str] | None,
    bootstrap: int | None,
    seed: int | None,
    ci: float | None,
    resample: str,
    length_controlled: bool,
    judge: list[str] | None,
    ensemble: bool,
) -> ShowOptions:
    if method not in ("winrate", "bt"):
        raise JuristError(f"--method: {method!r} is not winrate or bt")
    if resample not in ("questions", "entries"):
        raise JuristError(f"--resample: {resample!r} is not questions or entries")
    features = _split([style_control]) if style_control else ()
    if "all" in features:
        features = STYLE_FEATURES
    opts = ShowOptions(
        style_control=tuple(f for f in STYLE_FEATURES if f in features)
        + tuple(set(features) - set(STYLE_FEATURES)),
        categories=_split(category),
        baselines=_split(baseline),
        judges=_split(judge),
        ensemble=ensemble,
        length_controlled=length_controlled,
        n_bootstrap=bootstrap,
        seed=seed,
        ci_level=ci,
    )
    return replace(opts, method=method, resample=resample)  # type: ignore[arg-type]


def _print(scored: Scored, fmt: str, run_dir: Path) -> None:
    from rich.console import Console

    if fmt == "json":
        print(json.dumps(scored.rows, indent=2, ensure_ascii=False))
    elif fmt == "csv":
        print(render_csv(scored.rows), end="")
    elif fmt == "markdown":
        print(render_markdown(scored.rows), end="")
    else:
        title = f"jurist show: {run_dir.name} ({scored.settings['method']})"
        Console().print(render_table(scored.rows, title=title, ci_level=scored.settings["ci_level"]))


def register(app: typer.Typer) -> None:
    """Add ``jurist show`` to the CLI."""
    app.command("show", cls=_ShowCommand)(show)
