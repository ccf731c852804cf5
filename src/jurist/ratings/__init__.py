"""Pure rating statistics: arrays in, numbers out (numpy/scipy only, seeded, BLAS pinned to one thread).

* ``paired``: paired differences of two runs (bootstrap, McNemar), Holm, minimum detectable difference.
* ``confseq``: anytime-valid confidence sequences for bounded means (adaptive evaluation).
* ``bt``: Bradley-Terry MLE on aggregated battles, Elo scale, multinomial/cluster bootstrap.
* ``style_control``: Arena-Hard v2 style-controlled win rates (BT + z-scored style features).
* ``lc_winrate``: AlpacaEval 2 win rate and length-controlled win rate.
* ``placement``: placing judged models among human-voted arena models (JudgeArena's method).
* ``probe_stats``: the judge card's intervals, gold agreement (JudgeBench's rule, kappa) and calibration.
* ``judge_quality``: position bias, swap consistency and JudgeBench's pair rule, for every caller.
* ``sanity``: those measures read from a run's battles (each judge's position-swap sanity row).
* ``battles``: the battle vocabulary every reader of battles shares (outcome values, the whole-run
  category key, four-decimal rounding).
* ``separation``: which models have no finite BT/style MLE (won or lost every game), per replicate too.
* ``winrate``: weighted win rate against one baseline with a question/entry bootstrap (and Arena-Hard
  v0.1's row bootstrap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.ratings.agreement import (
        agreement_rate,
        align_leaderboards,
        collapse_five_to_three,
        ensemble_mean,
        kappa_five,
        kappa_three,
        rank_correlation,
    )
    from jurist.ratings.battles import ALL, OUTCOME, Battle, Row, r
    from jurist.ratings.binomial import Alternative, binomial_p_value
    from jurist.ratings.bt import (
        BattleCells,
        BTResult,
        WinRateVsAnchor,
        aggregate_battles,
        bradley_terry,
        bt_mle,
        elo_win_probability,
        win_rate_vs_anchor,
    )
    from jurist.ratings.confseq import (
        SequenceInterval,
        confidence_sequence,
        difference_sequence,
        running_sequence,
    )
    from jurist.ratings.judge_quality import (
        first_position_rate,
        first_position_wins,
        game_points,
        pair_decision,
        pair_points,
        swap_agreements,
        swap_consistency,
    )
    from jurist.ratings.lc_winrate import (
        GamedRows,
        GLMWeights,
        LCWinRate,
        alpaca_preference_to_probability,
        estimate_instruction_difficulty,
        gamed_rows,
        length_controlled_win_rate,
        length_controlled_win_rates,
        win_rate,
    )
    from jurist.ratings.paired import (
        McNemar,
        PairedDifference,
        detectable,
        holm,
        mcnemar_exact,
        normal_p_value,
        paired_bootstrap,
    )
    from jurist.ratings.placement import (
        Placement,
        anchor_battles,
        calibrate_temperature,
        place_models,
        rank_by_ci,
        rank_by_rating,
        soft_preference,
    )
    from jurist.ratings.probe_stats import (
        Calibration,
        CalibrationInterval,
        GoldAgreement,
        ProbeInterval,
        calibration,
        calibration_interval,
        gold_agreement,
        mean_interval,
    )
    from jurist.ratings.repeated import across_runs
    from jurist.ratings.replacement import (
        Interval,
        LeaderboardFit,
        MonotoneMap,
        PanelScores,
        agreement_kappa,
        anchor_score,
        chose_longer,
        decisions,
        fit_leaderboard,
    )
    from jurist.ratings.sanity import judge_sanity, sanity_warnings
    from jurist.ratings.separation import Separation, runaway_models
    from jurist.ratings.style_control import (
        StyleControlResult,
        style_controlled_win_rates,
        style_features,
        zscore,
    )
    from jurist.ratings.winrate import WinRate, row_bootstrap_intervals, win_rate_from_entries

_HOMES = {
    "ALL": "battles",
    "OUTCOME": "battles",
    "Battle": "battles",
    "Row": "battles",
    "r": "battles",
    "judge_sanity": "sanity",
    "sanity_warnings": "sanity",
    "Interval": "replacement",
    "LeaderboardFit": "replacement",
    "MonotoneMap": "replacement",
    "PanelScores": "replacement",
    "agreement_kappa": "replacement",
    "anchor_score": "replacement",
    "chose_longer": "replacement",
    "decisions": "replacement",
    "fit_leaderboard": "replacement",
    "agreement_rate": "agreement",
    "align_leaderboards": "agreement",
    "collapse_five_to_three": "agreement",
    "ensemble_mean": "agreement",
    "kappa_five": "agreement",
    "kappa_three": "agreement",
    "rank_correlation": "agreement",
    "BTResult": "bt",
    "BattleCells": "bt",
    "WinRateVsAnchor": "bt",
    "aggregate_battles": "bt",
    "bradley_terry": "bt",
    "bt_mle": "bt",
    "elo_win_probability": "bt",
    "win_rate_vs_anchor": "bt",
    "GLMWeights": "lc_winrate",
    "GamedRows": "lc_winrate",
    "LCWinRate": "lc_winrate",
    "alpaca_preference_to_probability": "lc_winrate",
    "estimate_instruction_difficulty": "lc_winrate",
    "gamed_rows": "lc_winrate",
    "length_controlled_win_rate": "lc_winrate",
    "length_controlled_win_rates": "lc_winrate",
    "win_rate": "lc_winrate",
    "SequenceInterval": "confseq",
    "confidence_sequence": "confseq",
    "difference_sequence": "confseq",
    "running_sequence": "confseq",
    "McNemar": "paired",
    "PairedDifference": "paired",
    "detectable": "paired",
    "holm": "paired",
    "mcnemar_exact": "paired",
    "normal_p_value": "paired",
    "paired_bootstrap": "paired",
    "Placement": "placement",
    "anchor_battles": "placement",
    "calibrate_temperature": "placement",
    "place_models": "placement",
    "rank_by_ci": "placement",
    "rank_by_rating": "placement",
    "soft_preference": "placement",
    "Alternative": "binomial",
    "binomial_p_value": "binomial",
    "first_position_rate": "judge_quality",
    "first_position_wins": "judge_quality",
    "game_points": "judge_quality",
    "pair_decision": "judge_quality",
    "pair_points": "judge_quality",
    "swap_agreements": "judge_quality",
    "swap_consistency": "judge_quality",
    "Calibration": "probe_stats",
    "CalibrationInterval": "probe_stats",
    "GoldAgreement": "probe_stats",
    "ProbeInterval": "probe_stats",
    "calibration": "probe_stats",
    "calibration_interval": "probe_stats",
    "gold_agreement": "probe_stats",
    "mean_interval": "probe_stats",
    "across_runs": "repeated",
    "Separation": "separation",
    "runaway_models": "separation",
    "StyleControlResult": "style_control",
    "style_controlled_win_rates": "style_control",
    "style_features": "style_control",
    "zscore": "style_control",
    "WinRate": "winrate",
    "row_bootstrap_intervals": "winrate",
    "win_rate_from_entries": "winrate",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "ALL",
    "OUTCOME",
    "Battle",
    "Row",
    "r",
    "judge_sanity",
    "sanity_warnings",
    "Interval",
    "LeaderboardFit",
    "MonotoneMap",
    "PanelScores",
    "agreement_kappa",
    "anchor_score",
    "chose_longer",
    "decisions",
    "fit_leaderboard",
    "McNemar",
    "PairedDifference",
    "SequenceInterval",
    "confidence_sequence",
    "detectable",
    "difference_sequence",
    "holm",
    "mcnemar_exact",
    "normal_p_value",
    "paired_bootstrap",
    "running_sequence",
    "Alternative",
    "binomial_p_value",
    "BTResult",
    "BattleCells",
    "Calibration",
    "CalibrationInterval",
    "GLMWeights",
    "GamedRows",
    "GoldAgreement",
    "LCWinRate",
    "Placement",
    "ProbeInterval",
    "Separation",
    "StyleControlResult",
    "WinRate",
    "WinRateVsAnchor",
    "across_runs",
    "aggregate_battles",
    "agreement_rate",
    "align_leaderboards",
    "alpaca_preference_to_probability",
    "anchor_battles",
    "bradley_terry",
    "bt_mle",
    "calibrate_temperature",
    "calibration",
    "calibration_interval",
    "collapse_five_to_three",
    "elo_win_probability",
    "ensemble_mean",
    "estimate_instruction_difficulty",
    "first_position_rate",
    "first_position_wins",
    "game_points",
    "gamed_rows",
    "gold_agreement",
    "kappa_five",
    "kappa_three",
    "length_controlled_win_rate",
    "length_controlled_win_rates",
    "mean_interval",
    "pair_decision",
    "pair_points",
    "place_models",
    "rank_by_ci",
    "rank_by_rating",
    "rank_correlation",
    "row_bootstrap_intervals",
    "runaway_models",
    "soft_preference",
    "style_controlled_win_rates",
    "style_features",
    "swap_agreements",
    "swap_consistency",
    "win_rate",
    "win_rate_from_entries",
    "win_rate_vs_anchor",
    "zscore",
]
