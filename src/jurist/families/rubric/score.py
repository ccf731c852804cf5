"""Rubric scores from point records (one point per graded item): HealthBench and WritingBench. Pure.

HealthBench, as simple-evals computes it: an answer scores Σ points of met items / Σ positive points (it
may be negative); each example tag (theme, physician category) takes the answer's score, each rubric tag
(axis, level, cluster) the same ratio over its items. A metric is the mean over answers **clipped to
[0, 1]**, with ``bootstrap_std`` = std of 1,000 clipped means of resampled answers. The draws come from
``numpy.random.RandomState(seed)`` (simple-evals uses numpy's unseeded global state), over the answers in
(uid, sample) order, afresh for each metric. The eval_framework variant does not clip. With several
samples per prompt the question-clustered interval is given too (``ratings.win_rate_from_entries``).
With ``-B length_penalty= -B length_center=`` (simple-evals PR #108) each answer's score is also adjusted
for its length in characters and the adjusted metric reported beside the unadjusted headline.

WritingBench, as its ``calculate_scores.py`` computes it: overall = Σ criterion scores / number of scores
(micro average; x10 on the leaderboard); an answer's score is the mean of its criteria; domain means of
answer scores; R = mean answer score over the queries involving a requirement, C = mean of the criterion
scores that requirement names.

An answer with an unscored item is left out of every number and counted (``unscored_answers``): scoring
it as "not met" would be a guess.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jurist.benchmarks import RubricSuite, rubric_suite
from jurist.ratings import WinRate, across_runs, win_rate_from_entries

BOOTSTRAP_ROUNDS = 1000
"""simple-evals' bootstrap rounds for ``bootstrap_std``."""
_CHUNK = 100
"""Bootstrap rounds drawn per block (the same draws as one by one, in a bounded amount of memory)."""
Point = Mapping[str, Any]
AnswerKey = tuple[str, int]


def group_answers(points: Iterable[Point]) -> dict[AnswerKey, list[Point]]:
    """Points by answer (uid, sample), answers in (uid, sample) order, items in item order."""
    answers: dict[AnswerKey, list[Point]] = defaultdict(list)
    for point in points:
        answers[(str(point["uid"]), int(point.get("sample", 0)))].append(point)
    return {key: sorted(answers[key], key=lambda p: int(p["detail"]["item"])) for key in sorted(answers)}


def _unscored(items: Sequence[Point]) -> int:
    return sum(1 for p in items if p.get("value") is None)


def calculate_score(items: Sequence[tuple[float, bool]]) -> float | None:
    """Σ points of met items / Σ positive points; None when no item has positive points."""
    possible = sum(points for points, _ in items if points > 0)
    if possible == 0:
        return None
    return sum(points for points, met in items if met) / possible


def healthbench_metrics(items: Sequence[Point]) -> dict[str, float]:
    """One answer's metrics: ``overall_score``, each example tag, each rubric tag with a positive item."""
    graded = [(float(p["detail"]["points"]), p["value"] == 1.0, p["detail"].get("tags", [])) for p in items]
    overall = calculate_score([(points, met) for points, met, _ in graded])
    if overall is None:
        return {}
    metrics = {"overall_score": overall}
    for tag in items[0]["detail"].get("example_tags", []):
        metrics[tag] = overall
    by_tag: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for points, met, tags in graded:
        for tag in dict.fromkeys(tags):
            by_tag[tag].append((points, met))
    for tag, tagged in by_tag.items():
        score = calculate_score(tagged)
        if score is not None:
            metrics[tag] = score
    return metrics


