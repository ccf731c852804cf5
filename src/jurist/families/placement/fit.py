"""From an arena run's judgments to its placement: battles.jsonl (judged + human) and elo_ratings.json.

The judged battles are written with the real arena opponent of each question (the run's judgments name
only the alias ``arena-opponent``) and the human anchor battles after them, in JudgeArena's schema, so
the battles file alone is the whole input of the fit: ``jurist show`` on it gives the same
elo_ratings.json. One fit per (judge, evaluated model): the model's judged battles against anchor models
plus every human anchor battle, Bradley-Terry on the Elo scale with a bootstrap over all battles
(:func:`jurist.ratings.placement.place_models`).

Settings not in the battles (bootstrap rounds, seed, CI level, anchor) come from the run: a jurist run's
run.json, a peer tool's elo_ratings.json, else JudgeArena's conventions (95% percentile interval, seed 0,
100 rounds). The family around the fit (outcomes, calibration, documents) is
:mod:`jurist.families.placement.family`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from jurist.errors import JuristError
from jurist.families.placement.arena_battles import HARD_PREF
from jurist.families.runaway import RUNAWAY_FIELDS, mark_runaways
from jurist.ratings import place_models, r, rank_by_ci, rank_by_rating

Battle = dict[str, Any]

ELO_FILE = "elo_ratings.json"
CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class PlacementSettings:
    """How the fit is run; everything else comes from the battles."""

    n_bootstrap: int = 100
    seed: int = 0
    ci_level: float = 0.95
    anchor: str | None = None
    anchor_rating: float = 1000.0
    arena: str | None = None


# ----------------------------------------------------------------------------------------------------
# Battles -> reports


def outcome_of(battle: Mapping[str, Any]) -> float:
    """P(model_a wins) the fit uses: 1 - ``pref`` when the battle has one, else from its winner."""
    pref = battle.get("pref")
    return 1.0 - float(pref) if pref is not None else 1.0 - HARD_PREF[str(battle["winner"])]


def evaluated_models(judged: Sequence[Battle], human_models: set[str]) -> list[tuple[str, str]]:
    """(judge, evaluated model) pairs: a judged battle's side the humans never voted on; with no human
    battles at all, the model in every battle of that judge (the star's centre)."""
    pairs: dict[tuple[str, str], None] = {}
    by_judge: dict[str, list[Battle]] = defaultdict(list)
    for battle in judged:
        by_judge[str(battle["judge_model"])].append(battle)
    for judge, battles in by_judge.items():
        if human_models:
            for battle in battles:
                for side in (battle["model_a"], battle["model_b"]):
                    if side not in human_models:
                        pairs[(judge, side)] = None
            continue
        common = set.intersection(*({b["model_a"], b["model_b"]} for b in battles))
        for name in sorted(common):
            pairs[(judge, name)] = None
    return list(pairs)


def fit_reports(
    battles: Sequence[Battle], settings: PlacementSettings
) -> tuple[list[dict[str, Any]], list[str]]:
    """One EloReport per (judge, evaluated model) and notes (battles left out, and why)."""
    human = [b for b in battles if b["source"] == "human"]
    judged = [b for b in battles if b["source"] == "llm-judge"]
    models = sorted({b["model_a"] for b in human} | {b["model_b"] for b in human})
    if len(models) < 2:
        raise JuristError(
            "no human anchor battles: an arena placement needs the human votes beside the judge's"
        )
    if settings.anchor is not None and settings.anchor not in models:
        raise JuristError(f"anchor {settings.anchor!r} has no human battles in this file")
    arena = settings.arena or next((str(b["benchmark"]) for b in judged if b.get("benchmark")), "")
    index = {name: k for k, name in enumerate(models)}
    ha = np.fromiter((index[b["model_a"]] for b in human), dtype=np.int64, count=len(human))
    hb = np.fromiter((index[b["model_b"]] for b in human), dtype=np.int64, count=len(human))
    hy = np.fromiter((outcome_of(b) for b in human), dtype=np.float64, count=len(human))
    reports, notes = [], []
    for judge, model in evaluated_models(judged, set(models)):
        own = [b for b in judged if b["judge_model"] == judge and model in (b["model_a"], b["model_b"])]
        usable = [b for b in own if (b["model_b"] if b["model_a"] == model else b["model_a"]) in index]
        if len(usable) < len(own):
            notes.append(
                f"{judge} on {model}: {len(own) - len(usable)} judged battle(s) against models without human "
                "anchor battles left out (they cannot place anything on the human scale)"
            )
        if not usable:
            notes.append(f"{judge} on {model}: no judged battle against an anchor model; nothing to place")
            continue
        reports.append(_report(judge, model, usable, models, (ha, hb, hy), settings, arena))
    return reports, notes


def _report(
    judge: str,
    model: str,
    judged: list[Battle],
    models: list[str],
    human: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]],
    settings: PlacementSettings,
    arena: str,
) -> dict[str, Any]:
    names = [*models, model]
    index = {name: k for k, name in enumerate(names)}
    placed = place_models(
        human[0],
        human[1],
        human[2],
        [index[b["model_a"]] for b in judged],
        [index[b["model_b"]] for b in judged],
        [outcome_of(b) for b in judged],
        n_models=len(names),
        min_human_battles=1,
        anchor=None if settings.anchor is None else index[settings.anchor],
        anchor_rating=settings.anchor_rating,
        n_bootstrap=settings.n_bootstrap,
        ci_level=settings.ci_level,
        seed=settings.seed,
    )
    rating = placed.bootstrap_mean if settings.n_bootstrap > 0 else placed.ratings
    ranks, ci_ranks = rank_by_rating(rating), rank_by_ci(placed.ci_low, placed.ci_high)
    battles = placed.n_human_battles + placed.n_judged_battles
    entries: list[dict[str, Any]] = [
        {
            "model": name,
            "rating": r(rating[k]),
            "ci_low": r(placed.ci_low[k]),
            "ci_high": r(placed.ci_high[k]),
            "n_battles": int(battles[k]),
            "source": "evaluated" if name == model else "human",
        }
        for k, name in enumerate(names)
    ]
    extras = {
        name: {
            "mle": r(placed.ratings[k]),
            "human_rating": None if np.isnan(placed.human_ratings[k]) else r(placed.human_ratings[k]),
            "rank": int(ranks[k]),
            "rank_ci": int(ci_ranks[k]),
        }
        for k, name in enumerate(names)
    }
    flags: dict[str, Any] = {"model": model}
    warnings: list[str] = []
    mark_runaways([flags], names, placed.separation, settings.ci_level, f"placement ({judge})", warnings)
    extras[model].update({key: value for key, value in flags.items() if key != "model"})
    order = sorted(range(len(entries)), key=lambda k: (-entries[k]["rating"], entries[k]["model"]))
    return {
        "arena": arena,
        "model": model,
        "judge_model": judge,
        "n_bootstraps": settings.n_bootstrap,
        "seed": settings.seed,
        "ratings": [entries[k] for k in order],
        "jurist": {
            "ci_level": settings.ci_level,
            "anchor": settings.anchor,
            "anchor_rating": settings.anchor_rating,
            "rank": extras[model]["rank"],
            "rank_ci": extras[model]["rank_ci"],
            "arena_models": len(models),
            "mae_vs_human": r(placed.mae_vs_human),
            "llm_judge_battles": len(judged),
            "human_anchor_battles": int(human[0].size),
            "models": {entries[k]["model"]: extras[entries[k]["model"]] for k in order},
            **({"warnings": warnings} if warnings else {}),
        },
    }


