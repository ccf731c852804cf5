"""Scoring a run directory's battles: options, baselines, judges, categories and invalid counts around the
methods.

:func:`score_battles` is what the pairwise family (:mod:`jurist.families.pairwise.family`) scores with, for
``jurist run`` and ``jurist show`` alike; :func:`score_run` scores with exactly the options given (no run
default applies), for programs and tests.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError, did_you_mean, unknown_value
from jurist.families.pairwise.battles import invalid_counts, load_battles, read_json
from jurist.families.pairwise.bt import StyleCache, bt_rows, style_rows
from jurist.families.pairwise.common import per_judge
from jurist.families.pairwise.lc import alpaca_lc_inputs, lc_intervals, lc_rows, load_instruction_difficulty
from jurist.families.pairwise.options import STYLE_FEATURES, Scored, ScoreOptions, Settings
from jurist.families.pairwise.tokens import TokenLengths, add_avg_tokens
from jurist.families.pairwise.winrate import ratings_document, win_rate_leaderboard
from jurist.ratings import ALL, Battle, Row, judge_sanity

if TYPE_CHECKING:
    from jurist.store import AnswerIndex, RunDir

InvalidCounts = dict[tuple[str, str, str], int]
"""Questions left out for invalid verdicts, per (judge, model, category or ``ALL``)."""


def score_run(
    root: Path,
    opts: ScoreOptions,
    *,
    invalid: InvalidCounts | None = None,
    answers: Mapping[str, AnswerIndex] | None = None,
) -> Scored:
    """Score a run directory's battles exactly as ``opts`` says (no run default applies: that is
    :func:`jurist.families.door.score_run_dir`'s); pure reading, no writes.

    ``invalid`` overrides the invalid-question counts otherwise read from run.json or leaderboard.json
    (``jurist run`` knows them before it has written either); ``answers``: the run's own answer indexes,
    whose stored token lengths spare reading the answer files again.
    """
    from jurist.store import RunDir

    run = RunDir(root)
    if not run.root.is_dir():
        raise JuristError(f"{root}: no such run directory")
    check_options(opts)
    battles, source = load_battles(run)
    if not battles:
        raise JuristError(f"{root}: the run has no battles to score (from {source})")
    run_json = read_json(run.run_json) or {}
    counts = invalid_counts(run, run_json) if invalid is None else invalid
    return score_battles(run, battles, source, opts, run_json, invalid=counts, answers=answers)


def score_battles(
    run: RunDir,
    battles: list[Battle],
    source: str,
    opts: ScoreOptions,
    run_json: Mapping[str, Any],
    *,
    invalid: InvalidCounts,
    answers: Mapping[str, AnswerIndex] | None = None,
) -> Scored:
    """Score ``battles`` (read from ``source`` of the run directory ``run``) as ``opts`` says."""
    check_options(opts)
    settings = _settings(opts, run_json)
    battles, counts, chosen = _keep_judges(battles, invalid, opts)
    sanity = judge_sanity(_in_categories(battles, opts.categories))
    if opts.ensemble and len(chosen) > 1:
        battles, counts = _pool(battles, counts, "+".join(chosen))
    baselines = resolve_baselines(opts, run_json, battles)
    notes: list[str] = []
    if source == "judgments":
        notes.append("battles rebuilt from the judgments (the run has no battles.jsonl)")
    if not baselines:
        notes.append("no baseline (no model plays in every battle): the ratings' mean is 1000, as arenas do")
    if not opts.categories:
        _note_pooled_baselines(battles, baselines, notes)
    rows: list[Row] = []
    warnings: list[str] = []
    lengths = TokenLengths(run, notes, answers)
    for category, subset in _by_category(battles, opts.categories):
        known = _invalid_for(counts, category)
        styled = _styled(opts, subset, notes)
        part = _score_subset(subset, baselines, run, styled, settings, known or {}, notes, warnings)
        add_avg_tokens(part, subset, lengths)
        for row in part:
            if category is not None:
                row["category"] = category
            if known is None:
                row["invalid"] = None  # only known for the whole run
        rows.extend(part)
    if settings.n_bootstrap == 0 and not opts.length_controlled:
        _drop_intervals(rows)
    battles = _in_categories(battles, opts.categories)
    described = _describe(opts, settings, baselines)
    if any("lc_estimate" in row for row in rows):
        described["lc_difficulty"] = "estimated"  # the headline is the win rate (see scoring.lc)
    return Scored(rows, notes, described, battles, sanity, warnings)


def _styled(opts: ScoreOptions, battles: list[Battle], notes: list[str]) -> ScoreOptions:
    """``opts`` for one score: style control only where ``style_categories`` allows it (every battle of
    the score in one of them); the others are the plain weighted win rate, and a note says so."""
    if not opts.style_control or not opts.style_categories:
        return opts
    present = sorted({str(b.get("category", "default")) for b in battles})
    if set(present) <= set(opts.style_categories):
        return opts
    notes.append(
        f"{', '.join(present)}: weighted win rate without style control (the benchmark style-controls "
        f"{', '.join(opts.style_categories)} only)"
    )
    return dataclasses.replace(opts, style_control=())


_INTERVALS = ("ci_low", "ci_high", "winrate_ci_low", "winrate_ci_high")


def _drop_intervals(rows: list[Row]) -> None:
    """Without bootstrap rounds there is no interval: the methods return the point estimate as both ends,
    which would print as a spurious ``(-0.0 / +0.0)``; None says "no CI" (LC's come from its standard error
    and are kept)."""
    for row in rows:
        for key in _INTERVALS:
            if key in row:
                row[key] = None


def ratings_file(scored: Scored) -> dict[str, Any]:
    """ratings.json: the settings, per-model numbers (every row field kept), the judges' sanity, and the
    warnings printed under the table (only when there are any: a near-separated fit, a degenerate judge)."""
    from jurist.ratings import sanity_warnings

    settings = scored.settings
    fixed = ("method", "seed", "bootstrap_rounds", "ci_level")
    document = ratings_document(
        scored.rows,
        method=settings["method"],
        seed=settings["seed"],
        n_bootstrap=settings["bootstrap_rounds"],
        ci_level=settings["ci_level"],
        battles=scored.battles,
        extra={**{k: v for k, v in settings.items() if k not in fixed}, "judge_sanity": scored.sanity},
    )
    for entry, row in zip(document["models"], scored.rows, strict=True):
        for key, value in row.items():
            entry.setdefault(key, value)
    warnings = [*sanity_warnings(scored.sanity), *scored.warnings]
    if warnings:
        document["warnings"] = warnings
    return document


def write_outputs(root: Path, scored: Scored) -> None:
    """ratings.json (settings, per-model numbers, judge sanity) and leaderboard.json (the rows)."""
    from jurist.store import RunDir, write_json_atomic

    run = RunDir(root)
    write_json_atomic(run.root / "ratings.json", ratings_file(scored))
    write_json_atomic(run.leaderboard, scored.rows)


def check_options(opts: ScoreOptions) -> None:
    """Reject option combinations that have no meaning, naming the command-line flag."""
    if opts.method not in ("winrate", "bt"):
        raise unknown_value("--method", str(opts.method), ("winrate", "bt"))
    if opts.resample not in ("questions", "entries"):
        raise unknown_value("--resample", str(opts.resample), ("questions", "entries"))
    unknown = set(opts.style_control) - set(STYLE_FEATURES)
    if unknown:
        hint = did_you_mean(sorted(unknown)[0], STYLE_FEATURES)
        raise JuristError(
            f"--style-control: unknown feature(s) {sorted(unknown)}{hint}; choose length, markdown"
        )
    if opts.length_controlled and (opts.style_control or opts.method != "winrate"):
        raise JuristError(
            "--length-controlled is a win rate; it cannot be combined with --method bt or style control"
        )
    if opts.resample == "entries" and opts.method == "winrate" and not opts.style_control:
        raise JuristError("--resample entries applies to --method bt and --style-control")
    if opts.ci_level is not None and not 0.0 < opts.ci_level < 1.0:
        raise JuristError(f"--ci: {opts.ci_level} is not in (0, 1)")


def _settings(opts: ScoreOptions, run_json: Mapping[str, Any]) -> Settings:
    scoring = run_json.get("scoring") or {}
    return Settings(
        n_bootstrap=opts.n_bootstrap if opts.n_bootstrap is not None else int(scoring.get("bootstrap", 100)),
        seed=opts.seed if opts.seed is not None else int(scoring.get("seed", 0)),
        ci_level=opts.ci_level if opts.ci_level is not None else float(scoring.get("ci_level", 0.90)),
    )


def _infer_baselines(battles: list[Battle]) -> list[str]:
    """Per category, the model that plays in every battle (a star design's centre)."""
    common: dict[str, set[str]] = {}
    for battle in battles:
        pair = {battle["model_a"], battle["model_b"]}
        category = battle.get("category", "")
        common[category] = common[category] & pair if category in common else pair
    return sorted({name for names in common.values() if len(names) == 1 for name in names})


def resolve_baselines(opts: ScoreOptions, run_json: Mapping[str, Any], battles: list[Battle]) -> list[str]:
    """``--baseline``, else run.json's baselines, else inferred from the battles."""
    if opts.baselines:
        return list(opts.baselines)
    listed = run_json.get("baselines")
    if isinstance(listed, list) and listed:
        return [str(name) for name in listed]
    if isinstance(run_json.get("baseline"), str):
        return [run_json["baseline"]]
    inferred = _infer_baselines(battles)
    if not inferred and battles and opts.method == "bt" and not opts.style_control:
        return []  # every model meets several others (an arena export): BT anchors at the models' mean
    if not inferred:
        raise JuristError(
            "cannot tell which model is the baseline (no model plays in every battle): pass --baseline, "
            "or --method bt to rate every model together (their mean at 1000)"
        )
    return inferred


def _keep_judges(
    battles: list[Battle], invalid: InvalidCounts, opts: ScoreOptions
) -> tuple[list[Battle], InvalidCounts, list[str]]:
    """The chosen judges' battles and invalid counts, and the judges chosen (``--judge``, else all).

    A judge whose every verdict was invalid has no battles but still counts: its rows say so.
    """
    available = sorted({b.get("judge", "") for b in battles} | {key[0] for key, n in invalid.items() if n})
    chosen = list(opts.judges) or available
    unknown = [j for j in chosen if j not in available]
    if unknown:
        raise JuristError(f"--judge: no battles for {', '.join(unknown)} (judges: {', '.join(available)})")
    keep = set(chosen)
    battles = [b for b in battles if b.get("judge", "") in keep]
    return battles, {key: n for key, n in invalid.items() if key[0] in keep}, chosen


def _pool(battles: list[Battle], invalid: InvalidCounts, name: str) -> tuple[list[Battle], InvalidCounts]:
    """``--ensemble``: relabel the judges' battles and invalid counts as one pooled judge."""
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


def _note_pooled_baselines(battles: list[Battle], baselines: list[str], notes: list[str]) -> None:
    """Say so when one score mixes several baselines (e.g. Arena-Hard v2's two categories)."""
    names = set(baselines)
    used = {b["model_a"] for b in battles if b["model_a"] in names}
    used |= {b["model_b"] for b in battles if b["model_b"] in names}
    if len(used) > 1:
        notes.append(
            f"these battles have {len(used)} baselines ({', '.join(sorted(used))}); each score pools "
            "them: use --category to score each category against its own"
        )


def _in_categories(battles: list[Battle], categories: tuple[str, ...]) -> list[Battle]:
    """The battles of the chosen categories (all battles when none is chosen)."""
    if not categories:
        return battles
    chosen = set(categories)
    return [b for b in battles if b.get("category", "default") in chosen]


def _by_category(battles: list[Battle], categories: tuple[str, ...]) -> list[tuple[str | None, list[Battle]]]:
    if not categories:
        return [(None, battles)]
    groups: dict[str, list[Battle]] = defaultdict(list)
    for battle in battles:
        groups[battle.get("category", "default")].append(battle)
    missing = [c for c in categories if c not in groups]
    if missing:
        raise JuristError(
            f"--category: no battles in {', '.join(missing)} (categories: {', '.join(sorted(groups))})"
        )
    return [(c, groups[c]) for c in dict.fromkeys(categories)]


def _describe(opts: ScoreOptions, settings: Settings, baselines: list[str]) -> dict[str, Any]:
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
    if opts.style_control and opts.style_categories:
        described["style_categories"] = list(opts.style_categories)
    if opts.categories:
        described["categories"] = list(opts.categories)
    if opts.ensemble:
        described["ensemble"] = True
    return described


def _as_plain_scoring(
    rows: list[Row], battles: list[Battle], baselines: list[str], settings: Settings
) -> None:
    """LC rows whose headline is the plain win rate (LC only estimated) carry the interval the plain
    scoring gives it (the question bootstrap), so a win rate's interval does not change when
    ``--length-controlled`` is added; the baseline's row its n as every table counts it."""
    plain = {
        (row.get("judge", ""), row["model"]): row
        for row in win_rate_leaderboard(
            battles, set(baselines), n_bootstrap=settings.n_bootstrap, seed=settings.seed,
            ci_level=settings.ci_level,
        )
    }  # fmt: skip
    for row in rows:
        same = plain.get((row.get("judge", ""), row["model"]))
        if same is None:
            continue
        if row.get("baseline"):
            row["n"] = same["n"]
        elif "lc_estimate" in row and same["score"] is not None:
            row["ci_low"], row["ci_high"] = same["ci_low"], same["ci_high"]


def _score_subset(
    battles: list[Battle],
    baselines: list[str],
    run: RunDir,
    opts: ScoreOptions,
    settings: Settings,
    invalid: dict[tuple[str, str], int],
    notes: list[str],
    warnings: list[str],
) -> list[Row]:
    if opts.length_controlled:
        difficulty = (
            load_instruction_difficulty(opts.instruction_difficulty) if opts.instruction_difficulty else None
        )
        official, fallback = alpaca_lc_inputs(run) if difficulty is None else (None, None)
        if fallback is not None and fallback not in warnings:
            warnings.append(fallback)
        rows = per_judge(battles, lambda sub: lc_rows(sub, baselines, run, notes, difficulty, official))
        lc_intervals(rows, settings.ci_level)
        _as_plain_scoring(rows, battles, baselines, settings)
    elif opts.style_control:
        styles = StyleCache(run, notes)
        rows = per_judge(
            battles, lambda sub: style_rows(sub, baselines, styles, opts, settings, notes, warnings)
        )
    elif opts.method == "bt":
        rows = per_judge(battles, lambda sub: bt_rows(sub, baselines, opts, settings, warnings))
    else:
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
