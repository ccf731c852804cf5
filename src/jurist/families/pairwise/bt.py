"""Bradley-Terry on the Elo scale (Arena-Hard v0.1) and style control (BT with style features, v2's ``-f``).

Both anchor at the baseline and report, besides ratings, the win rate against it that they imply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError
from jurist.families.pairwise.common import Oriented, anchor, bootstrap_design, model_counts, model_rows
from jurist.families.runaway import mark_runaways
from jurist.ratings import OUTCOME, Battle, Row

if TYPE_CHECKING:
    from jurist.families.pairwise.options import ScoreOptions, Settings
    from jurist.ratings import BTResult
    from jurist.store import RunDir

StyleVector = tuple[int, int, int, int]


def bt_rows(
    battles: list[Battle],
    baselines: list[str],
    opts: ScoreOptions,
    settings: Settings,
    warnings: list[str] | None = None,
) -> list[Row]:
    """Elo-scale BT ratings anchored at the baseline (1000) and each model's implied win rate against it;
    with no baseline (every model meets several others, as in an arena export) the models' mean is 1000,
    every bootstrap replicate shifted the same way, and there is no win rate against a baseline.

    A model whose rating has no finite estimate, or whose interval comes from bootstrap replicates where
    it has none (near-separated data), is marked in its row and named in ``warnings``.
    """
    import numpy as np

    from jurist.ratings import bradley_terry, win_rate_vs_anchor

    names = sorted({b["model_a"] for b in battles} | {b["model_b"] for b in battles})
    index = {name: i for i, name in enumerate(names)}
    (a, b_, y), weights, clusters = bootstrap_design(
        [
            np.array([index[b["model_a"]] for b in battles]),
            np.array([index[b["model_b"]] for b in battles]),
            np.array([OUTCOME[b["winner"]] for b in battles]),
        ],
        np.array([float(b.get("weight", 1)) for b in battles]),
        [str(b["uid"]) for b in battles],
        opts.resample,
    )
    reference = anchor(names, baselines) if baselines else 0
    try:
        result = bradley_terry(
            a,
            b_,
            y,
            weights=weights,
            n_models=len(names),
            anchor=reference,
            n_bootstrap=settings.n_bootstrap,
            ci_level=settings.ci_level,
            seed=settings.seed,
            clusters=clusters,
        )
    except ValueError as exc:
        raise JuristError(f"Bradley-Terry: {exc}") from None
    questions, battle_counts = model_counts(battles)
    if not baselines:
        result = _mean_anchored(result, settings.ci_level)
        columns = {"rating": result.ratings, "ci_low": result.ci_low, "ci_high": result.ci_high}
        rows = model_rows(names, [], columns, questions, battle_counts)
    else:
        wr = win_rate_vs_anchor(result, reference, ci_level=settings.ci_level)
        columns = {
            "rating": result.ratings,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
            "winrate": wr.score,
            "winrate_ci_low": wr.ci_low,
            "winrate_ci_high": wr.ci_high,
        }
        rows = model_rows(names, baselines, columns, questions, battle_counts)
    what = f"Bradley-Terry ({_judge_of(battles)})" if _judge_of(battles) else "Bradley-Terry"
    mark_runaways(rows, names, result.separation, settings.ci_level, what, warnings)
    return rows


def _judge_of(battles: list[Battle]) -> str:
    return str(battles[0].get("judge", "")) if battles else ""


def _mean_anchored(result: BTResult, ci_level: float, rating: float = 1000.0) -> BTResult:
    """``result`` shifted so the models' mean rating is ``rating`` in the point fit and in each replicate
    (the arena convention when no model is the reference); intervals from the shifted replicates."""
    import numpy as np

    ratings = result.ratings - result.ratings.mean() + rating
    if result.bootstrap.shape[0] == 0:
        return result._replace(ratings=ratings, ci_low=ratings.copy(), ci_high=ratings.copy())
    boot = result.bootstrap - result.bootstrap.mean(axis=1, keepdims=True) + rating
    tail = (1.0 - ci_level) / 2.0  # the percentile interval, as every BT interval here
    low, high = np.quantile(boot, [tail, 1.0 - tail], axis=0)
    return result._replace(ratings=ratings, ci_low=low, ci_high=high, bootstrap=boot)


class StyleCache:
    """Style vectors per (model, uid, sample) from answers/<model>.jsonl, computed where an answer has none
    (the last line of an answer wins, as everywhere)."""

    def __init__(self, run: RunDir, notes: list[str]) -> None:
        self.run = run
        self.notes = notes
        self._models: dict[str, dict[tuple[str, int], StyleVector]] = {}

    def model(self, name: str) -> dict[tuple[str, int], StyleVector]:
        if name not in self._models:
            self._models[name] = self._load(name)
        return self._models[name]

    def _load(self, name: str) -> dict[tuple[str, int], StyleVector]:
        from jurist.store import answer_text, iter_numbered_jsonl, sample_of
        from jurist.tokens import answer_style_metadata, style_vector

        vectors: dict[tuple[str, int], StyleVector] = {}
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
            vectors[(str(uid), sample_of(record))] = style_vector(metadata)
        if computed:
            self.notes.append(f"style metadata computed for {computed} answers of {name} (none stored)")
        return vectors


def style_rows(
    battles: list[Battle],
    baselines: list[str],
    styles: StyleCache,
    opts: ScoreOptions,
    settings: Settings,
    notes: list[str],
    warnings: list[str] | None = None,
) -> list[Row]:
    """Arena-Hard v2 style-controlled win rates (bootstrap median and quantiles) against the baseline.

    With no bootstrap rounds the score is the fit on all battles and no interval exists. A style fit whose
    design is near-singular (e.g. every answer of a model has the same length, so length and the model's
    own strength cannot be told apart) is reported in ``warnings``: its coefficients are not meaningful.
    """
    import numpy as np

    from jurist.ratings import style_controlled_win_rates

    oriented = Oriented(battles, set(baselines))
    keep: list[int] = []
    model_style: list[StyleVector] = []
    base_style: list[StyleVector] = []
    for k in range(len(oriented)):
        uid = oriented.uid[k]
        ms = styles.model(oriented.model[k]).get((uid, oriented.sample[k]))
        bs = styles.model(oriented.baseline[k]).get((uid, 0))
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
    design: list[Any] = [
        np.array([index[oriented.model[k]] for k in keep]),
        np.array([index[oriented.baseline[k]] for k in keep]),
        np.array([oriented.p[k] for k in keep]),
        np.array(model_style, dtype=float),
        np.array(base_style, dtype=float),
    ]
    (m_idx, b_idx, y, ms_arr, bs_arr), weights, clusters = bootstrap_design(
        design, np.array([oriented.weight[k] for k in keep]), [oriented.uid[k] for k in keep], opts.resample
    )
    reference = anchor(names, baselines) if baselines else 0
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
            reference=reference,
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
    how = "bootstrap median" if settings.n_bootstrap > 0 else "fit on all battles, no bootstrap"
    notes.append(f"style coefficients ({how}, z-scored features): {coefs}")
    problem = style_fit_problem(
        (m_idx, b_idx, reference, len(names)), ms_arr, bs_arr, opts.style_control, result
    )
    judge = _judge_of(battles)
    what = f"style control{f' ({judge})' if judge else ''}"
    if problem and warnings is not None:
        warnings.append(f"{what}: {problem}")
    questions, counts = oriented.counts(keep)
    numbers = {"score": result.median, "ci_low": result.ci_low, "ci_high": result.ci_high}
    rows = model_rows(names, baselines, numbers, questions, counts)
    mark_runaways(rows, names, result.separation, settings.ci_level, what, warnings)
    return rows


STYLE_COEF_LIMIT = 10.0
"""A z-scored style coefficient beyond this (a one-SD style difference moving the log-odds by 10) is a
symptom of an unidentifiable fit, not a real effect (real ones are well under 1)."""

CONDITION_LIMIT = 1e4
"""Condition number of the column-scaled design (model columns and z-scored features) above which the
style fit is numerically ill-conditioned."""


def style_fit_problem(
    players: tuple[Any, Any, int, int],
    model_style: Any,
    baseline_style: Any,
    features: tuple[str, ...],
    result: Any,
) -> str | None:
    """Why a style-control fit should not be trusted (None when it looks sound).

    Checks the design the fit saw (model-difference columns plus z-scored style features, columns scaled
    to unit length) for collinearity by its condition number, and the fitted coefficients for size.
    """
    import numpy as np

    from jurist.ratings import style_features, zscore

    model_idx, baseline_idx, reference, n_models = players
    z = zscore(style_features(model_style, baseline_style, features))
    z = z[:, np.any(z != 0.0, axis=0)]
    sides = np.zeros((len(model_idx), n_models))
    rows = np.arange(len(model_idx))
    sides[rows, np.asarray(model_idx)] += 1.0
    sides[rows, np.asarray(baseline_idx)] -= 1.0
    design = np.hstack([np.delete(sides, reference, axis=1), z])  # the reference is fixed at 0
    norms = np.linalg.norm(design, axis=0)
    design = design[:, norms > 0] / norms[norms > 0]
    condition = float(np.linalg.cond(design)) if design.size else 0.0
    coefs = np.asarray(result.feature_coefs, dtype=float)
    largest = float(np.max(np.abs(coefs))) if coefs.size else 0.0
    reasons = []
    if not np.isfinite(condition) or condition > CONDITION_LIMIT:
        reasons.append(f"condition number {condition:.3g}")
    if not np.isfinite(largest) or largest > STYLE_COEF_LIMIT:
        reasons.append(f"a style coefficient of {largest:+.3g}")
    if not result.converged and not np.any(result.separation.full != 0):  # else a model's own runaway
        reasons.append("the fit did not converge")
    if not reasons:
        return None
    return (
        f"the style features are collinear with each other or with the models ({', '.join(reasons)}); "
        "coefficients and controlled scores are unreliable: drop a feature or check the answers' metadata"
    )
