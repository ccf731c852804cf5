"""Adaptive evaluation replayed on recorded judgments, as if judged live, against the full evaluation.

The data: AlpacaEval's 20 shared leaderboard models' stored GPT-4-turbo annotations
(``../shared/data/alpaca-eval/results/*/weighted_alpaca_eval_gpt4_turbo``), on the 803 instructions every
model has; with ``--recorded DIR``, also the pairwise runs that ``bench/check_behaviour.py`` recorded
(each ``DIR/*/run``; ``export`` copies them to tests/fixtures/v0_30ef78b), read through
:func:`jurist.families.read_outcomes`. For each replay the questions are drawn in one seeded order (the same
for every model, as ``jurist sweep --adaptive`` draws them) in rounds of ``--round``; each model stops
on its own, by one of the rules jurist has:

* ``--rule width`` (default): its anytime-valid 95% interval (:func:`jurist.ratings.confseq.sequence_bounds`,
  without replacement from the task's questions) narrower than ``--target-ci`` points;
* ``--rule best``: as ``jurist sweep --adaptive --decide-vs best``: the paired difference with the leader
  (the best model still going) decided worse (or, with ``--delta`` > 0, within delta) at alpha / (K - 1),
  the leader stopping once it is alone.

Reported over ``--replays`` seeds: the questions judged against the full evaluation (for AlpacaEval each
is one judge call, its one annotation; in a recorded run, its two games), Kendall's tau of the
adaptive ranking (each model's estimate when it stopped) against the full ranking, how often the top model
is the same, and the coverage of each model's own 95% sequence interval when it stopped (its full-data
score inside; and all at once).

    python bench/bench_adaptive.py [--replays 1000] [--rule width|best] [--target-ci 12] [--round 25]
                                   [--delta 0] [--recorded tests/fixtures/v0_30ef78b]
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
Matrix = np.ndarray[Any, np.dtype[np.float64]]


def load_preferences() -> tuple[list[str], Matrix]:
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


def load_recorded(root: Path) -> list[tuple[str, list[str], Matrix]]:
    """Each recorded pairwise run under ``root`` as (name, models, P[model, question]): each question's
    mean P(win) over its games (the per-question score adaptive stopping reads), on the questions every
    model of the run has."""
    from jurist.errors import JuristError
    from jurist.families import read_outcomes

    found = []
    for run_json in sorted(root.glob("*/run/run.json")):
        try:
            outcomes = read_outcomes(run_json.parent)
        except JuristError as exc:  # a judge-accuracy run (JudgeBench) has no per-model score to replay
            print(f"skipped {run_json.parent.parent.name}: {exc}")
            continue
        if outcomes.family != "pairwise":
            continue
        cells = {model: c for (_, model), c in sorted(outcomes.cells.items()) if model in outcomes.models}
        shared = sorted(set.intersection(*(set(c.sums) for c in cells.values()))) if cells else []
        if len(cells) < 2 or not shared:
            continue
        p = np.array([[c.mean(uid) for uid in shared] for c in cells.values()], dtype=np.float64)
        found.append((run_json.parent.parent.name, list(cells), np.clip(p, 0.0, 1.0)))
    return found


def _looks(n: int, round_size: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.arange(round_size, n + round_size, round_size).clip(max=n) - 1


def stop_by_width(p: Matrix, order: np.ndarray[Any, Any], target: float, round_size: int) -> list[int]:
    """Each model's stopping index: the first look whose 95% sequence is narrower than ``target``."""
    n_models, n = p.shape
    looks, stops = _looks(n, round_size), []
    for m in range(n_models):
        _, low, high = sequence_bounds(p[m, order], alpha=0.05, population=n)
        narrow = looks[100.0 * (high[looks] - low[looks]) <= target]
        stops.append(int(narrow[0]) if narrow.size else n - 1)
    return stops


def stop_by_race(p: Matrix, order: np.ndarray[Any, Any], delta: float, round_size: int) -> list[int]:
    """Each model's stopping index racing the leader, as ``--decide-vs best`` does (jurist.decide.race)."""
    n_models, n = p.shape
    alpha = 0.05 / max(1, n_models - 1)
    x = p[:, order]
    means = np.cumsum(x, axis=1) / np.arange(1, n + 1)
    stops = [n - 1] * n_models
    going = set(range(n_models))
    pairs: dict[tuple[int, int], tuple[Matrix, Matrix]] = {}
    for k in _looks(n, round_size):
        k = int(k)
        leader = max(sorted(going), key=lambda m: means[m, k])
        for m in sorted(going - {leader}):
            if (m, leader) not in pairs:
                _, low, high = sequence_bounds((x[m] - x[leader] + 1.0) / 2.0, alpha=alpha, population=n)
                pairs[(m, leader)] = (100.0 * (2.0 * low - 1.0), 100.0 * (2.0 * high - 1.0))
            low_d, high_d = pairs[(m, leader)][0][k], pairs[(m, leader)][1][k]
            if high_d < -delta or (delta > 0 and -delta <= low_d and high_d <= delta):
                stops[m] = k
                going.discard(m)
        if going == {leader}:
            stops[leader] = k
            break
    return stops