def bootstrap_std(values: Sequence[float], seed: int, *, clip: bool, rounds: int = BOOTSTRAP_ROUNDS) -> float:
    """Std of ``rounds`` means of ``values`` resampled with replacement (each clipped to [0, 1] when
    ``clip``); the draws are those of ``RandomState(seed).choice(values, n)`` called ``rounds`` times."""
    data = np.asarray(values, dtype=np.float64)
    n = data.shape[0]
    rng = np.random.RandomState(seed)
    means: list[np.ndarray[Any, np.dtype[np.float64]]] = []
    for start in range(0, rounds, _CHUNK):
        block = data[rng.randint(0, n, size=(min(_CHUNK, rounds - start), n))].mean(axis=1)
        means.append(np.clip(block, 0.0, 1.0) if clip else block)
    return float(np.std(np.concatenate(means)))


def metric_stats(values: Sequence[float], seed: int, *, clip: bool) -> dict[str, Any]:
    return {
        "score": _mean(values, clip),
        "bootstrap_std": bootstrap_std(values, seed, clip=clip),
        "n": len(values),
    }


def _mean(values: Sequence[float], clip: bool) -> float:
    mean = float(np.mean(values))
    return float(np.clip(mean, 0.0, 1.0)) if clip else mean


def _clustered(
    per_question: Mapping[str, list[float]], n_bootstrap: int, seed: int, ci_level: float
) -> WinRate:
    """Mean over answers with the question-clustered percentile interval (fractions, unclipped)."""
    uids = sorted(per_question)
    sums = [sum(per_question[u]) for u in uids]
    counts = [len(per_question[u]) for u in uids]
    return win_rate_from_entries(sums, counts, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)


