"""``jurist judges compare``: agreement and kappa per game, rank correlation and the ensemble leaderboard."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from conftest import write_models_file
from jurist.audit import compare_judges
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl

MODELS = ["strong", "mixed", "worse"]
JUDGES = ["judge-good", "judge-reask", "judge-p70"]
FIVE = ["A>>B", "A>B", "A=B", "B>A", "B>>A"]
MIRROR = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B", "B>A": "A>B", "B>>A": "A>>B"}
THREE = {"A>>B": "A", "A>B": "A", "A=B": "tie", "B>A": "B", "B>>A": "B"}


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def judged_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> Path:
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {a: {} for a in MODELS + JUDGES})
    out = tmp_path / "run"
    result = run_quiet(models_file=models, models=MODELS, judges=JUDGES, out=out, limit=12)
    assert result.exit_code == 0
    return out


def candidate_labels(run: Path, judge: str) -> dict[tuple[str, str, int], str]:
    """Written out by hand: game 1 shows the candidate as B, so its label is mirrored; game 2 is kept."""
    labels = {}
    for model in MODELS:
        for record in read_jsonl(run / "judgments" / judge / f"{model}.jsonl"):
            game1, game2 = record["games"]
            labels[(model, record["uid"], 1)] = MIRROR[game1["label"]]
            labels[(model, record["uid"], 2)] = game2["label"]
    return labels


def scores(run: Path, judge: str) -> dict[str, float]:
    rows = json.loads((run / "leaderboard.json").read_text())
    return {r["model"]: r["score"] for r in rows if r["judge"] == judge and not r.get("baseline")}


def test_agreement_kappa_ranks_and_ensemble_match_direct_computation(judged_run: Path) -> None:
    result = compare_judges(judged_run)
    assert result["judges"] == sorted(JUDGES)
    pairs = {(p["judge_a"], p["judge_b"]): p for p in result["pairs"]}
    assert len(pairs) == 3
    same = pairs[("judge-good", "judge-reask")]  # the re-asked judge ends on the same verdicts
    assert same["n"] == 3 * 12 * 2
    assert same["agreement"] == same["kappa_five"] == same["kappa_three"] == 1.0
    assert same["spearman"] == same["kendall"] == 1.0

    good, noisy = candidate_labels(judged_run, "judge-good"), candidate_labels(judged_run, "judge-p70")
    keys = sorted(good)
    a, b = [good[k] for k in keys], [noisy[k] for k in keys]
    row = pairs[("judge-good", "judge-p70")]
    assert row["n"] == len(keys) == 72
    assert row["agreement"] == pytest.approx(np.mean([x == y for x, y in zip(a, b, strict=True)]), abs=1e-4)
    assert row["kappa_five"] == pytest.approx(cohen_kappa_score(a, b, labels=FIVE), abs=1e-4)
    three_a, three_b = [THREE[x] for x in a], [THREE[y] for y in b]
    assert row["kappa_three"] == pytest.approx(cohen_kappa_score(three_a, three_b), abs=1e-4)
    assert 0.0 < row["kappa_three"] < 1.0  # a noisy judge: some, not full, agreement

    board_good, board_noisy = scores(judged_run, "judge-good"), scores(judged_run, "judge-p70")
    x, y = [board_good[m] for m in MODELS], [board_noisy[m] for m in MODELS]
    assert row["n_models"] == 3
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-4)
    assert row["kendall"] == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-4)

    ensemble = {r["model"]: r for r in result["ensemble"]}
    assert set(ensemble) == set(MODELS)  # the baseline's fixed 50 is left out
    for model in MODELS:
        expected = np.mean([scores(judged_run, judge)[model] for judge in JUDGES])
        assert ensemble[model]["ensemble"] == pytest.approx(expected, abs=1e-4)
        assert set(ensemble[model]["scores"]) == set(JUDGES)
    assert [r["model"] for r in result["ensemble"]][0] == "strong"


def test_verdicts_compare_only_on_the_same_answers(tmp_path: Path) -> None:
    def record(
        judge: str, uid: str, labels: tuple[str | None, str | None], answer_hash: str
    ) -> dict[str, Any]:
        return {
            "uid": uid,
            "judge": judge,
            "model": "m",
            "answer_hash": answer_hash,
            "baseline_hash": "base",
            "games": [
                {"game": 1, "a": "ref", "b": "m", "label": labels[0]},
                {"game": 2, "a": "m", "b": "ref", "label": labels[1]},
            ],
        }

    def write(judge: str, records: list[dict[str, Any]]) -> None:
        path = tmp_path / "judgments" / judge / "m.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))

    # x and y both prefer the candidate in both orders: in its perspective that is "A>B" twice.
    write("x", [record("x", "1", ("B>A", "A>B"), "h1"), record("x", "2", ("A>>B", None), "old")])
    write("y", [record("y", "1", ("B>A", "A>B"), "h1"), record("y", "2", ("B>>A", "A=B"), "new")])
    (row,) = compare_judges(tmp_path)["pairs"]
    assert row["n"] == 2 and row["agreement"] == 1.0  # uid 2: different answers judged, so not compared
    assert row["n_models"] == 0 and row["spearman"] is None
    write("z", [record("z", "1", ("A>B", "B>A"), "h1")])  # prefers the baseline in both orders
    z_rows = [p for p in compare_judges(tmp_path)["pairs"] if "z" in (p["judge_a"], p["judge_b"])]
    assert all(p["agreement"] == 0.0 for p in z_rows)


def test_cli_table_and_single_judge_error(judged_run: Path, tmp_path: Path) -> None:
    table = jurist("judges", "compare", str(judged_run), cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "judge-p70" in table.stdout and "ensemble" in table.stdout and "kappa" in table.stdout
    as_json = jurist("judges", "compare", str(judged_run), "--format", "json", cwd=tmp_path)
    assert json.loads(as_json.stdout) == json.loads(json.dumps(compare_judges(judged_run)))
    for judge in ("judge-reask", "judge-p70"):
        for path in (judged_run / "judgments" / judge).iterdir():
            path.unlink()
        (judged_run / "judgments" / judge).rmdir()
    rows = [
        r for r in json.loads((judged_run / "leaderboard.json").read_text()) if r["judge"] == "judge-good"
    ]
    (judged_run / "leaderboard.json").write_text(json.dumps(rows))
    single = jurist("judges", "compare", str(judged_run), cwd=tmp_path)
    assert single.returncode == 2 and "two or more" in single.stderr
    with pytest.raises(JuristError, match="no judgments"):
        compare_judges(tmp_path / "nowhere")
