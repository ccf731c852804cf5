"""From outcomes to leaderboards: the one scoring layer behind ``jurist run`` and ``jurist show``.

The door (:func:`score_run_dir`) scores a run by its family (:mod:`jurist.scoring.family`: pairwise, judge
accuracy, rules, rubric, placement) as the run recorded, or as a :class:`ScoreRequest` asks; both commands
call it. Pairwise methods: the weighted win rate against the baseline (Arena-Hard v2's headline),
Bradley-Terry on the Elo scale with the win rate against the baseline it implies (Arena-Hard v0.1), style
control (BT with z-scored length/markdown features; Arena-Hard v2's ``-f``) and AlpacaEval's
length-controlled win rate. Scores can be split by category (each battle's baseline is whichever side is a
baseline, so each category keeps its own), shown per judge side by side, or pooled over judges as an
ensemble. Every score comes with the judges' position-swap sanity numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.scoring.anchor import (
        NOT_COMPARABLE,
        REPLACEMENT_SCHEMA,
        anchor_scores,
        read_replacement,
    )
    from jurist.scoring.arena_battles import (
        BATTLE_FILES,
        ELO_FILE,
        HARD_PREF,
        LABEL_GAP,
        REPORT_FIELDS,
        SOURCES,
        WINNERS,
        battle_from_dict,
        evaluated_name,
        find_battles,
        game_battle,
        is_arena_battles_file,
        judged_battles,
        read_battles,
        read_elo_report,
    )
    from jurist.scoring.battles import load_battles, read_battles_file, read_json
    from jurist.scoring.door import (
        FinishedRun,
        RecordedRun,
        RunEnd,
        ScoreFamily,
        ScoreRequest,
        Scores,
        score_family,
        score_run_dir,
        write_documents,
    )
    from jurist.scoring.family import (
        FAMILY_OF_METRIC,
        FamilyName,
        family_of_metrics,
        family_of_run,
        run_scoring_fields,
    )
    from jurist.scoring.judgebench import score_judgebench_run
    from jurist.scoring.lc import load_instruction_difficulty
    from jurist.scoring.options import STYLE_FEATURES, Method, Resample, Scored, ScoreOptions
    from jurist.scoring.paired import COMPARABLE_FAMILIES, Cells, RunOutcomes, read_outcomes
    from jurist.scoring.rubric import healthbench_metrics
    from jurist.scoring.rules import LABELS, METRICS
    from jurist.scoring.run import check_options, resolve_baselines, score_run, write_outputs
    from jurist.scoring.sanity import judge_sanity, sanity_warnings
    from jurist.scoring.winrate import ratings_document, win_rate_leaderboard

_HOMES = {
    "NOT_COMPARABLE": "anchor",
    "REPLACEMENT_SCHEMA": "anchor",
    "anchor_scores": "anchor",
    "read_replacement": "anchor",
    "BATTLE_FILES": "arena_battles",
    "ELO_FILE": "arena_battles",
    "HARD_PREF": "arena_battles",
    "LABEL_GAP": "arena_battles",
    "REPORT_FIELDS": "arena_battles",
    "SOURCES": "arena_battles",
    "WINNERS": "arena_battles",
    "battle_from_dict": "arena_battles",
    "evaluated_name": "arena_battles",
    "find_battles": "arena_battles",
    "game_battle": "arena_battles",
    "is_arena_battles_file": "arena_battles",
    "judged_battles": "arena_battles",
    "read_battles": "arena_battles",
    "read_elo_report": "arena_battles",
    "load_battles": "battles",
    "read_battles_file": "battles",
    "read_json": "battles",
    "FinishedRun": "door",
    "RecordedRun": "door",
    "RunEnd": "door",
    "ScoreFamily": "door",
    "ScoreRequest": "door",
    "Scores": "door",
    "score_family": "door",
    "score_run_dir": "door",
    "write_documents": "door",
    "FAMILY_OF_METRIC": "family",
    "FamilyName": "family",
    "family_of_metrics": "family",
    "family_of_run": "family",
    "run_scoring_fields": "family",
    "score_judgebench_run": "judgebench",
    "load_instruction_difficulty": "lc",
    "COMPARABLE_FAMILIES": "paired",
    "Cells": "paired",
    "RunOutcomes": "paired",
    "read_outcomes": "paired",
    "Method": "options",
    "Resample": "options",
    "STYLE_FEATURES": "options",
    "ScoreOptions": "options",
    "Scored": "options",
    "healthbench_metrics": "rubric",
    "LABELS": "rules",
    "METRICS": "rules",
    "check_options": "run",
    "resolve_baselines": "run",
    "score_run": "run",
    "write_outputs": "run",
    "judge_sanity": "sanity",
    "sanity_warnings": "sanity",
    "ratings_document": "winrate",
    "win_rate_leaderboard": "winrate",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "NOT_COMPARABLE",
    "REPLACEMENT_SCHEMA",
    "anchor_scores",
    "read_replacement",
    "COMPARABLE_FAMILIES",
    "Cells",
    "RunOutcomes",
    "read_outcomes",
    "BATTLE_FILES",
    "ELO_FILE",
    "FAMILY_OF_METRIC",
    "FamilyName",
    "FinishedRun",
    "HARD_PREF",
    "LABELS",
    "LABEL_GAP",
    "METRICS",
    "Method",
    "REPORT_FIELDS",
    "RecordedRun",
    "Resample",
    "RunEnd",
    "SOURCES",
    "STYLE_FEATURES",
    "ScoreFamily",
    "ScoreOptions",
    "ScoreRequest",
    "Scored",
    "Scores",
    "WINNERS",
    "battle_from_dict",
    "check_options",
    "evaluated_name",
    "family_of_metrics",
    "family_of_run",
    "find_battles",
    "healthbench_metrics",
    "game_battle",
    "is_arena_battles_file",
    "judge_sanity",
    "judged_battles",
    "load_battles",
    "load_instruction_difficulty",
    "ratings_document",
    "read_battles",
    "read_battles_file",
    "read_elo_report",
    "read_json",
    "resolve_baselines",
    "run_scoring_fields",
    "sanity_warnings",
    "score_family",
    "score_judgebench_run",
    "score_run",
    "score_run_dir",
    "win_rate_leaderboard",
    "write_documents",
    "write_outputs",
]
