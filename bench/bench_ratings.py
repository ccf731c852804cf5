"""Benchmark the rating statistics against the scikit-learn recipe they replace (prints, asserts nothing).

1. Bradley-Terry: 100,000 battles over 50 models (10% ties), point fit + 100 bootstrap rounds with
   ``jurist.ratings.bradley_terry`` (aggregated cells, batched Newton, multinomial bootstrap) next to the
   Arena-Hard v0.1 / FastChat recipe: battles duplicated so a tie is one win each way, a dense +-ln(10)
   design, ``LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8)``, and a bootstrap that
   resamples battles and refits 100 times.
2. Style control: a synthetic Arena-Hard v2 run, 27 models x 750 questions x 2 games (strong verdicts
   exploded into 3 rows), length + markdown features, 100 bootstrap rounds.

Run: ``PYTHONPATH=src python bench/bench_ratings.py [--sklearn-rounds N]``. Both methods run with BLAS
pinned to one thread.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np

from jurist.ratings import bradley_terry, elo_win_probability, style_controlled_win_rates
from jurist.ratings._threads import single_blas_thread

N_MODELS = 50
N_BATTLES = 100_000


def make_battles(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Uniform random pairs, true ratings ~ N(0, 150) Elo, 10% ties, otherwise BT outcomes."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 150.0, N_MODELS)
    a = rng.integers(0, N_MODELS, N_BATTLES)
    b = rng.integers(0, N_MODELS - 1, N_BATTLES)
    b = np.where(b >= a, b + 1, b)
    y = (rng.random(N_BATTLES) < elo_win_probability(true[a], true[b])).astype(float)
    y[rng.random(N_BATTLES) < 0.1] = 0.5
    return a, b, y


def sklearn_elo(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The v0.1 recipe: duplicate battles, +-ln 10 design, unpenalised logistic regression, anchor model 0."""
    from sklearn.linear_model import LogisticRegression

    n = a.size
    x = np.zeros((2 * n, N_MODELS))
    rows = np.arange(2 * n)
    x[rows, np.r_[a, a]] = math.log(10.0)
    x[rows, np.r_[b, b]] = -math.log(10.0)
    # First copy: a tie counts as an A win; second copy: as a B win. Wins and losses are the same in both.
    labels = np.r_[(y >= 0.5).astype(float), (y > 0.5).astype(float)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn >= 1.8 deprecates penalty=None
        model = LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8)
        model.fit(x, labels)
    elo = 400.0 * model.coef_[0]
    return 1000.0 + elo - elo[0]  # type: ignore[no-any-return]


def bench_bt(sklearn_rounds: int) -> None:
    a, b, y = make_battles()
    print(f"== Bradley-Terry: {N_BATTLES:,} battles, {N_MODELS} models, 10% ties, 100 bootstrap rounds")
    start = time.perf_counter()
    ours = bradley_terry(a, b, y, anchor=0, n_bootstrap=100, ci_level=0.95, seed=0)
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    point_only = bradley_terry(a, b, y, anchor=0, n_bootstrap=0)
    t_point = time.perf_counter() - start
    print(f"jurist  fit + 100 rounds : {t_ours:8.3f} s   (point fit alone {1e3 * t_point:.1f} ms)")
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print("scikit-learn not installed: skipping the comparison")
        return
    rng = np.random.default_rng(1)
    with single_blas_thread():
        start = time.perf_counter()
        sk_point = sklearn_elo(a, b, y)
        t_sk_point = time.perf_counter() - start
        boot = []
        for _ in range(sklearn_rounds):
            idx = rng.integers(0, N_BATTLES, N_BATTLES)
            boot.append(sklearn_elo(a[idx], b[idx], y[idx]))
        t_sk = time.perf_counter() - start
    sk_boot = np.array(boot)
    scale = 100.0 / sklearn_rounds if sklearn_rounds else float("nan")
    print(
        f"sklearn fit + {sklearn_rounds} rounds  : {t_sk:8.3f} s"
        + f"   (point fit alone {1e3 * t_sk_point:.1f} ms)"
        + (
            f"; x{scale:.1f} for 100 rounds = {t_sk_point + (t_sk - t_sk_point) * scale:.1f} s"
            if scale != 1
            else ""
        )
    )
    t_sk_100 = t_sk_point + (t_sk - t_sk_point) * scale
    print(f"speed ratio (sklearn / jurist, 100 rounds): {t_sk_100 / t_ours:8.1f}x")
    print(f"max |Elo difference| of point estimates    : {np.abs(sk_point - point_only.ratings).max():.2e}")
    width_ours = np.median(ours.ci_high[1:] - ours.ci_low[1:])
    if sk_boot.shape[0] >= 10:
        low, high = np.quantile(sk_boot, [0.025, 0.975], axis=0)
        width_sk = np.median(high[1:] - low[1:])
        print(f"median 95% CI width: jurist {width_ours:.1f} Elo, sklearn {width_sk:.1f} Elo")


def make_style_rows(n_models: int = 27, n_questions: int = 750, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Exploded Arena-Hard v2 rows against one baseline, outcomes depending on strength and length."""
    rng = np.random.default_rng(seed)
    base = n_models // 2
    strength = rng.normal(0.0, 1.2, n_models)
    verbosity = rng.normal(0.0, 0.4, n_models)
    markdown = rng.uniform(0.2, 2.0, n_models)
    length = np.round(rng.lognormal(6.3 + verbosity[:, None], 0.6, (n_models, n_questions)))
    counts = rng.poisson(markdown[:, None, None] * length[:, :, None] / np.array([300.0, 60.0, 120.0]))
    style = np.concatenate([length[:, :, None], counts], axis=2)
    models = np.array([m for m in range(n_models) if m != base])
    m_idx = np.repeat(models, 2 * n_questions)
    q_idx = np.tile(np.arange(n_questions), 2 * models.size)
    gap = (style[m_idx, q_idx, 0] - style[base, q_idx, 0]) / (style[m_idx, q_idx, 0] + style[base, q_idx, 0])
    p = 1.0 / (1.0 + np.exp(-(strength[m_idx] - strength[base] + 1.5 * gap + rng.normal(0, 0.5, m_idx.size))))
    u = rng.random(m_idx.size)
    score = np.select([u < 0.35 * p, u < p, u < p + 0.08], [1.0, 1.0, 0.5], default=0.0)
    strong = (u < 0.35 * p) | (u > 0.9)
    reps = np.where(strong, 3, 1)
    m_idx, q_idx, score = np.repeat(m_idx, reps), np.repeat(q_idx, reps), np.repeat(score, reps)
    return m_idx, np.full(m_idx.size, base), score, style[m_idx, q_idx], style[base, q_idx]


def bench_style() -> None:
    a, b, y, m_style, b_style = make_style_rows()
    print(f"== Style control: 27 models x 750 questions x 2 games = {a.size:,} exploded rows, 100 rounds")
    for features in [("length", "markdown"), ("length",), ("markdown",)]:
        start = time.perf_counter()
        result = style_controlled_win_rates(a, b, y, m_style, b_style, features=features, n_bootstrap=100)
        elapsed = time.perf_counter() - start
        coefs = ", ".join(
            f"{n}={c:+.3f}" for n, c in zip(result.feature_names, result.feature_coefs, strict=True)
        )
        print(f"features {'+'.join(features):16s}: {elapsed:6.2f} s  converged={result.converged}  {coefs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sklearn-rounds", type=int, default=100, help="bootstrap rounds for the sklearn recipe"
    )
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}")
    bench_bt(args.sklearn_rounds)
    bench_style()


if __name__ == "__main__":
    main()
