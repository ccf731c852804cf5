"""``jurist show``'s scoring options where they apply, refused where they do not: Bradley-Terry on battles
with no baseline (every model meets every other, as an arena export) rates all models around a mean of
1000; a pairwise option on a rule-checked or rubric run is a one-line error, exit 2."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from jurist.errors import JuristError
from jurist.families import ScoreRequest, score_run_dir
from test_cli import jurist

STRENGTH = {"a": 0.0, "b": 0.5, "c": 1.0, "d": 1.5}


def round_robin(path: Path, rounds: int = 40) -> Path:
    """Battles where every model meets every other and none meets all of them in every battle."""
    rng = random.Random(0)
    rows = []
    for k, (x, y) in enumerate(p for _ in range(rounds) for p in itertools.combinations(STRENGTH, 2)):
        wins = rng.random() < 1 / (1 + math.exp(STRENGTH[y] - STRENGTH[x]))
        winner = "model_a" if wins else "model_b"
        rows.append(
            {"kind": "battle", "model_a": x, "model_b": y, "winner": winner, "uid": f"q{k}", "judge": "j"}
        )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_bt_without_a_baseline_rates_every_model_around_a_mean_of_1000(tmp_path: Path) -> None:
    path = round_robin(tmp_path / "battles.jsonl")
    scores = score_run_dir(path, ScoreRequest(method="bt", n_bootstrap=50))
    rows = {row["model"]: row for row in scores.rows}
    ratings = np.array([rows[m]["rating"] for m in STRENGTH])
    assert ratings.mean() == pytest.approx(1000.0, abs=0.01)  # the point fit's mean is the anchor
    assert list(np.argsort(ratings)) == [0, 1, 2, 3]  # ordered as the strengths that drew the battles
    assert all(rows[m]["ci_low"] < rows[m]["rating"] < rows[m]["ci_high"] for m in STRENGTH)
    assert not any(row.get("baseline") for row in scores.rows)
    assert any("mean is 1000" in note for note in scores.notes)
    same_folder = score_run_dir(tmp_path, ScoreRequest(method="bt", n_bootstrap=50))  # a folder of it
    assert [r["rating"] for r in same_folder.rows] == [r["rating"] for r in scores.rows]
    with pytest.raises(JuristError, match="or --method bt to rate every model together"):
        score_run_dir(path, ScoreRequest(method="winrate"))  # a win rate needs a baseline
    anchored = score_run_dir(path, ScoreRequest(method="bt", baselines=("a",), n_bootstrap=0))
    assert {r["model"]: r["rating"] for r in anchored.rows}["a"] == pytest.approx(1000.0)


def test_the_command_line_fits_an_arena_style_battles_file(tmp_path: Path) -> None:
    round_robin(tmp_path / "arena.jsonl")
    done = jurist("show", "arena.jsonl", "--method", "bt", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "cannot tell which model is the baseline" not in done.stderr


def _rule_run(root: Path, family: str) -> Path:
    root.mkdir()
    (root / "run.json").write_text(json.dumps({"score_family": family, "status": "finished"}))
    return root


@pytest.mark.parametrize(
    ("family", "words"),
    [("rules", "it is checked by rule"), ("rubric", "it is graded by rubric")],
)
def test_a_pairwise_option_on_a_run_without_battles_is_refused(
    tmp_path: Path, family: str, words: str
) -> None:
    run = _rule_run(tmp_path / "run", family)
    done = jurist("show", str(run), "--method", "bt", cwd=tmp_path)
    assert done.returncode == 2 and f"--method does not apply to {run}: {words}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    both = jurist("show", str(run), "--style-control", "--baseline", "x", cwd=tmp_path)
    assert both.returncode == 2 and "--style-control, --baseline do not apply" in both.stderr
