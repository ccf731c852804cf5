"""Benchmark the arena placement fit against JudgeArena's own approach on the same battles (prints only).

Data: a synthetic arena, 60 models with true Elo ~ N(1150, 120), 100,000 human battles drawn from the
Bradley-Terry model (8% ties), plus 1,000 judged battles of one evaluated model against uniform opponents.

1. jurist: :func:`jurist.ratings.placement.place_models`: battles aggregated into (pair, outcome) cells,
   damped Newton, 100 multinomial bootstrap rounds solved together, plus the human-only fit.
2. JudgeArena's ``fit_bradley_terry`` (reference: eval-frameworks.md §2.4): identical (model_a, model_b,
   pref) rows grouped and counted, two logistic rows per group with weights (1 - pref) * count and
   pref * count, +-ln 10 design, ``LogisticRegression(fit_intercept=False, C=1e10, tol=1e-6,
   max_iter=1000)``; the bootstrap resamples the battle rows with replacement, groups them again and refits,
   ``--rounds`` times (grouping done with numpy here, where JudgeArena uses pandas).

Run: ``PYTHONPATH=src python bench/bench_placement.py [--rounds N]``; BLAS is pinned to one thread.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from jurist.ratings._threads import single_blas_thread  # noqa: E402
from jurist.ratings.bt import elo_win_probability  # noqa: E402
from jurist.ratings.placement import place_models  # noqa: E402

N_MODELS = 60
N_HUMAN = 100_000
N_JUDGED = 1_000
TIE_RATE = 0.08

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def make_battles(seed: int = 0) -> tuple[Arrays, Arrays]:
    """Human battles among models 0..59 and judged battles of model 60, outcomes 1 / 0.5 / 0 for a."""
    rng = np.random.default_rng(seed)
    true = rng.normal(1150.0, 120.0, N_MODELS + 1)
    a = rng.integers(0, N_MODELS, N_HUMAN)
    b = rng.integers(0, N_MODELS - 1, N_HUMAN)
    b = np.where(b >= a, b + 1, b)
    win = elo_win_probability(true[a], true[b])
    p_a = np.clip((win - 0.5 * TIE_RATE) / (1.0 - TIE_RATE), 0.0, 1.0)
    y = (rng.random(N_HUMAN) < p_a).astype(float)
    y[rng.random(N_HUMAN) < TIE_RATE] = 0.5
    ja = np.full(N_JUDGED, N_MODELS)
    jb = rng.integers(0, N_MODELS, N_JUDGED)
    jy = (rng.random(N_JUDGED) < elo_win_probability(true[ja], true[jb])).astype(float)
    return (a, b, y), (ja, jb, jy)


def judgearena_fit(a: np.ndarray, b: np.ndarray, y: np.ndarray, n_models: int) -> np.ndarray:
    """JudgeArena's fit_bradley_terry on battle rows (``y`` = 1 - pref), ratings centred on 1000."""
    from sklearn.linear_model import LogisticRegression

    pref = 1.0 - y
    keys, counts = np.unique(np.c_[a, b, pref], axis=0, return_counts=True)
    n = len(keys)
    x = np.zeros((2 * n, n_models))
    rows = np.arange(n)
    ia, ib = keys[:, 0].astype(int), keys[:, 1].astype(int)
    for offset in (0, n):
        x[offset + rows, ia] = math.log(10.0)
        x[offset + rows, ib] = -math.log(10.0)
    labels = np.r_[np.ones(n), np.zeros(n)]
    weights = np.r_[(1.0 - keys[:, 2]) * counts, keys[:, 2] * counts]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(fit_intercept=False, C=1e10, tol=1e-6, max_iter=1000)
        model.fit(x, labels, sample_weight=weights)
    return 400.0 * model.coef_[0] + 1000.0  # type: ignore[no-any-return]


def judgearena_bootstrap(a: np.ndarray, b: np.ndarray, y: np.ndarray, rounds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(rounds):
        pick = rng.integers(0, a.size, a.size)
        out.append(judgearena_fit(a[pick], b[pick], y[pick], N_MODELS + 1))
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="bootstrap rounds for both methods")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for jurist's timing")
    args = parser.parse_args()
    (ha, hb, hy), (ja, jb, jy) = make_battles()
    print(f"{N_HUMAN:,} human + {N_JUDGED:,} judged battles, {N_MODELS} arena models + 1 evaluated")
    with single_blas_thread():
        best = math.inf
        for _ in range(args.repeat):
            start = time.perf_counter()
            placed = place_models(
                ha, hb, hy, ja, jb, jy, n_models=N_MODELS + 1, min_human_battles=500, n_bootstrap=args.rounds
            )
            best = min(best, time.perf_counter() - start)
        print(f"jurist place_models, point + human-only fit + {args.rounds} bootstrap rounds: {best:.3f} s")
        a, b, y = np.r_[ha, ja], np.r_[hb, jb], np.r_[hy, jy]
        start = time.perf_counter()
        point = judgearena_fit(a, b, y, N_MODELS + 1)
        single = time.perf_counter() - start
        start = time.perf_counter()
        boot = judgearena_bootstrap(a, b, y, args.rounds, seed=0)
        looped = time.perf_counter() - start
    print(
        f"JudgeArena-style LogisticRegression: one fit {single:.3f} s, "
        f"{args.rounds} bootstrap rounds {looped:.2f} s"
    )
    print(f"speed-up on the bootstrap: {looped / best:.0f}x")
    # Both on jurist's gauge: the arena (anchor) models average 0.
    ours = placed.ratings - placed.ratings[:N_MODELS].mean()
    theirs = point - point[:N_MODELS].mean()
    print(
        f"point fit agreement: max |diff| {np.abs(ours - theirs).max():.2e} Elo "
        "(JudgeArena's tol=1e-6 limits the sklearn fit)"
    )
    width_ours = np.median(placed.ci_high - placed.ci_low)
    low, high = np.quantile(boot - boot[:, :N_MODELS].mean(axis=1, keepdims=True), [0.025, 0.975], axis=0)
    print(
        f"median 95% CI width: jurist {width_ours:.1f} Elo, JudgeArena-style {np.median(high - low):.1f} Elo"
    )
    print(
        f"evaluated model: jurist CI width {placed.ci_high[-1] - placed.ci_low[-1]:.1f} Elo, "
        f"JudgeArena-style {high[-1] - low[-1]:.1f} Elo"
    )


if __name__ == "__main__":
    main()
