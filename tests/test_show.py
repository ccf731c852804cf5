"""``jurist show``: re-scoring a run from its battles with every method, and the command line around it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import run_config, write_models_file
from jurist.errors import InputError, JuristError
from jurist.families import ScoreOptions, score_run, write_outputs
from jurist.report.formats import render_csv, render_markdown
from jurist.store.jsonl import read_jsonl


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def numbers(rows: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[Any, Any, Any]]:
    return {(r["judge"], r["model"]): (r["score"], r["ci_low"], r["ci_high"]) for r in rows}


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished mock run: three models, two noisy judges (so every CI is non-trivial), 24 questions."""
    from conftest import FAST_RETRY
    from jurist.run.pipeline import run_pipeline
    from mock_openai import MockOpenAI

    tmp = tmp_path_factory.mktemp("show")
    server = MockOpenAI()
    server.start()
    try:
        models = write_models_file(
            tmp / "m.yaml",
            server.base_url,
            {name: {} for name in ("better", "mixed", "worse", "judge-p70", "judge-p60-t20")},
        )
        result = run_pipeline(
            run_config(
                models_file=models,
                models=["better", "mixed", "worse"],
                judges=["judge-p70", "judge-p60-t20"],
                out=tmp / "run",
                progress=False,
                retry=FAST_RETRY,
                check=False,
            )
        )
    finally:
        server.stop()
    assert result.exit_code == 0
    return tmp / "run"


def test_rescoring_reproduces_ratings_json_exactly(judged_run: Path) -> None:
    ratings = json.loads((judged_run / "ratings.json").read_text())
    scored = score_run(judged_run, ScoreOptions())
    assert numbers(scored.rows) == numbers(ratings["models"])
    assert len(scored.rows) == len(ratings["models"]) == 8  # 2 judges x (3 models + baseline)
    widths = [r["ci_high"] - r["ci_low"] for r in scored.rows if not r.get("baseline")]
    assert min(widths) > 0  # noisy judges: the comparison is not between degenerate intervals