def replay(p: Matrix, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """One replay: each model's stopping n, estimate and own 95% sequence interval (percent)."""
    n = p.shape[1]
    order = np.random.default_rng(seed).permutation(n)
    if args.rule == "best":
        stops = stop_by_race(p, order, args.delta, args.round)
    else:
        stops = stop_by_width(p, order, args.target_ci, args.round)
    estimate, low, high = [], [], []
    for m, k in enumerate(stops):
        e, lo, hi = sequence_bounds(p[m, order[: k + 1]], alpha=0.05, population=n)
        estimate.append(100.0 * e[-1])
        low.append(100.0 * lo[-1])
        high.append(100.0 * hi[-1])
    return {
        "n": np.array(stops) + 1,
        "estimate": np.array(estimate),
        "low": np.array(low),
        "high": np.array(high),
    }


def report(name: str, models: list[str], p: Matrix, args: argparse.Namespace) -> None:
    """Replay ``p`` ``--replays`` times and print the figures against the full evaluation."""
    started = time.perf_counter()
    full = 100.0 * p.mean(axis=1)
    n_models, n = p.shape
    calls, taus, same_top, covered, all_covered = [], [], 0, 0, 0
    for seed in range(args.replays):
        result = replay(p, seed, args)
        calls.append(int(result["n"].sum()))
        tau = float(kendalltau(result["estimate"], full).statistic)
        taus.append(tau if tau == tau else 1.0)  # every score tied (nothing to order): the same order
        same_top += int(np.argmax(result["estimate"]) == np.argmax(full))
        inside = (result["low"] <= full + 1e-9) & (full <= result["high"] + 1e-9)
        covered += int(inside.sum())
        all_covered += int(inside.all())
    used = float(np.mean(calls))
    rule = (
        f"target width {args.target_ci:g} points"
        if args.rule == "width"
        else f"race the best, delta {args.delta:g}"
    )
    print(
        f"{name}: {n_models} models x {n} questions; {args.replays} replays; {rule}; rounds of {args.round}"
    )
    print(f"{'':28} {'full':>10} {'adaptive':>10}")
    fewer = f"({n_models * n / used:.2f}x fewer)"
    print(f"{'judged questions (mean)':28} {n_models * n:>10} {used:>10.0f}   {fewer}")
    print(f"{'Kendall tau (mean, min)':28} {1.0:>10.3f} {np.mean(taus):>10.3f}   min {np.min(taus):.3f}")
    print(f"{'same top model':28} {'yes':>10} {same_top / args.replays:>10.1%}")
    each = covered / (args.replays * n_models)
    print(f"{'coverage, each interval':28} {'':>10} {each:>10.2%}   nominal 95%")
    print(f"{f'coverage, all {n_models} at once':28} {'':>10} {all_covered / args.replays:>10.2%}")
    top = models[int(np.argmax(full))]
    print(f"full top model: {top} ({full.max():.1f}); {time.perf_counter() - started:.1f} s\n")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--replays", type=int, default=1000)
    parser.add_argument("--rule", choices=("width", "best"), default="width")
    parser.add_argument(
        "--target-ci", type=float, default=12.0, help="--rule width: interval width in points"
    )
    parser.add_argument("--delta", type=float, default=0.0, help="--rule best: the difference that counts")
    parser.add_argument("--round", type=int, default=25)
    parser.add_argument("--recorded", type=Path, help="also replay the recorded runs under this folder")
    parser.add_argument("--no-alpaca", action="store_true", help="only the recorded runs")
    args = parser.parse_args()
    if not args.no_alpaca:
        models, p = load_preferences()
        report("AlpacaEval", models, p, args)
    if args.recorded is not None:
        recorded = load_recorded(args.recorded)
        if not recorded:
            print(f"no recorded pairwise run under {args.recorded}")
        for name, models, p in recorded:
            report(f"recorded {name}", models, p, args)


if __name__ == "__main__":
    main()