def _prefixed(metrics: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {name[len(prefix) :]: value for name, value in metrics.items() if name.startswith(prefix)}


LENGTH_ADJUSTED = "overall_score_length_adjusted"
"""simple-evals' metric name for the length-adjusted score (PR #108)."""


@dataclass(frozen=True)
class LengthAdjustment:
    """simple-evals' length adjustment (PR #108, ``calculate_length_adjusted_score``): an answer of
    ``chars`` characters scores ``score - penalty * (chars - center) / 500``; the adjusted scores are
    averaged and clipped like any metric, beside the unadjusted headline."""

    center: float
    penalty_per_500_chars: float

    def adjusted(self, score: float, chars: int) -> float:
        return score - self.penalty_per_500_chars * ((chars - self.center) / 500.0)

    @classmethod
    def from_info(cls, value: Any) -> LengthAdjustment | None:
        """The adjustment a benchmark's ``info["length_adjustment"]`` records, if any."""
        if not isinstance(value, Mapping):
            return None
        return cls(float(value["center"]), float(value["penalty_per_500_chars"]))


def score_healthbench(
    points: Sequence[Point],
    *,
    clip: bool,
    seed: int,
    n_bootstrap: int,
    ci_level: float,
    length: LengthAdjustment | None = None,
) -> dict[str, Any]:
    """One (model, judge)'s HealthBench row (fractions, as simple-evals reports them); with ``length``,
    the length-adjusted score too (``length_adjusted``; an answer graded before jurist recorded its
    length, ``answer_chars``, is left out of it and counted)."""
    answers = group_answers(points)
    values: dict[str, list[float]] = defaultdict(list)
    per_question: dict[str, list[float]] = defaultdict(list)
    per_run: dict[int, list[float]] = defaultdict(list)
    unscored_answers = unscored_items = no_length = 0
    for (uid, sample), items in answers.items():
        missing = _unscored(items)
        if missing:
            unscored_answers += 1
            unscored_items += missing
            continue
        metrics = healthbench_metrics(items)
        if not metrics:  # no positive points: no score exists (the loader refuses such rubrics)
            continue
        overall = metrics["overall_score"]
        if length is not None:
            chars = items[0]["detail"].get("answer_chars")
            if isinstance(chars, int):
                metrics[LENGTH_ADJUSTED] = length.adjusted(overall, chars)
            else:
                no_length += 1
        for name, value in metrics.items():
            values[name].append(value)
        per_question[uid].append(overall)
        per_run[sample].append(overall)
    stats = {name: metric_stats(vals, seed, clip=clip) for name, vals in sorted(values.items())}
    overall_stats = stats.get("overall_score", {"score": None, "bootstrap_std": None, "n": 0})
    row: dict[str, Any] = {
        "score": overall_stats["score"],
        "bootstrap_std": overall_stats["bootstrap_std"],
        "n_answers": overall_stats["n"],
        "n_questions": len({uid for uid, _ in answers}),
        "samples": len({sample for _, sample in answers}),
        "items": len(points),
        "unscored_items": unscored_items,
        "unscored_answers": unscored_answers,
        "ci_low": None,
        "ci_high": None,
    }
    if per_question:
        ci = _clustered(per_question, n_bootstrap, seed, ci_level)
        low, high = ci.ci_low / 100.0, ci.ci_high / 100.0
        row["ci_low"], row["ci_high"] = (
            (max(0.0, min(1.0, low)), max(0.0, min(1.0, high))) if clip else (low, high)
        )
    row["across_runs"] = across_runs([_mean(per_run[s], clip) for s in sorted(per_run)])
    if length is not None:
        adjusted = stats.get(LENGTH_ADJUSTED, {"score": None, "bootstrap_std": None, "n": 0})
        row["length_adjusted"] = {
            **adjusted,
            "center": length.center,
            "penalty_per_500_chars": length.penalty_per_500_chars,
            "answers_without_length": no_length,
        }
    row["themes"] = _prefixed(stats, "theme:")
    row["axes"] = _prefixed(stats, "axis:")
    row["metrics"] = stats
    return row


def score_writingbench(
    points: Sequence[Point], *, seed: int, n_bootstrap: int, ci_level: float
) -> dict[str, Any]:
    """One (model, judge)'s WritingBench row: scores on upstream's 1-10 scale, ``overall_x10`` as shown."""
    answers = group_answers(points)
    total = count = 0
    answer_scores: list[tuple[Mapping[str, Any], float]] = []
    per_question: dict[str, list[int]] = defaultdict(list)
    per_run: dict[int, list[int]] = defaultdict(list)
    requirement_c: dict[str, list[int]] = defaultdict(list)
    unscored_answers = unscored_items = 0
    for (uid, sample), items in answers.items():
        missing = _unscored(items)
        if missing:
            unscored_answers += 1
            unscored_items += missing
            continue
        scores = [int(p["detail"]["score"]) for p in items]
        total, count = total + sum(scores), count + len(scores)
        per_question[uid].extend(scores)
        per_run[sample].extend(scores)
        answer_scores.append((items[0]["detail"], sum(scores) / len(scores)))
        for point, criterion in zip(items, scores, strict=True):
            for dim in point["detail"].get("c", []):
                requirement_c[dim].append(criterion)
    row: dict[str, Any] = {
        "overall": total / count if count else None,
        "overall_x10": 10.0 * total / count if count else None,
        "ci_low": None,
        "ci_high": None,
        "n_scores": count,
        "n_answers": len(answer_scores),
        "n_questions": len({uid for uid, _ in answers}),
        "samples": len({sample for _, sample in answers}),
        "unscored_items": unscored_items,
        "unscored_answers": unscored_answers,
    }
    if per_question:
        scaled = {uid: [s / 10.0 for s in scores] for uid, scores in per_question.items()}
        uids = sorted(scaled)
        ci = win_rate_from_entries(
            [sum(scaled[u]) for u in uids],
            [len(scaled[u]) for u in uids],
            n_bootstrap=n_bootstrap,
            seed=seed,
            ci_level=ci_level,
        )
        row["ci_low"], row["ci_high"] = ci.ci_low / 10.0, ci.ci_high / 10.0
    row["across_runs"] = across_runs([sum(per_run[s]) / len(per_run[s]) for s in sorted(per_run)])
    for level in ("domain1", "domain2"):
        groups: dict[str, list[float]] = defaultdict(list)
        for facts, score in answer_scores:
            if isinstance(facts.get(level), str):
                groups[facts[level]].append(score)
        row[level] = {name: sum(v) / len(v) for name, v in sorted(groups.items())}
    requirements: dict[str, dict[str, Any]] = {}
    for dim in ("style", "format", "length"):
        involved = [score for facts, score in answer_scores if dim in facts.get("r", [])]
        named = requirement_c.get(dim, [])
        requirements[dim] = {
            "R": sum(involved) / len(involved) if involved else None,
            "C": sum(named) / len(named) if named else None,
            "n_R": len(involved),
            "n_C": len(named),
        }
    row["requirements"] = requirements
    return row


def _points_row(
    group: Sequence[Point],
    suite: RubricSuite,
    variant: str | None,
    seed: int,
    n_bootstrap: int,
    ci_level: float,
    length: LengthAdjustment | None,
) -> dict[str, Any]:
    chosen = suite.variant(variant)
    return {"variant": chosen} | score_healthbench(
        group,
        clip=chosen not in suite.unclipped_variants,
        seed=seed,
        n_bootstrap=n_bootstrap,
        ci_level=ci_level,
        length=length,
    )


def _criteria_row(
    group: Sequence[Point],
    suite: RubricSuite,
    variant: str | None,
    seed: int,
    n_bootstrap: int,
    ci_level: float,
    length: LengthAdjustment | None,
) -> dict[str, Any]:
    return score_writingbench(group, seed=seed, n_bootstrap=n_bootstrap, ci_level=ci_level)


_ROWS = {"points": _points_row, "criteria": _criteria_row}
"""A suite's grading -> how one (model, judge)'s row is made."""


def known_suite(name: object) -> RubricSuite:
    """The rubric suite ``name`` (run.json's ``bench_info["suite"]``), or a one-line error."""
    suite = rubric_suite(name)
    if suite is None:
        raise ValueError(f"no rubric scoring for {name!r}")
    return suite


def score_rubric_points(
    points: Iterable[Point],
    *,
    suite: str,
    variant: str | None,
    n_bootstrap: int,
    seed: int,
    ci_level: float,
    length: LengthAdjustment | None = None,
) -> list[dict[str, Any]]:
    """Rows per (model, judge), best headline first (the suite's ``headline_field``)."""
    described = known_suite(suite)
    groups: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for point in points:
        groups[(str(point["model"]), str(point.get("judge")))].append(point)
    rows = []
    make_row = _ROWS[described.grading]
    for (model, judge), group in groups.items():
        row: dict[str, Any] = {"model": model, "judge": judge, "suite": suite}
        row |= make_row(group, described, variant, seed, n_bootstrap, ci_level, length)
        rows.append(row)
    headline = described.headline_field
    rows.sort(key=lambda r: (r[headline] is None, -(r[headline] or 0.0), r["model"], r["judge"]))
    return rows


def _criteria_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    reqs = row["requirements"]
    return {
        "overall_avg": row["overall"],
        "n_queries": row["n_answers"],
        "domain1": row["domain1"],
        "domain2": row["domain2"],
        "requirement_R": {dim: value["R"] for dim, value in reqs.items()},
        "requirement_C": {dim: value["C"] for dim, value in reqs.items()},
    }


def _points_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    suite = known_suite(row["suite"])
    if row.get("variant") in suite.unclipped_variants:
        axes = {name: value["score"] for name, value in row["axes"].items()}
        return {"avg_score": row["score"], "axis_avg": axes, "n_examples": row["n_answers"]}
    metrics: dict[str, Any] = {}
    for name, value in row["metrics"].items():
        metrics[name] = value["score"]
        metrics[f"{name}:n_samples"] = value["n"]
        metrics[f"{name}:bootstrap_std"] = value["bootstrap_std"]
    return {"score": row["score"], "metrics": metrics}


_SUMMARIES = {"points": _points_summary, "criteria": _criteria_summary}


def reference_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row in the shape its reference reports (simple-evals' metrics, eval_framework's summary, or
    WritingBench's averages)."""
    return _SUMMARIES[known_suite(row["suite"]).grading](row)
