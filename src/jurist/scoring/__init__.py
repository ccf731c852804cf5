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

from jurist.scoring.battles import load_battles, read_battles_file
from jurist.scoring.door import (
    FinishedRun,
    RecordedRun,
    RunEnd,
    ScoreFamily,
    ScoreRequest,
    Scores,
    family,
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
from jurist.scoring.lc import load_instruction_difficulty
from jurist.scoring.options import STYLE_FEATURES, Method, Resample, Scored, ScoreOptions
from jurist.scoring.run import check_options, resolve_baselines, score_run, write_outputs
from jurist.scoring.sanity import judge_sanity, sanity_warnings
from jurist.scoring.winrate import ratings_document, win_rate_leaderboard

__all__ = [
    "FAMILY_OF_METRIC",
    "STYLE_FEATURES",
    "FamilyName",
    "FinishedRun",
    "RecordedRun",
    "RunEnd",
    "ScoreFamily",
    "ScoreRequest",
    "Scores",
    "Method",
    "Resample",
    "ScoreOptions",
    "Scored",
    "check_options",
    "family",
    "family_of_metrics",
    "family_of_run",
    "judge_sanity",
    "load_battles",
    "load_instruction_difficulty",
    "ratings_document",
    "read_battles_file",
    "resolve_baselines",
    "run_scoring_fields",
    "sanity_warnings",
    "score_run",
    "score_run_dir",
    "win_rate_leaderboard",
    "write_documents",
    "write_outputs",
]
