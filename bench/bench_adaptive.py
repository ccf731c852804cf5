"""Adaptive evaluation replayed on recorded judgments: AlpacaEval's 20 shared leaderboard models' stored
GPT-4-turbo annotations, taken in seeded random orders as if judged live, against the full evaluation.

For each replay the 803 questions every model answered are drawn in one seeded order (the same for
every model, as ``jurist run --adaptive --sample-seed S`` draws them) in rounds of ``--round``; a model
stops at the first round where its anytime-valid 95% interval
(:func:`jurist.ratings.confseq.sequence_bounds`, without replacement from the 803) is narrower than
``--target-ci`` points, or, with ``--race``, also as soon as its interval lies wholly below the best
model's lower bound at that look (it cannot be the top one). Reported, over ``--replays`` seeds: judge
calls used against the full 20 x 803, Kendall's tau of the adaptive ranking against the full ranking,
how often the top model is the same, and the coverage of the intervals (each model's final interval
containing its full-data win rate; and all 20 at once).

    python bench/bench_adaptive.py [--replays 1000] [--target-ci 12] [--round 25] [--race]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from jurist.ratings.confseq import sequence_bounds

RESULTS = Path(__file__).resolve().parents[2] / "shared" / "data" / "alpaca-eval" / "results"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"


def load_preferences() -> tuple[list[str], np.ndarray[Any, np.dtype[np.float64]]]:
    """(models, P[model, question]): the probability each model's answer beat the baseline's, as the
    weighted annotator recorded it (preference 1..2 -> 0..1), on the instructions every model answered
    (whitespace-normalised; text_davinci_001 lacks 2 of the 805)."""
    models, tables = [], []
    for folder in sorted(RESULTS.iterdir()):
        path = folder / ANNOTATOR / "annotations.json.gz"
        if not path.is_file():
            continue
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            records = json.load(fh)
        models.append(folder.name)
        tables.append({" ".join(r["instruction"].split()): r.get("preference") for r in records})
    shared = sorted(set.intersection(*(set(table) for table in tables)))
    rows = [[0.5 if t[q] is None else float(t[q]) - 1.0 for q in shared] for t in tables]
    return models, np.clip(np.asarray(rows, dtype=np.float64), 0.0, 1.0)


def replay(
    p: np.ndarray[Any, np.dtype[np.float64]], seed: int, *, target: float, round_size: int, race: bool
) -> dict[str, Any]:
    """One replay: each model's stopping n, estimate and interval (percent)."""
    n_models, n = p.shape
    order = np.random.default_rng(seed).permutation(n)
    looks = np.arange(round_size, n + round_size, round_size).clip(max=n) - 1
    bounds = [sequence_bounds(p[m, order], alpha=0.05, population=n) for m in range(n_models)]
    stop = np.full(n_models, n - 1)
    for m in range(n_models):
        _, low, high = bounds[m]
        narrow = looks[100.0 * (high[looks] - low[looks]) <= target]
        if narrow.size:
            stop[m] = narrow[0]
    if race:  # stop a model once it is shown below the best lower bound seen at the same look
        for k in looks:
            best_low = max(bounds[m][1][min(k, stop[m])] for m in range(n_models))
            for m in range(n_models):
                if stop[m] > k and bounds[m][2][k] < best_low:
                    stop[m] = k
    estimate = np.array([100.0 * bounds[m][0][stop[m]] for m in range(n_models)])
    low = np.array([100.0 * bounds[m][1][stop[m]] for m in range(n_models)])
    high = np.array([100.0 * bounds[m][2][stop[m]] for m in range(n_models)])
    return {"n": stop + 1, "estimate": estimate, "low": low, "high": high}


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--replays", type=int, default=1000)
    parser.add_argument("--target-ci", type=float, default=12.0, help="interval width in points")
    parser.add_argument("--round", type=int, default=25)
    parser.add_argument("--race", action="store_true", help="also stop models shown below the best")
    args = parser.parse_args()
    started = time.perf_counter()
    models, p = load_preferences()
    full = 100.0 * p.mean(axis=1)
    n_models, n = p.shape
    calls, taus, same_top, covered, all_covered = [], [], 0, 0, 0
    for seed in range(args.replays):
        result = replay(p, seed, target=args.target_ci, round_size=args.round, race=args.race)
        calls.append(int(result["n"].sum()))
        taus.append(float(kendalltau(result["estimate"], full).statistic))
        same_top += int(np.argmax(result["estimate"]) == np.argmax(full))
        inside = (result["low"] <= full + 1e-9) & (full <= result["high"] + 1e-9)
        covered += int(inside.sum())
        all_covered += int(inside.all())
    used = float(np.mean(calls))
    racing = ", racing the best" if args.race else ""
    print(f"{n_models} models x {n} questions; {args.replays} replays; target width {args.target_ci:g}")
    print(f"points, rounds of {args.round}{racing}")
    print(f"{'':28} {'full':>10} {'adaptive':>10}")
    print(f"{'judge calls (mean)':28} {n_models * n:>10} {used:>10.0f}   ({n_models * n / used:.2f}x fewer)")
    print(f"{'Kendall tau (mean, min)':28} {1.0:>10.3f} {np.mean(taus):>10.3f}   min {np.min(taus):.3f}")
    print(f"{'same top model':28} {'yes':>10} {same_top / args.replays:>10.1%}")
    each = covered / (args.replays * n_models)
    print(f"{'coverage, each interval':28} {'':>10} {each:>10.2%}   nominal 95%")
    print(f"{'coverage, all 20 at once':28} {'':>10} {all_covered / args.replays:>10.2%}")
    top = models[int(np.argmax(full))]
    print(f"full top model: {top} ({full.max():.1f}); {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
