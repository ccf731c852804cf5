"""Judge sanity (position consistency, ties, first-position wins, verdict spread) on hand-built battles."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jurist.families import ScoreOptions, score_run, write_outputs
from jurist.ratings import judge_sanity, sanity_warnings

Verdict = tuple[str, int]  # (winner as model_a|model_b|tie, weight)


def games(
    judge: str, first: Verdict, second: Verdict, *, n: int = 20, model: str = "m", base: str = "base"
) -> list[dict[str, Any]]:
    """``n`` questions judged twice: first with ``model`` shown as A, then swapped (``base`` as A)."""
    battles = []
    for q in range(n):
        for (a, b), (winner, weight) in (((model, base), first), ((base, model), second)):
            battles.append(
                {
                    "model_a": a,
                    "model_b": b,
                    "winner": winner,
                    "weight": weight,
                    "uid": f"q{q}",
                    "category": "c",
                    "judge": judge,
                }
            )
    return battles


def only(rows: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(rows) == 1
    return rows[0]


def test_a_consistent_judge_agrees_with_itself_and_gets_no_warning() -> None:
    # m wins both games: as A in the first, as B in the second.
    row = only(judge_sanity(games("fair", ("model_a", 1), ("model_b", 1))))
    assert row["consistency"] == 1.0
    assert (row["tie_rate"], row["first_position_rate"]) == (0.0, 0.5)
    assert (row["n_questions"], row["n_games"], row["note"]) == (20, 40, None)
    assert (row["label"], row["label_share"]) == ("A>B", 0.5)  # A>B and B>A tie: the first label listed
    assert sanity_warnings([row]) == []


def test_an_always_a_judge_is_inconsistent_position_biased_and_flagged() -> None:
    row = only(judge_sanity(games("lazy", ("model_a", 1), ("model_a", 1))))
    assert row["consistency"] == 0.0  # m wins the first game, base the swapped one
    assert row["first_position_rate"] == 1.0
    assert (row["label"], row["label_share"]) == ("A>B", 1.0)
    warnings = sanity_warnings([row])
    assert len(warnings) == 3
    assert any("prefers position A in 100% of decisive games" in w and "position bias" in w for w in warnings)
    assert any("only 0% of questions" in w for w in warnings)
    assert all(w.startswith("judge lazy ") for w in warnings)


def test_an_always_b_judge_is_flagged_as_preferring_b() -> None:
    row = only(judge_sanity(games("b", ("model_b", 1), ("model_b", 1))))
    assert row["first_position_rate"] == 0.0
    assert any("prefers position B in 100%" in w for w in sanity_warnings([row]))


def test_ties_count_as_agreement_and_leave_position_undefined() -> None:
    row = only(judge_sanity(games("meh", ("tie", 1), ("tie", 1))))
    assert (row["consistency"], row["tie_rate"], row["first_position_rate"]) == (1.0, 1.0, None)
    assert (row["label"], row["label_share"], row["n_decisive"]) == ("A=B", 1.0, 0)
    assert [w for w in sanity_warnings([row]) if "A=B in 100% of games" in w]


def test_strong_verdicts_are_their_own_labels_but_agree_on_the_three_way_scale() -> None:
    # Strong for m as A, weak for m as B: consistent (m wins both), two labels of 50% each.
    row = only(judge_sanity(games("strong", ("model_a", 3), ("model_b", 1))))
    assert row["consistency"] == 1.0
    assert (row["label"], row["label_share"]) == ("A>>B", 0.5)
    mixed = games("mixed", ("model_b", 3), ("model_a", 3), n=10) + games(
        "mixed", ("tie", 1), ("model_a", 1), n=10
    )
    for k, battle in enumerate(mixed):
        battle["uid"] = f"q{k // 2}"
    row = only(judge_sanity(mixed))
    assert row["consistency"] == 0.5  # base wins both (strongly) in 10; a tie against a base win in 10
    assert (row["label"], row["label_share"]) == ("A>>B", 0.25)  # the first listed among equal shares
    assert row["tie_rate"] == 0.25 and row["first_position_rate"] == pytest.approx(20 / 30, abs=1e-4)


def test_judges_samples_and_a_missing_game_are_kept_apart() -> None:
    battles = games("j1", ("model_a", 1), ("model_b", 1), n=4) + games("j2", ("tie", 1), ("tie", 1), n=4)
    for battle in games("j1", ("model_a", 1), ("model_a", 1), n=4):  # j1 again, as a second sample
        battles.append({**battle, "sample": 1})
    battles.append({**battles[0], "uid": "lonely"})  # one game without its swapped partner
    rows = judge_sanity(battles)
    assert [r["judge"] for r in rows] == ["j1", "j2"]
    assert (rows[0]["n_questions"], rows[0]["n_games"], rows[0]["consistency"]) == (8, 17, 0.5)
    assert sanity_warnings(rows) == []  # too few games to tell bias from chance


def test_soft_preferences_are_skipped_with_a_note_not_a_crash() -> None:
    from jurist.interop.alpaca_eval import battles_from_preference

    judgments = [
        {"uid": f"q{q}", "judge": "alpaca", "model": "m", "baseline": "base", "p_model": p}
        for q, p in enumerate([0.2, 0.7, 1.0, 0.0, 0.5] * 6)
    ]
    battles = [b for j in judgments for b in battles_from_preference(j)]
    battles += games("fair", ("model_a", 1), ("model_b", 1))
    soft, fair = judge_sanity(battles)
    assert soft["judge"] == "alpaca" and "fractional weights" in soft["note"]
    assert soft["consistency"] is soft["first_position_rate"] is soft["label_share"] is None
    assert fair["consistency"] == 1.0
    one_game = [b for b in battles if b["judge"] == "fair" and b["model_a"] == "m"]
    assert "one game per question" in only(judge_sanity(one_game))["note"]
    same_order = games("x", ("model_a", 1), ("model_a", 1))
    for battle in same_order:
        battle["model_a"], battle["model_b"] = "m", "base"
    assert "not pairs of position-swapped games" in only(judge_sanity(same_order))["note"]
    assert sanity_warnings(judge_sanity(battles + same_order)) == []


def _run(root: Path) -> Path:
    battles = games("lazy", ("model_a", 1), ("model_a", 1)) + games("fair", ("model_a", 1), ("model_b", 1))
    root.mkdir(parents=True)
    (root / "battles.jsonl").write_text("".join(json.dumps(b) + "\n" for b in battles))
    (root / "run.json").write_text(json.dumps({"baseline": "base", "score_family": "pairwise"}))
    return root


def test_scored_runs_carry_the_sanity_rows_into_ratings_json(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    scored = score_run(run, ScoreOptions(n_bootstrap=0))
    assert [r["judge"] for r in scored.sanity] == ["fair", "lazy"]
    pooled = score_run(run, ScoreOptions(n_bootstrap=0, ensemble=True))
    assert pooled.sanity == scored.sanity  # each judge's own games, not the pool's
    write_outputs(run, scored)
    ratings = json.loads((run / "ratings.json").read_text())
    assert ratings["judge_sanity"] == scored.sanity


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_show_prints_the_sanity_block_under_the_table_and_keeps_json_stdout_clean(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    table = jurist("show", str(run), "--bootstrap", "0", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert table.stdout.index("judge sanity") > table.stdout.index("jurist: run (weighted win rate)")
    assert "warning: judge lazy prefers position A in 100% of decisive games" in table.stdout
    assert "judge fair" not in table.stdout
    as_json = jurist("show", str(run), "--bootstrap", "0", "--format", "json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == score_run(run, ScoreOptions(n_bootstrap=0)).rows
    assert "warning: judge lazy prefers position A" in as_json.stderr


def test_position_bias_warns_when_beyond_chance_not_by_a_fixed_count() -> None:
    """The embedded 135M judge: 15 of 16 decisive games for position A warns; 4 of 5 does not."""

    def row(first: float, decisive: int) -> dict[str, Any]:
        return {
            "judge": "j",
            "consistency": 0.9,
            "tie_rate": 0.5,
            "first_position_rate": first,
            "n_decisive": decisive,
            "label": "A=B",
            "label_share": 0.5,
            "n_questions": 24,
            "n_games": 48,
        }

    assert any("position A in 94%" in w for w in sanity_warnings([row(15 / 16, 16)]))
    assert sanity_warnings([row(4 / 5, 5)]) == []
    assert sanity_warnings([row(0.85, 400)])  # and a milder bias over many games


def test_a_small_always_a_judge_is_flagged_by_its_sample_size_not_passed_over() -> None:
    """Issue 27: 10 decisive games all for position A is beyond chance (binomial p = 0.002) although under
    the old fixed 20-game floor; 4 of 4 is said with its p-value; 2 of 2 says nothing."""
    ten = sanity_warnings(judge_sanity(games("lazy", ("model_a", 1), ("model_a", 1), n=5)))
    assert any("prefers position A in 100% of decisive games" in w for w in ten)
    four = sanity_warnings(judge_sanity(games("lazy", ("model_a", 1), ("model_a", 1), n=2)))
    (line,) = four
    assert "position A in all 4 decisive games" in line and "too few games" in line and "p = 0.12" in line
    assert sanity_warnings(judge_sanity(games("lazy", ("model_a", 1), ("model_a", 1), n=1))) == []
    # consistency and a dominant label are tested against their thresholds the same way
    row = {**only(judge_sanity(games("fair", ("model_a", 1), ("model_b", 1)))), "n_questions": 12}
    assert sanity_warnings([{**row, "consistency": 1 / 12}])  # 1 of 12 agree: one-sided p = 0.003
    assert not sanity_warnings([{**row, "consistency": 0.25}])  # 3 of 12: p = 0.07, a coin could do it


def test_a_zero_width_interval_says_why(tmp_path: Path) -> None:
    """The always-A judge gives each question one win per model: a score of 50 in every resample, printed
    with its reason instead of "(-0.0 / +0.0)"."""
    from rich.console import Console

    from jurist.families import print_scored

    run = tmp_path / "run"
    run.mkdir()
    battles = games("lazy", ("model_a", 1), ("model_a", 1), n=6)
    (run / "battles.jsonl").write_text("".join(json.dumps(b) + "\n" for b in battles))
    (run / "run.json").write_text(json.dumps({"baseline": "base", "score_family": "pairwise"}))
    scored = score_run(run, ScoreOptions(n_bootstrap=50))
    (row,) = [r for r in scored.rows if r["model"] == "m"]
    assert row["score"] == row["ci_low"] == row["ci_high"] == 50.0
    out = io.StringIO()
    print_scored(Console(file=out, width=200), scored, title="t")
    text = out.getvalue()
    assert "(±0: the judge always picked A)" in text and "(±0: the baseline)" in text
    assert "(-0.0 / +0.0)" not in text
    assert "warning: judge lazy prefers position A in 100% of decisive games" in text
