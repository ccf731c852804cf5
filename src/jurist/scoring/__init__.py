"""From battles to leaderboards: the one scoring layer behind ``jurist run`` and ``jurist show``.

Methods: the weighted win rate against the baseline (Arena-Hard v2's headline), Bradley-Terry on the Elo
scale with the win rate against the baseline it implies (Arena-Hard v0.1), style control (BT with z-scored
length/markdown features; Arena-Hard v2's ``-f``) and AlpacaEval's length-controlled win rate. Scores can
be split by category (each battle's baseline is whichever side is a baseline, so each category keeps its
own), shown per judge side by side, or pooled over judges as an ensemble. Every score comes with the
judges' position-swap sanity numbers.
"""

from jurist.scoring.battles import load_battles, read_battles_file
from jurist.scoring.lc import load_instruction_difficulty
from jurist.scoring.options import STYLE_FEATURES, Method, Resample, Scored, ScoreOptions
from jurist.scoring.run import check_options, resolve_baselines, score_run, write_outputs
from jurist.scoring.sanity import judge_sanity, sanity_warnings
from jurist.scoring.winrate import ratings_document, win_rate_leaderboard

__all__ = [
    "STYLE_FEATURES",
    "Method",
    "Resample",
    "ScoreOptions",
    "Scored",
    "check_options",
    "judge_sanity",
    "load_battles",
    "load_instruction_difficulty",
    "ratings_document",
    "read_battles_file",
    "resolve_baselines",
    "sanity_warnings",
    "score_run",
    "win_rate_leaderboard",
    "write_outputs",
]