# ----------------------------------------------------------------------------------------------------
# Files


def summary_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One leaderboard row per evaluated model: its rating, CI, rank among the arena's models, drift."""
    rows = []
    for report in reports:
        entry = next(e for e in report["ratings"] if e["source"] == "evaluated")
        extra = report["jurist"]
        rows.append(
            {
                "model": report["model"],
                "judge": report["judge_model"],
                "rating": entry["rating"],
                "ci_low": entry["ci_low"],
                "ci_high": entry["ci_high"],
                "n": extra["llm_judge_battles"],
                "rank": extra["rank"],
                "rank_ci": extra["rank_ci"],
                "of": extra["arena_models"] + 1,
                "mae_vs_human": extra["mae_vs_human"],
                "arena": report["arena"],
                "method": "arena-placement",
                **{
                    key: value
                    for key, value in (extra["models"].get(report["model"]) or {}).items()
                    if key in RUNAWAY_FIELDS
                },
            }
        )
    return rows


def settings_for(
    folder: Path, run_json: Mapping[str, Any] | None = None, **overrides: Any
) -> PlacementSettings:
    """The fit settings of a run folder, then ``overrides`` that are not None (``jurist show --bootstrap/
    --seed/--ci``): a jurist run's from its run.json (``run_json``, else read), a peer tool's from its
    elo_ratings.json, else JudgeArena's conventions."""
    from jurist.families.pairwise.battles import read_json
    from jurist.families.placement.arena_battles import read_elo_report

    settings = PlacementSettings()
    if run_json is None:
        run_json = read_json(folder / "run.json") or {}
    elo = folder / ELO_FILE
    if "bench_info" in run_json:  # written by jurist run
        scoring = run_json.get("scoring") or {}
        info = run_json.get("bench_info") or {}
        placement = info.get("placement") or {}
        settings = replace(
            settings,
            n_bootstrap=int(scoring.get("bootstrap", settings.n_bootstrap)),
            seed=int(scoring.get("seed", settings.seed)),
            anchor=placement.get("anchor"),
            anchor_rating=float(placement.get("anchor_rating", settings.anchor_rating)),
            arena=info.get("arena"),
        )
    elif elo.is_file():
        report = read_elo_report(elo)
        extra = report.get("jurist") or {}
        settings = replace(
            settings,
            n_bootstrap=int(report["n_bootstraps"]),
            seed=int(report["seed"]),
            ci_level=float(extra.get("ci_level", settings.ci_level)),
            anchor=extra.get("anchor"),
            anchor_rating=float(extra.get("anchor_rating", settings.anchor_rating)),
            arena=str(report["arena"]) or None,
        )
    elif run_json:
        scoring = run_json.get("scoring") or {}
        settings = replace(
            settings,
            n_bootstrap=int(scoring.get("bootstrap", settings.n_bootstrap)),
            seed=int(scoring.get("seed", settings.seed)),
        )
    given = {key: value for key, value in overrides.items() if value is not None}
    return replace(settings, **given)


def is_arena_run(path: Path) -> bool:
    """Whether PATH holds an arena placement that names no family: a battles file in JudgeArena's schema,
    or a folder holding one (or an elo_ratings.json, a calibration.json); :func:`jurist.families.registry.
    family_of_run` asks, for a peer tool's output without run.json."""
    from jurist.families.placement.arena_battles import find_battles, is_arena_battles_file

    if path.is_file():
        return is_arena_battles_file(path)
    if not path.is_dir():
        return False
    if (path / ELO_FILE).is_file() or (path / CALIBRATION_FILE).is_file():
        return True
    found = find_battles(path)
    return found is not None and is_arena_battles_file(found)
