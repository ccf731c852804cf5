"""Bradley-Terry on the Elo scale (Arena-Hard v0.1) and style control (BT with style features, v2's ``-f``).

Both anchor at the baseline and report, besides ratings, the win rate against it that they imply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError
from jurist.scoring.common import (
    OUTCOME,
    Battle,
    Oriented,
    Row,
    anchor,
    bootstrap_design,
    model_counts,
    model_rows,
)

if TYPE_CHECKING:
    from jurist.scoring.options import ScoreOptions, Settings
    from jurist.store.run_dir import RunDir

StyleVector = tuple[int, int, int, int]


def bt_rows(battles: list[Battle], baselines: list[str], opts: ScoreOptions, settings: Settings) -> list[Row]:
    """Elo-scale BT ratings anchored at the baseline (1000) and each model's implied win rate against it."""
    import numpy as np

    from jurist.ratings.bt import bradley_terry, win_rate_vs_anchor

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
    reference = anchor(names, baselines)
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
    wr = win_rate_vs_anchor(result, reference, ci_level=settings.ci_level)
    questions, battle_counts = model_counts(battles)
    columns = {
        "rating": result.ratings,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "winrate": wr.score,
        "winrate_ci_low": wr.ci_low,
        "winrate_ci_high": wr.ci_high,
    }
    return model_rows(names, baselines, columns, questions, battle_counts)


class StyleCache:
    """Style vectors per (model, uid) from answers/<model>.jsonl, computed where an answer has none."""

    def __init__(self, run: RunDir, notes: list[str]) -> None:
        self.run = run
        self.notes = notes
        self._models: dict[str, dict[str, StyleVector]] = {}

    def model(self, name: str) -> dict[str, StyleVector]:
        if name not in self._models:
            self._models[name] = self._load(name)
        return self._models[name]

    def _load(self, name: str) -> dict[str, StyleVector]:
        from jurist.store.jsonl import iter_numbered_jsonl
        from jurist.store.run_dir import answer_text
        from jurist.style import answer_style_metadata, style_vector

        vectors: dict[str, StyleVector] = {}
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


def style_rows(
    battles: list[Battle],
    baselines: list[str],
    styles: StyleCache,
    opts: ScoreOptions,
    settings: Settings,
    notes: list[str],
) -> list[Row]:
    """Arena-Hard v2 style-controlled win rates (bootstrap median and quantiles) against the baseline."""
    import numpy as np

    from jurist.ratings.style_control import style_controlled_win_rates

    oriented = Oriented(battles, set(baselines))
    keep: list[int] = []
    model_style: list[StyleVector] = []
    base_style: list[StyleVector] = []
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
            reference=anchor(names, baselines),
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
    numbers = {"score": result.median, "ci_low": result.ci_low, "ci_high": result.ci_high}
    return model_rows(names, baselines, numbers, questions, counts)
