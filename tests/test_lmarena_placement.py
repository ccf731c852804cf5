"""Placing a judged model on a synthetic arena's human scale: truth, oracle fits, files, round trips."""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena_synth import SynthArena, build_arena, judged_battles, write_jsonl
from jurist.benchmarks.lmarena import benchmark_file
from jurist.families import print_scores
from jurist.families.door import ScoreRequest, score_run_dir
from jurist.families.placement.fit import (
    PlacementSettings,
    fit_reports,
    is_arena_run,
    summary_rows,
)
from jurist.interop.judgearena import import_judgearena, read_battles, read_elo_report
from jurist.store.jsonl import rewrite_jsonl_atomic, write_json_atomic

TRUE_EVALUATED = 1205.0


@pytest.fixture(scope="module")
def arena() -> SynthArena:
    return build_arena(seed=11)  # 60 models, 80,000 human battles


@pytest.fixture(scope="module")
def human(arena: SynthArena, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The anchor battles the benchmark keeps (500-battle threshold), as battle records."""
    path = write_jsonl(arena, tmp_path_factory.mktemp("arena") / "arena.jsonl")
    bench = benchmark_file(path, {"n": "1"})
    assert bench.human is not None  # type: ignore[attr-defined]
    return bench.human.records()  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(scope="module")
def battles(arena: SynthArena, human: list[dict[str, Any]]) -> list[dict[str, Any]]:
    anchors = {b["model_a"] for b in human} | {b["model_b"] for b in human}
    return judged_battles(arena, "my-model", TRUE_EVALUATED, 1500, anchors=anchors) + human


def show_arena(path: Path, **request: Any) -> list[dict[str, Any]]:
    """What ``jurist show PATH`` does on an arena run or battles file: the scoring door, then the report;
    returns the fitted reports."""
    scores = score_run_dir(path, ScoreRequest(**request))
    assert scores.family == "placement"
    print_scores(scores)
    return list(scores.detail.reports)


def _entry(report: dict[str, Any], model: str) -> dict[str, Any]:
    return next(e for e in report["ratings"] if e["model"] == model)


def test_the_evaluated_model_lands_within_its_ci_of_the_truth(
    arena: SynthArena, battles: list[dict[str, Any]]
) -> None:
    anchor = "arena-00"
    settings = PlacementSettings(anchor=anchor, anchor_rating=arena.rating[anchor], arena="synthetic")
    started = time.perf_counter()
    (report,), notes = fit_reports(battles, settings)
    elapsed = time.perf_counter() - started
    assert notes == [] and elapsed < 10.0  # 80k battles, 100 bootstrap rounds: aggregated cells
    me = _entry(report, "my-model")
    assert me["source"] == "evaluated" and me["n_battles"] == 1500
    assert me["ci_low"] < TRUE_EVALUATED < me["ci_high"]
    assert me["ci_high"] - me["ci_low"] < 60.0
    # The anchors recover their own truth too (the scale is the arena's), and sit at their human fit.
    anchors = [e for e in report["ratings"] if e["source"] == "human"]
    errors = [abs(e["rating"] - arena.rating[e["model"]]) for e in anchors]
    assert len(anchors) == 54 and float(np.mean(errors)) < 12.0
    extra = report["jurist"]
    assert extra["mae_vs_human"] < 1.0 and extra["arena_models"] == 54
    truth_rank = 1 + sum(arena.rating[e["model"]] > TRUE_EVALUATED for e in anchors)
    assert abs(extra["rank"] - truth_rank) <= 3 and extra["rank_ci"] <= extra["rank"]
    assert report["arena"] == "synthetic" and report["judge_model"] == "mock-judge"
    assert [e["rating"] for e in report["ratings"]] == sorted(
        (e["rating"] for e in report["ratings"]), reverse=True
    )


def test_human_only_ratings_match_choix_and_the_sklearn_recipe(battles: list[dict[str, Any]]) -> None:
    choix = pytest.importorskip("choix")
    (report,), _ = fit_reports(battles, PlacementSettings(n_bootstrap=0))
    human_fit = {
        m: v["human_rating"] for m, v in report["jurist"]["models"].items() if v["human_rating"] is not None
    }
    names = sorted(human_fit)
    index = {m: k for k, m in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    human = [b for b in battles if b["source"] == "human"]
    for b in human:
        i, j, pref = index[b["model_a"]], index[b["model_b"]], b["pref"]
        wins[i, j] += 1.0 - pref  # choix: comp_mat[i, j] = wins of i over j, ties as halves
        wins[j, i] += pref
    params = choix.ilsr_pairwise_dense(wins, alpha=0.0, tol=1e-12, max_iter=10_000)
    elo = 400.0 / math.log(10.0) * params
    ours = np.array([human_fit[m] for m in names])
    np.testing.assert_allclose(ours - ours.mean(), elo - elo.mean(), atol=1e-4)
    sklearn = _sklearn_soft_fit(human, names)
    np.testing.assert_allclose(ours - ours.mean(), sklearn - sklearn.mean(), atol=1e-4)


def _sklearn_soft_fit(human: list[dict[str, Any]], names: list[str]) -> np.ndarray:
    """JudgeArena's recipe: identical (a, b, pref) rows grouped, two rows each (Y=1 weight (1-pref)*count,
    Y=0 weight pref*count), +-ln 10 design, unregularised logistic regression, 400 * coef."""
    sklearn = pytest.importorskip("sklearn.linear_model")
    index = {m: k for k, m in enumerate(names)}
    keys: dict[tuple[int, int, float], int] = {}
    for b in human:
        key = (index[b["model_a"]], index[b["model_b"]], float(b["pref"]))
        keys[key] = keys.get(key, 0) + 1
    n = len(keys)
    x = np.zeros((2 * n, len(names)))
    y = np.r_[np.ones(n), np.zeros(n)]
    w = np.zeros(2 * n)
    for row, ((a, b, pref), count) in enumerate(keys.items()):
        for r in (row, n + row):
            x[r, a], x[r, b] = math.log(10.0), -math.log(10.0)
        w[row], w[n + row] = (1.0 - pref) * count, pref * count
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sklearn.LogisticRegression(fit_intercept=False, C=1e12, tol=1e-12, max_iter=10_000)
        model.fit(x, y, sample_weight=w)
    return 400.0 * model.coef_[0]  # type: ignore[no-any-return]


def test_battles_file_alone_reproduces_elo_ratings(battles: list[dict[str, Any]], tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    rewrite_jsonl_atomic(run / "battles.jsonl", battles)
    reports, _ = fit_reports(read_battles(run / "battles.jsonl"), PlacementSettings(n_bootstrap=30, seed=5))
    assert len(reports) == 1
    write_json_atomic(run / "elo_ratings.json", reports[0])
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "battles.jsonl").write_bytes((run / "battles.jsonl").read_bytes())
    assert is_arena_run(alone) and is_arena_run(alone / "battles.jsonl")
    again = show_arena(alone / "battles.jsonl", n_bootstrap=30, seed=5)
    assert again == [json.loads((run / "elo_ratings.json").read_text())]
    # A run folder remembers its own settings in elo_ratings.json: show needs no flags there.
    shown = show_arena(run)
    assert shown == again


def test_judgearena_files_import_and_show(
    battles: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JudgeArena's branch saves only the judged battles (parquet, NaN where no value) and its EloReport."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    results = tmp_path / "elo-LMArena-100k-my-model"
    results.mkdir()
    judged = [b for b in battles if b["source"] == "llm-judge"][:40]
    rows = [
        {**{k: b[k] for k in ("model_a", "model_b", "winner", "source", "judge_model", "question_id")}}
        | {"pref": float("nan") if k == 3 else b["pref"], "pref_hard": b["pref"]}
        for k, b in enumerate(judged)
    ]
    pq.write_table(pa.Table.from_pylist(rows), str(results / "battles.parquet"))
    report = {
        "arena": "LMArena-100k",
        "model": "my-model",
        "judge_model": "mock-judge",
        "n_bootstraps": 20,
        "seed": 0,
        "ratings": [
            {"model": "my-model", "rating": 1190.5, "ci_low": 1170.0, "ci_high": 1210.0, "n_battles": 40}
            | {"source": "evaluated"},
            {"model": "arena-01", "rating": 1100.0, "ci_low": 1090.0, "ci_high": 1110.0, "n_battles": 3000}
            | {"source": "human"},
        ],
    }
    (results / "elo_ratings.json").write_text(json.dumps(report))
    assert is_arena_run(results)
    assert show_arena(results) == []  # no human votes in the file: a tally, and the stored report
    out = capsys.readouterr().out
    assert "my-model" in out and "1190.5" in out and "arena-01" in out
    summary = import_judgearena(results, tmp_path / "imported")
    assert summary == {"battles": 40, "llm_judge_battles": 40, "human_battles": 0, "elo_report": True}
    imported = read_battles(tmp_path / "imported" / "battles.jsonl")
    assert imported[3]["pref"] is None and imported[0]["judge_model"] == "mock-judge"
    assert read_elo_report(tmp_path / "imported" / "elo_ratings.json") == report


def test_a_judgearena_jsonl_with_null_judges_shows(battles: list[dict[str, Any]], tmp_path: Path) -> None:
    """Human votes with ``"judge_model": null`` (and no jurist fields at all) fit and show."""
    path = tmp_path / "battles.jsonl"
    keep = ("model_a", "model_b", "winner", "source", "pref", "question_id", "judge_model")
    path.write_text("".join(json.dumps({k: b[k] for k in keep}) + "\n" for b in battles[1400:]))
    (report,) = show_arena(path, n_bootstrap=10)
    assert report["model"] == "my-model" and report["arena"] == ""
    assert _entry(report, "my-model")["n_battles"] == 100


def test_name_clash_and_unplaceable_battles(battles: list[dict[str, Any]]) -> None:
    from jurist.interop.judgearena import evaluated_name

    assert evaluated_name("arena-03", ["arena-03", "arena-04"]) == "arena-03 (judged)"
    assert evaluated_name("mine", ["arena-03"]) == "mine"
    stray = dict(battles[0], model_a="my-model", model_b="never-voted", winner="model_a", pref=0.0)
    reports, notes = fit_reports([stray, *battles], PlacementSettings(n_bootstrap=0))
    assert len(reports) == 1 and any("1 judged battle(s)" in note for note in notes)


def test_an_evaluated_model_that_won_every_judged_battle_is_flagged_not_placed_silently() -> None:
    """Issue 27: with every judged battle won, the evaluated model's rating has no finite estimate; the
    report, its summary row and the warnings say so, and its interval prints with the mark."""
    from jurist.families.placement.table import summary_line

    rng = np.random.default_rng(3)
    human = [
        {
            "source": "human",
            "model_a": a,
            "model_b": b,
            "winner": str(rng.choice(["model_a", "model_b", "tie"])),
        }
        for a, b in [("a", "b"), ("b", "c"), ("a", "c")] * 40
    ]
    judged = [
        {"source": "llm-judge", "judge_model": "j", "model_a": "new", "model_b": other, "winner": "model_a"}
        for other in ("a", "b", "c") * 5
    ]
    (report,), _ = fit_reports(human + judged, PlacementSettings(n_bootstrap=20, arena="toy"))
    flags = report["jurist"]["models"]["new"]
    assert flags["separation"] == "won all" and flags["ci_unreliable"] is True
    (warning,) = report["jurist"]["warnings"]
    assert warning.startswith("placement (j): new won every game outright")
    (row,) = summary_rows([report])
    assert row["separation"] == "won all" and row["ci_unreliable"] is True
    assert ")*" in summary_line(report)
    fair = fit_reports(human, PlacementSettings(n_bootstrap=0))  # nothing judged: nothing to flag
    assert fair == ([], [])