def test_cli_json_equals_ratings_json_and_writes_nothing(judged_run: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in judged_run.iterdir() if p.is_file()}
    result = jurist("show", str(judged_run), "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    ratings = json.loads((judged_run / "ratings.json").read_text())
    assert numbers(json.loads(result.stdout)) == numbers(ratings["models"])
    assert {p.name: p.read_bytes() for p in judged_run.iterdir() if p.is_file()} == before


def test_battles_rebuilt_from_judgments_give_the_same_scores(judged_run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(judged_run, copy)
    (copy / "battles.jsonl").unlink()
    scored = score_run(copy, ScoreOptions())
    assert numbers(scored.rows) == numbers(score_run(judged_run, ScoreOptions()).rows)
    assert any("rebuilt from the judgments" in note for note in scored.notes)


def _entries(run: Path, judges: set[str], model: str) -> list[float]:
    """Every exploded entry P(model beats the baseline) of a model, straight from the judgments."""
    outcome = {"A>>B": (1.0, 3), "A>B": (1.0, 1), "A=B": (0.5, 1), "B>A": (0.0, 1), "B>>A": (0.0, 3)}
    entries: list[float] = []
    for judge in judges:
        for record in read_jsonl(run / "judgments" / judge / f"{model}.jsonl"):
            for game in record["games"]:
                p_a, weight = outcome[game["label"]]
                entries += [p_a if game["a"] == model else 1.0 - p_a] * weight
    return entries


def test_judges_side_by_side_filtered_and_pooled(judged_run: Path) -> None:
    one = score_run(judged_run, ScoreOptions(judges=("judge-p70",)))
    assert {r["judge"] for r in one.rows} == {"judge-p70"}
    pooled = score_run(judged_run, ScoreOptions(ensemble=True))
    name = "judge-p60-t20+judge-p70"
    assert {r["judge"] for r in pooled.rows} == {name}
    for model in ("better", "mixed", "worse"):
        row = next(r for r in pooled.rows if r["model"] == model)
        expected = 100.0 * float(np.mean(_entries(judged_run, {"judge-p70", "judge-p60-t20"}, model)))
        assert row["score"] == pytest.approx(expected, abs=1e-4)
        assert row["ci_low"] < row["score"] < row["ci_high"]


def test_write_records_the_method_and_keeps_extra_fields(judged_run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(judged_run, copy)
    scored = score_run(copy, ScoreOptions(method="bt", seed=3, ci_level=0.95))
    write_outputs(copy, scored)
    ratings = json.loads((copy / "ratings.json").read_text())
    assert (ratings["method"], ratings["seed"], ratings["ci_level"]) == ("bt", 3, 0.95)
    entry = next(m for m in ratings["models"] if m["model"] == "better" and m["judge"] == "judge-p70")
    row = next(r for r in scored.rows if r["model"] == "better" and r["judge"] == "judge-p70")
    assert entry["rating"] == row["rating"] and entry["winrate"] == row["winrate"]
    assert json.loads((copy / "leaderboard.json").read_text()) == scored.rows


# -- hand-made runs with known answers --------------------------------------------------------------------


def _battle(
    model: str, baseline: str, p_model: float, uid: str, category: str, judge: str = "j"
) -> dict[str, Any]:
    winner = "model_a" if p_model == 1.0 else "model_b" if p_model == 0.0 else "tie"
    return {
        "model_a": model,
        "model_b": baseline,
        "winner": winner,
        "weight": 1,
        "uid": uid,
        "category": category,
        "judge": judge,
    }


def _write_run(root: Path, battles: list[dict[str, Any]], run_json: dict[str, Any] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "battles.jsonl").write_text("".join(json.dumps(b) + "\n" for b in battles))
    if run_json is not None:  # what a pairwise run records
        (root / "run.json").write_text(json.dumps({"score_family": "pairwise", **run_json}))
    return root


def test_categories_each_with_its_own_baseline(tmp_path: Path) -> None:
    battles = []
    for q in range(10):  # m wins 7/10 hard prompts against o3-mini and 2/10 creative ones against gemini
        battles.append(_battle("m", "o3-mini", 1.0 if q < 7 else 0.0, f"h{q}", "hard_prompt"))
        battles.append(_battle("m", "gemini", 1.0 if q < 2 else 0.0, f"c{q}", "creative_writing"))
        battles.append(_battle("n", "o3-mini", 0.5, f"h{q}", "hard_prompt"))
        battles.append(_battle("n", "gemini", 0.5, f"c{q}", "creative_writing"))
    run = _write_run(tmp_path / "run", battles, {"baselines": ["gemini", "o3-mini"]})
    scored = score_run(run, ScoreOptions(categories=("hard_prompt", "creative_writing")))
    got = {(r["category"], r["model"]): r["score"] for r in scored.rows}
    assert got == {
        ("hard_prompt", "m"): 70.0,
        ("hard_prompt", "n"): 50.0,
        ("hard_prompt", "o3-mini"): 50.0,
        ("creative_writing", "m"): 20.0,
        ("creative_writing", "n"): 50.0,
        ("creative_writing", "gemini"): 50.0,
    }
    # Without run.json the baselines are inferred per category (the model in every battle).
    (run / "run.json").unlink()
    bt = score_run(run, ScoreOptions(method="bt", categories=("creative_writing",), n_bootstrap=20))
    m_row = next(r for r in bt.rows if r["model"] == "m")
    assert m_row["winrate"] == pytest.approx(20.0, abs=1e-3)
    assert m_row["rating"] == pytest.approx(1000 + 400 * np.log10(0.2 / 0.8), abs=0.01)
    with pytest.raises(JuristError, match="no battles in math"):
        score_run(run, ScoreOptions(categories=("math",)))


def test_bt_uses_battles_between_candidates_too(tmp_path: Path) -> None:
    """BT places models through every battle; the win rate view ignores battles without a baseline."""
    battles = [_battle("a", "base", 0.5, f"q{q}", "c") for q in range(20)]
    battles += [_battle("b", "base", 0.5, f"r{q}", "c") for q in range(20)]
    battles += [_battle("a", "b", 1.0 if q < 15 else 0.0, f"s{q}", "c") for q in range(20)]
    run = _write_run(tmp_path / "run", battles, {"baseline": "base"})
    win = {r["model"]: r["score"] for r in score_run(run, ScoreOptions(n_bootstrap=0)).rows}
    assert win == {"a": 50.0, "b": 50.0, "base": 50.0}
    bt = {r["model"]: r for r in score_run(run, ScoreOptions(method="bt", n_bootstrap=0)).rows}
    assert bt["base"]["rating"] == 1000.0 and bt["a"]["rating"] > 1000.0 > bt["b"]["rating"]
    assert bt["a"]["rating"] - 1000.0 == pytest.approx(1000.0 - bt["b"]["rating"], abs=1e-6)


def _style_run(root: Path) -> Path:
    """A judge that only likes length: a model's chance to win grows with its length over the baseline's."""
    rng = np.random.default_rng(0)
    battles, answers = [], {"long": [], "plain": [], "base": []}
    for q in range(200):
        uid = f"q{q:03d}"
        base_len = int(rng.integers(200, 400))
        lengths = {"base": base_len, "long": int(base_len * rng.uniform(0.6, 2.5)), "plain": base_len}
        lengths["plain"] = int(base_len * rng.uniform(0.8, 1.25))
        for model, n in lengths.items():
            meta = {
                "token_len": n,
                "header_count": {"h1": 0},
                "list_count": {"ordered": 0},
                "bold_count": {"**": 0},
            }
            answers[model].append({"uid": uid, "model": model, "answer": "x", "metadata": meta})
        for model in ("long", "plain"):
            ratio = (lengths[model] - base_len) / (lengths[model] + base_len)
            for _ in range(2):  # two games, each won with a probability that only depends on length
                p = float(rng.random() < 1.0 / (1.0 + np.exp(-12.0 * ratio)))
                battles.append(_battle(model, "base", p, uid, "c"))
    for model, records in answers.items():
        path = root / "answers" / f"{model}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return _write_run(root, battles, {"baseline": "base"})


def test_style_control_removes_a_pure_length_preference(tmp_path: Path) -> None:
    run = _style_run(tmp_path / "run")
    raw = {r["model"]: r["score"] for r in score_run(run, ScoreOptions(n_bootstrap=0)).rows}
    assert raw["long"] - raw["plain"] > 20.0
    styled = score_run(run, ScoreOptions(style_control=("length",), n_bootstrap=30))
    rows = {r["model"]: r for r in styled.rows}
    assert rows["base"]["score"] == 50.0
    # Equal quality once length is accounted for. Features are z-scored (centred over the battles), as
    # upstream does, so both sit at the win rate of an average-length answer rather than at 50.
    assert abs(rows["long"]["score"] - rows["plain"]["score"]) < 5.0
    assert rows["long"]["ci_low"] <= rows["long"]["score"] <= rows["long"]["ci_high"]
    assert any(note.startswith("style coefficients") and "length=+" in note for note in styled.notes)
    both = score_run(run, ScoreOptions(style_control=("length", "markdown"), n_bootstrap=0))
    assert {r["model"] for r in both.rows} == {"long", "plain", "base"}


def test_style_control_computes_missing_metadata(tmp_path: Path) -> None:
    run = _style_run(tmp_path / "run")
    path = run / "answers" / "plain.jsonl"
    records = read_jsonl(path)
    for record in records:
        del record["metadata"]
        record["answer"] = "# Title\n\n- one\n- **two**\n"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    scored = score_run(run, ScoreOptions(style_control=("length", "markdown"), n_bootstrap=0))
    assert any("computed for 200 answers of plain" in note for note in scored.notes)


def test_formats_carry_the_same_rows(tmp_path: Path) -> None:
    battles = [_battle("m", "base", 1.0 if q % 4 else 0.0, f"q{q}", "c") for q in range(8)]
    run = _write_run(tmp_path / "run", battles, {"baseline": "base"})
    rows = score_run(run, ScoreOptions(n_bootstrap=10)).rows
    csv_lines = render_csv(rows).splitlines()
    assert csv_lines[0].split(",")[:3] == ["judge", "model", "score"]
    assert csv_lines[1].startswith("j,m,75.0,")
    markdown = render_markdown(rows).splitlines()
    assert markdown[0].startswith("| judge | model | score |") and "| 75.0 |" in markdown[2]
    result = jurist("show", str(run), "--format", "markdown", "--bootstrap", "10", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.splitlines()[2] == markdown[2]


def test_style_control_flag_alone_or_with_features(tmp_path: Path) -> None:
    run = _style_run(tmp_path / "run")
    alone = jurist("show", str(run), "--style-control", "--bootstrap", "0", "--format", "json", cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "length=" in alone.stderr and "bold=" in alone.stderr
    length = jurist(
        "show", str(run), "--style-control", "length", "--bootstrap", "0", "--format", "json", cwd=tmp_path
    )
    assert length.returncode == 0 and "bold=" not in length.stderr
    expected = score_run(run, ScoreOptions(style_control=("length",), n_bootstrap=0)).rows
    assert json.loads(length.stdout) == expected


def test_bad_input_is_one_line_with_file_line_and_field(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", [_battle("m", "base", 1.0, "q1", "c")], {"baseline": "base"})
    with (run / "battles.jsonl").open("a") as fh:
        fh.write(json.dumps({"model_a": "m", "model_b": "base", "winner": "A", "uid": "q2"}) + "\n")
    with pytest.raises(InputError, match=r"battles.jsonl: line 2: field 'winner'"):
        score_run(run, ScoreOptions())
    result = jurist("show", str(run), cwd=tmp_path)
    assert result.returncode == 2 and "line 2: field 'winner'" in result.stderr
    assert "Traceback" not in result.stderr
    with pytest.raises(JuristError, match="--judge: no battles for nobody"):
        score_run(
            _write_run(tmp_path / "ok", [_battle("m", "b", 1.0, "q", "c")]), ScoreOptions(judges=("nobody",))
        )
    with pytest.raises(JuristError, match="cannot be combined"):
        score_run(run, ScoreOptions(length_controlled=True, method="bt"))
