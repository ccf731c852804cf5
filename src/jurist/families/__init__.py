"""What varies by scoring family, in one place: a subpackage per family (``pairwise``, ``rubric``, ``rules``,
``placement``, ``judge_accuracy``), each behind one protocol (:class:`Family`: outcomes, score, documents,
its terminal tables, browser summary, ``--tasks`` headline and paired statistic), and the shared door at the
top: run.json names the family (:mod:`jurist.families.registry`), and ``jurist run``, ``show``, ``view``,
``--tasks``, sweeps and ``compare`` call the family through :func:`score_run_dir`, :func:`print_scores`,
:func:`score_family` and :func:`read_outcomes`, ``jurist serve reward`` through :func:`family_reward`.
Nothing outside this package switches on a family's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.families.door import (
        Family,
        FinishedRun,
        Headline,
        RecordedRun,
        RunEnd,
        ScoreRequest,
        Scores,
        SummaryBoard,
        score_run_dir,
        write_documents,
    )
    from jurist.families.judge_accuracy.family import (
        score_judgebench_run,
    )
    from jurist.families.paired import (
        Cells,
        PairedCells,
        RunOutcomes,
        read_outcomes,
    )
    from jurist.families.pairwise.anchor import (
        NOT_COMPARABLE,
        REPLACEMENT_SCHEMA,
        read_replacement,
    )
    from jurist.families.pairwise.battles import (
        load_battles,
        read_battles_file,
        read_json,
    )
    from jurist.families.pairwise.lc import (
        load_instruction_difficulty,
    )
    from jurist.families.pairwise.options import (
        STYLE_FEATURES,
        Method,
        Resample,
        Scored,
        ScoreOptions,
    )
    from jurist.families.pairwise.reward import (
        baseline_first_game,
        candidate_first_game,
    )
    from jurist.families.pairwise.run import (
        check_options,
        resolve_baselines,
        score_run,
        write_outputs,
    )
    from jurist.families.pairwise.show import (
        print_scored,
    )
    from jurist.families.pairwise.winrate import (
        ratings_document,
        win_rate_leaderboard,
    )
    from jurist.families.placement.arena_battles import (
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
    from jurist.families.printing import (
        print_scores,
    )
    from jurist.families.registry import (
        FAMILY_OF_METRIC,
        FamilyName,
        family_names,
        family_of_metrics,
        family_of_run,
        register,
        run_scoring_fields,
        score_family,
        scoring_modules,
        unregister,
    )
    from jurist.families.reward import (
        AnswerReward,
        RewardOptions,
        RewardRule,
        family_reward,
    )
    from jurist.families.rubric.answer import answer_score
    from jurist.families.rubric.score import healthbench_metrics
    from jurist.families.rules.score import (
        LABELS,
        METRICS,
    )

_HOMES = {
    "Family": "door",
    "FinishedRun": "door",
    "Headline": "door",
    "SummaryBoard": "door",
    "RecordedRun": "door",
    "RunEnd": "door",
    "ScoreRequest": "door",
    "Scores": "door",
    "score_run_dir": "door",
    "write_documents": "door",
    "score_judgebench_run": "judge_accuracy.family",
    "Cells": "paired",
    "PairedCells": "paired",
    "RunOutcomes": "paired",
    "read_outcomes": "paired",
    "NOT_COMPARABLE": "pairwise.anchor",
    "REPLACEMENT_SCHEMA": "pairwise.anchor",
    "read_replacement": "pairwise.anchor",
    "load_battles": "pairwise.battles",
    "read_battles_file": "pairwise.battles",
    "read_json": "pairwise.battles",
    "load_instruction_difficulty": "pairwise.lc",
    "Method": "pairwise.options",
    "Resample": "pairwise.options",
    "STYLE_FEATURES": "pairwise.options",
    "ScoreOptions": "pairwise.options",
    "Scored": "pairwise.options",
    "check_options": "pairwise.run",
    "resolve_baselines": "pairwise.run",
    "score_run": "pairwise.run",
    "write_outputs": "pairwise.run",
    "baseline_first_game": "pairwise.reward",
    "candidate_first_game": "pairwise.reward",
    "print_scored": "pairwise.show",
    "ratings_document": "pairwise.winrate",
    "win_rate_leaderboard": "pairwise.winrate",
    "BATTLE_FILES": "placement.arena_battles",
    "ELO_FILE": "placement.arena_battles",
    "HARD_PREF": "placement.arena_battles",
    "LABEL_GAP": "placement.arena_battles",
    "REPORT_FIELDS": "placement.arena_battles",
    "SOURCES": "placement.arena_battles",
    "WINNERS": "placement.arena_battles",
    "battle_from_dict": "placement.arena_battles",
    "evaluated_name": "placement.arena_battles",
    "find_battles": "placement.arena_battles",
    "game_battle": "placement.arena_battles",
    "is_arena_battles_file": "placement.arena_battles",
    "judged_battles": "placement.arena_battles",
    "read_battles": "placement.arena_battles",
    "read_elo_report": "placement.arena_battles",
    "print_scores": "printing",
    "FAMILY_OF_METRIC": "registry",
    "FamilyName": "registry",
    "family_names": "registry",
    "family_of_metrics": "registry",
    "family_of_run": "registry",
    "register": "registry",
    "run_scoring_fields": "registry",
    "score_family": "registry",
    "scoring_modules": "registry",
    "unregister": "registry",
    "AnswerReward": "reward",
    "RewardOptions": "reward",
    "RewardRule": "reward",
    "family_reward": "reward",
    "answer_score": "rubric.answer",
    "healthbench_metrics": "rubric.score",
    "LABELS": "rules.score",
    "METRICS": "rules.score",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "AnswerReward",
    "BATTLE_FILES",
    "Cells",
    "ELO_FILE",
    "FAMILY_OF_METRIC",
    "Family",
    "FamilyName",
    "FinishedRun",
    "HARD_PREF",
    "Headline",
    "SummaryBoard",
    "LABELS",
    "LABEL_GAP",
    "METRICS",
    "Method",
    "NOT_COMPARABLE",
    "PairedCells",
    "REPLACEMENT_SCHEMA",
    "REPORT_FIELDS",
    "RecordedRun",
    "Resample",
    "RunEnd",
    "RunOutcomes",
    "SOURCES",
    "STYLE_FEATURES",
    "RewardOptions",
    "RewardRule",
    "ScoreOptions",
    "ScoreRequest",
    "Scored",
    "Scores",
    "WINNERS",
    "answer_score",
    "baseline_first_game",
    "battle_from_dict",
    "candidate_first_game",
    "check_options",
    "evaluated_name",
    "family_reward",
    "family_names",
    "family_of_metrics",
    "family_of_run",
    "find_battles",
    "game_battle",
    "healthbench_metrics",
    "is_arena_battles_file",
    "judged_battles",
    "load_battles",
    "load_instruction_difficulty",
    "print_scored",
    "print_scores",
    "ratings_document",
    "read_battles",
    "read_battles_file",
    "read_elo_report",
    "read_json",
    "read_outcomes",
    "read_replacement",
    "register",
    "resolve_baselines",
    "run_scoring_fields",
    "score_family",
    "score_judgebench_run",
    "score_run",
    "score_run_dir",
    "scoring_modules",
    "unregister",
    "win_rate_leaderboard",
    "write_documents",
    "write_outputs",
]
