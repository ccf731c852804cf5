"""A replacement study's figures, thresholds and verdict: replacement.json (``jurist.judge_replacement/1``).

The thresholds (docs/judge-replacement.md says why each): a candidate is ``qualified`` when

* item level (where the retired judge's verdicts are stored): the 95% interval of its agreement with them
  starts at :data:`AGREEMENT_MIN` or above and that of Cohen's kappa at :data:`KAPPA_MIN` or above;
* length: its agreement where the retired judge chose the *shorter* output is at most
  :data:`LENGTH_GAP_MAX` below its agreement where that judge chose the longer one (a judge that follows
  length agrees only where the old judge happened to prefer the longer output), and it agrees at least
  :data:`BIN_AGREEMENT_MIN` in every length-gap bin with :data:`BIN_MIN_ITEMS` items or more (a judge that
  agrees overall but flips on long answers is another judge);
* leaderboard level: Spearman rho at least :data:`SPEARMAN_MIN` and Kendall tau at least
  :data:`KENDALL_MIN` with the retired judge's scores of the panel;
* the map: carried to a model it was fitted without (leave-one-out), it misses by at most
  :data:`LOO_ERROR_MAX` points on average.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jurist.benchmarks import Benchmark
from jurist.families import REPLACEMENT_SCHEMA
from jurist.ratings import (
    Interval,
    LeaderboardFit,
    PanelScores,
    agreement_kappa,
    chose_longer,
    decisions,
    fit_leaderboard,
)
from jurist.replace.panel import Panel

AGREEMENT_MIN = 0.70
KAPPA_MIN = 0.40
LENGTH_GAP_MAX = 0.15
BIN_AGREEMENT_MIN = 0.60
BIN_MIN_ITEMS = 30
SPEARMAN_MIN = 0.90
KENDALL_MIN = 0.75
LOO_ERROR_MAX = 5.0
MAP_REPLICATES = 200
"""Bootstrap maps kept in the file (each a handful of knots) for anchoring later runs."""
LENGTH_BINS = ((0.0, 0.5, "model <0.5x"), (0.5, 0.8, "0.5-0.8x"), (0.8, 1.25, "0.8-1.25x"),
               (1.25, 2.0, "1.25-2x"), (2.0, math.inf, "model >2x"))  # fmt: skip
"""Bins of the model's output length over the baseline's (characters)."""


def _interval(found: Interval, digits: int = 4) -> dict[str, Any]:
    def num(value: float) -> float | None:
        return None if math.isnan(value) else round(value, digits)

    return {"estimate": num(found.estimate), "ci": [num(found.low), num(found.high)]}


def _length_bin(model: str, baseline: str) -> str:
    ratio = len(model) / max(len(baseline), 1)
    return next(name for low, high, name in LENGTH_BINS if low <= ratio < high)


class Items:
    """The judged decisions as parallel lists: one entry per (model, question) both judges decided."""

    def __init__(
        self, panel: Panel, bench: Benchmark, models: Sequence[str], scores: Mapping[str, Mapping[str, float]]
    ) -> None:
        baseline = {
            q.uid: bench.shipped_answers.get(bench.baseline_for(q) or "", {}) for q in bench.questions
        }
        self.model: list[str] = []
        self.uid: list[str] = []
        self.category: list[str] = []
        self.length: list[str] = []
        self.candidate: list[float] = []
        self.retired: list[float] = []
        self.longer: list[float] = []
        for question in bench.questions:
            base = baseline[question.uid].get(question.uid)
            for model in models:
                text = panel.answers[model].get(question.uid)
                if text is None or question.uid not in scores.get(model, {}):
                    continue
                self.model.append(model)
                self.uid.append(question.uid)
                self.category.append(question.category)
                self.length.append(_length_bin(text, base or ""))
                self.candidate.append(scores[model][question.uid])
                self.retired.append(panel.retired.get(model, {}).get(question.uid, math.nan))
                self.longer.append(0.0 if base is None else float(np.sign(len(text) - len(base))))


def item_figures(items: Items, n_bootstrap: int, seed: int) -> dict[str, Any]:
    """Agreement and kappa overall (question-clustered intervals), by category and by length gap."""
    old, new = decisions(items.retired), decisions(items.candidate)
    if np.isnan(old).all():
        return {"n": 0, "agreement": None, "kappa": None, "note": "no stored per-item verdicts"}
    agreement, kappa, n = agreement_kappa(old, new, items.uid, n_bootstrap=n_bootstrap, seed=seed)
    groups: dict[str, list[dict[str, Any]]] = {}
    for key, labels in (("by_category", items.category), ("by_length", items.length)):
        order = [name for *_, name in LENGTH_BINS] if key == "by_length" else sorted(set(labels))
        groups[key] = []
        for name in order:
            mask = np.array([label == name for label in labels], dtype=bool)
            if not mask.any():
                continue
            uids = [u for u, m in zip(items.uid, mask, strict=True) if m]
            found, _, count = agreement_kappa(old[mask], new[mask], uids, n_bootstrap=n_bootstrap, seed=seed)
            groups[key].append({"group": name, "n": count, "agreement": _interval(found)})
    longer_new = chose_longer(items.candidate, items.longer)
    longer_old = chose_longer(items.retired, items.longer)
    retired_choice = old * np.array(items.longer)  # 1: the retired judge chose the longer output, -1: shorter
    by_choice = {}
    for name, value in (("longer", 1.0), ("shorter", -1.0)):
        mask = retired_choice == value
        uids = [u for u, m in zip(items.uid, mask, strict=True) if m]
        found, _, count = agreement_kappa(old[mask], new[mask], uids, n_bootstrap=n_bootstrap, seed=seed)
        by_choice[name] = {"n": count, "agreement": _interval(found)}
    groups["by_retired_choice"] = [{"group": f"retired chose the {k}", **v} for k, v in by_choice.items()]
    return {
        "n": n,
        "questions": len(set(items.uid)),
        "agreement": _interval(agreement),
        "kappa": _interval(kappa),
        **groups,
        "chose_longer": {
            "candidate": round(longer_new, 4),
            "retired": round(longer_old, 4),
            "excess": round(longer_new - longer_old, 4),
        },
    }


def panel_scores(panel: Panel, models: Sequence[str], items: Items) -> PanelScores:
    uids = sorted(set(items.uid))
    column = {uid: j for j, uid in enumerate(uids)}
    row = {model: i for i, model in enumerate(models)}
    candidate = np.full((len(models), len(uids)), np.nan)
    retired = np.full_like(candidate, np.nan)
    for model, uid, new, old in zip(items.model, items.uid, items.candidate, items.retired, strict=True):
        candidate[row[model], column[uid]] = new
        retired[row[model], column[uid]] = old
    published = np.array([panel.published[m] for m in models], dtype=np.float64)
    return PanelScores(candidate, retired, published)


def leaderboard_figures(panel: Panel, models: Sequence[str], fit: LeaderboardFit) -> dict[str, Any]:
    rows = [
        {
            "model": model,
            "published": round(panel.published[model], 4),
            "retired": round(float(fit.retired[i]), 4),
            "candidate": round(float(fit.candidate[i]), 4),
            "mapped": round(float(fit.map(fit.candidate[i])), 4),
            "loo_error": round(float(fit.loo_abs_error[i]), 4),
            "rank_displacement": int(fit.rank_displacement[i]),
        }
        for i, model in enumerate(models)
    ]
    worst = int(np.argmax(np.abs(fit.rank_displacement)))
    return {
        "models": sorted(rows, key=lambda r: -r["retired"]),
        "retired_on": "the sampled items" if panel.item_level else "the published leaderboard",
        "spearman": _interval(fit.spearman),
        "kendall": _interval(fit.kendall),
        "mean_abs_difference": round(fit.mean_abs_difference, 4),
        "largest_rank_displacement": {
            "model": models[worst],
            "by": int(fit.rank_displacement[worst]),
        },
    }


def map_document(panel: Panel, fit: LeaderboardFit) -> dict[str, Any]:
    def knots(found: Any) -> dict[str, list[float]]:
        return {"x": [round(v, 4) for v in found.x], "y": [round(v, 4) for v in found.y]}

    return {
        "method": "isotonic (pool-adjacent-violators), linear between knots, flat beyond",
        "score_field": panel.published_field,
        **knots(fit.map),
        "range": [round(float(np.nanmin(fit.candidate)), 4), round(float(np.nanmax(fit.candidate)), 4)],
        "replicates": [knots(m) for m in fit.replicates[:MAP_REPLICATES]],
        "resampled": "models and questions",
        "loo_mean_abs_error": round(float(np.mean(fit.loo_abs_error)), 4),
    }


def verdict(items: Mapping[str, Any], board: Mapping[str, Any], mapping: Mapping[str, Any]) -> list[str]:
    """The reasons a candidate is not qualified (empty: qualified)."""
    reasons: list[str] = []
    if items.get("agreement"):
        low = items["agreement"]["ci"][0]
        if low is None or low < AGREEMENT_MIN:
            reasons.append(f"item agreement's 95% interval starts at {low}, below {AGREEMENT_MIN}")
        k_low = items["kappa"]["ci"][0]
        if k_low is None or k_low < KAPPA_MIN:
            reasons.append(f"Cohen's kappa's 95% interval starts at {k_low}, below {KAPPA_MIN}")
        longer, shorter = (g["agreement"]["estimate"] for g in items["by_retired_choice"])
        if longer is not None and shorter is not None and longer - shorter > LENGTH_GAP_MAX:
            chose = items["chose_longer"]
            reasons.append(
                f"length bias: it agrees {longer:.2f} where the retired judge chose the longer output but "
                f"{shorter:.2f} where it chose the shorter (more than {LENGTH_GAP_MAX} apart); it chose "
                f"the longer output {chose['candidate']:.0%} of the time, the retired judge "
                f"{chose['retired']:.0%}"
            )
        for group in items["by_length"]:
            rate = group["agreement"]["estimate"]
            if group["n"] >= BIN_MIN_ITEMS and rate is not None and rate < BIN_AGREEMENT_MIN:
                reasons.append(
                    f"length: agreement {rate:.2f} where the model's output is {group['group']} the "
                    f"baseline's length (below {BIN_AGREEMENT_MIN})"
                )
    for name, floor in (("spearman", SPEARMAN_MIN), ("kendall", KENDALL_MIN)):
        value = board[name]["estimate"]
        if value is None or value < floor:
            reasons.append(f"leaderboard {name} {value} below {floor}: it orders the models otherwise")
    if mapping["loo_mean_abs_error"] > LOO_ERROR_MAX:
        reasons.append(
            f"the map misses a held-out panel model by {mapping['loo_mean_abs_error']:.1f} points on "
            f"average (more than {LOO_ERROR_MAX}): it cannot re-anchor"
        )
    return reasons


def thresholds() -> dict[str, float]:
    return {
        "agreement_ci_low_min": AGREEMENT_MIN,
        "kappa_ci_low_min": KAPPA_MIN,
        "length_agreement_gap_max": LENGTH_GAP_MAX,
        "length_bin_agreement_min": BIN_AGREEMENT_MIN,
        "length_bin_min_items": BIN_MIN_ITEMS,
        "spearman_min": SPEARMAN_MIN,
        "kendall_min": KENDALL_MIN,
        "map_loo_mean_abs_error_max": LOO_ERROR_MAX,
    }


def replacement_document(
    panel: Panel,
    bench: Benchmark,
    models: Sequence[str],
    scores: Mapping[str, Mapping[str, float]],
    *,
    judge: str,
    judge_model: str,
    seed: int,
    n_bootstrap: int,
) -> dict[str, Any]:
    """replacement.json's document from the candidate's per-item ``scores``."""
    items = Items(panel, bench, models, scores)
    judged = [m for m in models if any(m == x for x in items.model)]
    if len(judged) < 3:
        raise ValueError("fewer than 3 panel models were judged: nothing to correlate or map")
    figures = item_figures(items, n_bootstrap, seed)
    fit = fit_leaderboard(panel_scores(panel, judged, items), n_bootstrap=n_bootstrap, seed=seed)
    board = leaderboard_figures(panel, judged, fit)
    mapping = map_document(panel, fit)
    reasons = verdict(figures, board, mapping)
    if not figures.get("agreement"):
        reasons_note = ["no per-item verdicts of the retired judge: judged on the leaderboard level only"]
    else:
        reasons_note = []
    return {
        "schema": REPLACEMENT_SCHEMA,
        "bench": panel.bench,
        "retired_judge": panel.retired_judge,
        "candidate": {"judge": judge, "model": judge_model},
        "panel": {
            "source": panel.source,
            "models": list(judged),
            "questions": len(set(items.uid)),
            "decisions": len(items.uid),
            "seed": seed,
            "item_level": panel.item_level,
            "selection": bench.info.get("selection"),
        },
        "run_dir": "run",
        "items": figures,
        "leaderboard": board,
        "map": mapping,
        "published_leaderboard": {m: round(s, 4) for m, s in panel.board.items() if not math.isnan(s)},
        "thresholds": thresholds(),
        "verdict": "not qualified" if reasons else "qualified",
        "reasons": reasons or ["every threshold met"],
        "notes": [*reasons_note, *panel.notes],
    }
