"""Judge replacement (``jurist judges replace``, ``--anchor``): the statistics against oracles, and known
truths reproduced on the shared AlpacaEval panel with mock judges of planted agreement with the retired
judge's own stored verdicts: a judge that follows them on 85% of pairs is measured at 85% (and its planted
kappa), is qualified, and carries two models held out of the panel back to their published win rates; a
judge that prefers the longer output is not qualified, for length. The v0.1 Arena-Hard panel (no stored
verdicts) is judged on the leaderboard level.
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from conftest import SHARED_DATA, write_models_file
from jurist.errors import JuristError
from jurist.families import NOT_COMPARABLE, read_replacement
from jurist.ratings.replacement import (
    agreement_kappa,
    anchor_score,
    decisions,
    isotonic_map,
    kendall,
    spearman,
)
from jurist.replace import StudyRequest, replace_judge
from mock_panel_judges import PanelJudges

ALPACA = SHARED_DATA / "alpaca-eval"
needs_panel = pytest.mark.skipif(not (ALPACA / "results").is_dir(), reason="shared AlpacaEval panel absent")
HELD_OUT = ("claude-2", "FuseChat-Llama-3.1-8B-Instruct")
PLANTED = 0.85


# -- the statistics ---------------------------------------------------------------------------------------
def test_decisions_read_ties_and_missing() -> None:
    out = decisions([0.0, 0.5, 1.0, 0.7, math.nan])
    assert out[:4].tolist() == [-1.0, 0.0, 1.0, 1.0] and math.isnan(out[4])


def test_agreement_and_kappa_recover_a_planted_flip_rate() -> None:
    rng = np.random.default_rng(3)
    old = rng.choice([-1.0, 1.0], p=[0.7, 0.3], size=4000)
    flip = rng.random(4000) < 0.2
    new = np.where(flip, -old, old)
    clusters = [str(i // 10) for i in range(4000)]
    agreement, kappa, n = agreement_kappa(old, new, clusters, n_bootstrap=400, seed=1)
    p_old = np.mean(old == 1)
    p_new = 0.8 * p_old + 0.2 * (1 - p_old)
    pe = p_old * p_new + (1 - p_old) * (1 - p_new)
    assert n == 4000 and agreement.low <= 0.8 <= agreement.high
    assert kappa.low <= (0.8 - pe) / (1 - pe) <= kappa.high
    assert agreement.estimate == pytest.approx(float(np.mean(old == new)))


def test_rank_correlations_equal_scipys() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=15), rng.normal(size=15)
    y[3] = y[4]  # a tie
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert kendall(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)


def test_the_isotonic_map_equals_sklearns_and_is_flat_beyond_its_knots() -> None:
    isotonic = pytest.importorskip("sklearn.isotonic")
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 100, 40)
    y = 0.8 * x + rng.normal(0, 8, 40)
    mine = isotonic_map(x, y)
    theirs = isotonic.IsotonicRegression(out_of_bounds="clip").fit(x, y)
    grid = np.linspace(-10, 110, 50)
    assert np.allclose(mine(grid), theirs.predict(grid))
    assert all(b >= a for a, b in zip(mine.y, mine.y[1:], strict=False))


def test_an_anchored_interval_holds_the_map_and_the_score_uncertainty() -> None:
    point = isotonic_map([10, 20, 30], [5, 15, 25])
    replicates = [isotonic_map([10, 20, 30], [5 + d, 15 + d, 25 + d]) for d in np.linspace(-2, 2, 101)]
    narrow = anchor_score(20.0, 0.0, point, replicates)
    wide = anchor_score(20.0, 3.0, point, replicates)
    assert narrow.estimate == 15.0 and narrow.low == pytest.approx(-1.9 + 15, abs=0.1)
    assert wide.high - wide.low > narrow.high - narrow.low


# -- planted judges on the shared AlpacaEval panel --------------------------------------------------------
@pytest.fixture(scope="module")
def panel_judges() -> Any:
    server = PanelJudges(keep_bodies=False)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def offline_data(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        patch.setenv("JURIST_CACHE_DIR", str(tmp_path_factory.mktemp("replace-cache")))
        yield


def _study(folder: Path, server: PanelJudges, judge: str, items: int, models: tuple[str, ...]) -> Any:
    models_file = write_models_file(folder / "m.yaml", server.base_url, {judge: {"parallel": 32}})
    request = StudyRequest(
        bench="alpaca-eval", judge=judge, out=folder / "study", models=models, items=items,
        models_file=models_file, check=False, progress=False, n_bootstrap=300,
    )  # fmt: skip
    return replace_judge(request, None, dry_run=False, console=Console(stderr=True)), models_file


def _panel_models() -> tuple[str, ...]:
    names = [p.name for p in (ALPACA / "results").iterdir() if p.name != "gpt4_1106_preview"]
    return tuple(sorted(set(names) - set(HELD_OUT)))


@pytest.fixture(scope="module")
def mimic_study(
    tmp_path_factory: pytest.TempPathFactory, panel_judges: PanelJudges, offline_data: None
) -> Any:
    folder = tmp_path_factory.mktemp("mimic")
    (code, document), models_file = _study(folder, panel_judges, "judge-mimic-85", 250, _panel_models())
    assert code == 0
    return folder, document, models_file


def _stored(model: str) -> dict[str, float]:
    from jurist.benchmarks.alpaca_eval import question_uid

    path = ALPACA / "results" / model / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json.gz"
    rows = json.loads(gzip.decompress(path.read_bytes()))
    return {
        question_uid(r["instruction"]): (1.5 if r["preference"] == 0 else r["preference"]) - 1 for r in rows
    }


@needs_panel
def test_the_flip_mimic_measures_its_planted_agreement_and_kappa(mimic_study: Any) -> None:
    folder, document, _ = mimic_study
    assert document["schema"] == "jurist.judge_replacement/1"
    assert json.loads((folder / "study" / "replacement.json").read_text()) == document
    items = document["items"]
    low, high = items["agreement"]["ci"]
    assert low <= PLANTED <= high and low < items["agreement"]["estimate"] < high
    uids = set(document["panel"]["selection"]["uids"])
    old = np.array([d for m in document["panel"]["models"] for u, d in _stored(m).items() if u in uids])
    d = decisions(old)
    shares = {v: float(np.mean(d == v)) for v in (-1.0, 0.0, 1.0)}
    planted_new = {-1.0: PLANTED * shares[-1] + (1 - PLANTED) * shares[1], 0.0: shares[0]}
    planted_new[1.0] = 1 - planted_new[-1.0] - shares[0]
    pe = sum(shares[v] * planted_new[v] for v in shares)
    po = PLANTED + (1 - PLANTED) * shares[0]  # a flipped tie is still a tie
    k_low, k_high = items["kappa"]["ci"]
    assert k_low <= (po - pe) / (1 - pe) <= k_high
    assert items["n"] == len(old) == document["panel"]["decisions"]
    assert {g["group"] for g in items["by_category"]} == {
        "helpful_base",
        "koala",
        "oasst",
        "selfinstruct",
        "vicuna",
    }


@needs_panel
def test_the_flip_mimic_is_qualified_and_its_map_is_monotone(mimic_study: Any) -> None:
    _, document, _ = mimic_study
    assert document["verdict"] == "qualified", document["reasons"]
    board, mapping = document["leaderboard"], document["map"]
    assert board["spearman"]["estimate"] >= 0.85 and board["kendall"]["estimate"] >= 0.7
    assert set(board["largest_rank_displacement"]) == {"model", "by"}
    assert mapping["score_field"] == "win_rate" and len(mapping["replicates"]) == 200
    assert list(mapping["y"]) == sorted(mapping["y"]) and not set(HELD_OUT) & set(document["panel"]["models"])


def _answers_file(folder: Path, model: str) -> Path:
    rows = json.loads(gzip.decompress((ALPACA / "results" / model / "model_outputs.json.gz").read_bytes()))
    path = folder / f"{model}.jsonl"
    path.write_text(
        "".join(json.dumps({"prompt": r["instruction"], "response": r["output"]}) + "\n" for r in rows)
    )
    return path


def _published(model: str) -> float:
    import csv

    with (ALPACA / "leaderboards" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv").open() as handle:
        return next(float(row["win_rate"]) for row in csv.DictReader(handle) if row[""] == model)


@needs_panel
@pytest.mark.parametrize("model", HELD_OUT)
def test_held_out_models_re_anchor_onto_their_published_win_rates(
    mimic_study: Any, model: str, run_quiet: Any, tmp_path: Path
) -> None:
    folder, _, models_file = mimic_study
    anchor = folder / "study" / "replacement.json"
    args = {
        "bench": "alpaca-eval",
        "models_file": models_file,
        "judges": ["judge-mimic-85"],
        "n_bootstrap": 20,
    }
    answers = _answers_file(tmp_path, model)
    result = run_quiet(**args, models=[model], answers_file=answers, out=tmp_path / "run", anchor=anchor)
    (row,) = [r for r in result.leaderboard if r["model"] == model]
    anchored = row["anchored"]
    low, high = anchored["ci"]
    assert low <= _published(model) <= high, (anchored, _published(model))
    stored = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert [r["anchored"] for r in stored if r["model"] == model] == [anchored]
    assert 1 <= anchored["published_rank"] <= anchored["of"]
    bare = run_quiet(**args, models=[model], answers_file=answers, out=tmp_path / "bare")
    assert {r.get("published") for r in bare.leaderboard if not r.get("baseline")} == {NOT_COMPARABLE}
    shown = subprocess.run(
        [sys.executable, "-m", "jurist", "show", str(tmp_path / "bare"), "--anchor", str(anchor)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "re-anchored onto gpt-4-1106-preview's published scale" in shown.stdout
    assert f"{anchored['published_rank']}/{anchored['of']}" in shown.stdout  # the same map, the same rank
    plain = subprocess.run(
        [sys.executable, "-m", "jurist", "show", str(tmp_path / "bare")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert NOT_COMPARABLE in plain.stdout + plain.stderr


@needs_panel
def test_a_length_biased_judge_is_not_qualified_for_length(
    tmp_path: Path, panel_judges: PanelJudges, offline_data: None
) -> None:
    (_, document), _ = _study(tmp_path, panel_judges, "judge-longer", 120, _panel_models())
    assert document["verdict"] == "not qualified"
    assert any("length" in reason for reason in document["reasons"]), document["reasons"]
    assert document["items"]["chose_longer"]["candidate"] > 0.99


@needs_panel
def test_the_study_resumes_and_dry_runs_without_sending(
    tmp_path: Path, panel_judges: PanelJudges, offline_data: None, capsys: Any
) -> None:
    models = ("NullModel", "alpaca-7b", "claude-2", "vicuna-7b")
    (_, first), _ = _study(tmp_path, panel_judges, "judge-mimic-90", 20, models)
    sent = panel_judges.stats.probes
    (_, again), _ = _study(tmp_path, panel_judges, "judge-mimic-90", 20, models)
    assert panel_judges.stats.probes == sent and again["items"] == first["items"]
    fresh = write_models_file(tmp_path / "fresh.yaml", panel_judges.base_url, {"judge-mimic-70": {}})
    request = StudyRequest(
        bench="alpaca-eval", judge="judge-mimic-70", out=tmp_path / "dry", models=("3",), items=10,
        models_file=fresh, check=False, progress=False,
    )  # fmt: skip
    code, document = replace_judge(request, None, dry_run=True, console=Console(stderr=True))
    assert (code, document) == (0, None) and panel_judges.stats.probes == sent
    assert "30" in capsys.readouterr().out  # 3 models x 10 questions, one request each
    assert not (tmp_path / "dry").exists()


@needs_panel
def test_the_arena_hard_v01_panel_is_judged_on_the_leaderboard_level(
    tmp_path: Path, panel_judges: PanelJudges, offline_data: None
) -> None:
    models_file = write_models_file(tmp_path / "m.yaml", panel_judges.base_url, {"judge-arena-mimic": {}})
    request = StudyRequest(
        bench="arena-hard-v0.1", judge="judge-arena-mimic", out=tmp_path / "study", items=30,
        models_file=models_file, check=False, progress=False, n_bootstrap=200,
    )  # fmt: skip
    _, document = replace_judge(request, None, dry_run=False, console=Console(stderr=True))
    assert document is not None and document["items"]["agreement"] is None
    assert len(document["panel"]["models"]) == 12 and document["map"]["score_field"] == "score"
    assert document["leaderboard"]["spearman"]["estimate"] > 0.8
    assert "leaderboard level only" in " ".join(document["notes"])


def test_a_bad_anchor_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "replacement.json"
    path.write_text(json.dumps({"schema": "something else"}))
    with pytest.raises(JuristError, match="field 'schema'"):
        read_replacement(path)
    with pytest.raises(JuristError, match="no such file"):
        read_replacement(tmp_path / "none.json")


# -- retirement, and the judge card's gold labels --------------------------------------------------------
def test_retired_models_are_named_with_their_shutdown() -> None:
    import datetime

    from jurist.config import retirement_phrase, shutdown_of

    assert shutdown_of("openai/gpt-4-1106-preview") == "2026-10-23"
    assert shutdown_of("gpt-4.1-2025-04-14") == "2027-01-14" and shutdown_of("gpt-4.1-mini") == "2027-01-14"
    assert shutdown_of("gpt-4.1-nano") == "2026-10-23" and shutdown_of("claude-opus-4") is None
    day = datetime.date(2026, 12, 2)
    assert retirement_phrase("gpt-4o", day) == "gpt-4o shuts down on 2027-01-14"
    assert retirement_phrase("o3-mini", day) == "o3-mini was shut down on 2026-10-23"


def test_a_run_with_the_retired_reference_judge_points_to_a_replacement() -> None:
    from jurist.benchmarks.presets import judge_preset
    from jurist.config import ModelSpec

    info = {
        "reference_judge": {"model": "gpt-4-1106-preview", "prompt_version": "p", "protocol": "alpaca-eval"}
    }
    spec = ModelSpec(model="gpt-4-1106-preview", api_type="openai")
    (first, *_) = judge_preset(info, {"ref": spec}, {"ref": "alpaca-eval"}).lines("alpaca-eval")
    assert "gpt-4-1106-preview was shut down on 2026-10-23" in first
    assert "jurist judges replace --bench alpaca-eval" in first
    other = judge_preset(info, {"c": ModelSpec(model="judge-x", api_type="openai")}, {}).lines("alpaca-eval")
    assert not any("shut down" in line for line in other)


def test_the_pre_run_check_names_a_retired_models_shutdown(tmp_path: Path, mock_server: Any) -> None:
    import subprocess
    import sys

    server = mock_server(faults={"Reply with one word": ["404"] * 10})
    write_models_file(tmp_path / "m.yaml", server.base_url, {"old": {"model": "gpt-4-1106-preview"}})
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--models-file", "m.yaml", "--model", "old", "--judge", "old",
         "--limit", "1", "--out", "r", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert (
        "unknown model 'gpt-4-1106-preview' (HTTP 404): gpt-4-1106-preview was shut down on 2026-10-23"
        in line
    )
    assert "jurist judges replace" in line


@needs_panel
def test_the_card_reads_the_retired_verdicts_as_gold(
    mimic_study: Any, run_quiet: Any, tmp_path: Path
) -> None:
    from jurist.audit import gold_card

    folder, document, models_file = mimic_study
    assert document["retired_verdicts"] == "retired_verdicts.jsonl"
    model = HELD_OUT[0]
    run = tmp_path / "run"
    run_quiet(
        bench="alpaca-eval", bench_options={"lc": "estimate"}, models_file=models_file, models=[model],
        judges=["judge-mimic-85"], answers_file=_answers_file(tmp_path, model), out=run, n_bootstrap=0,
        judge_card=0,
    )  # fmt: skip
    card = gold_card(run, folder / "study" / "replacement.json")
    found = card["judges"]["judge-mimic-85"]["probes"]["gold_agreement"]
    assert 0.80 <= found["estimate"] <= 0.90 and found["n"] >= 800
    assert found["against"].startswith("the retired judge gpt-4-1106-preview's own verdicts")


@needs_panel
def test_the_command_line_lists_retirements_and_dry_runs_a_study(
    tmp_path: Path, panel_judges: PanelJudges
) -> None:
    import os

    env = {**os.environ, "JURIST_DATA_DIR": str(SHARED_DATA), "JURIST_CACHE_DIR": str(tmp_path / "cache")}
    write_models_file(tmp_path / "m.yaml", panel_judges.base_url, {"judge-mimic-75": {}})
    listed = subprocess.run(
        [sys.executable, "-m", "jurist", "list"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = " ".join(listed.stdout.split())
    assert "alpaca-eval: the reference judge gpt-4-1106-preview was shut down on 2026-10-23" in text
    assert "jurist judges replace --bench alpaca-eval --judge MODEL" in text
    dry = subprocess.run(
        [sys.executable, "-m", "jurist", "judges", "replace", "--bench", "alpaca-eval",
         "--judge", "judge-mimic-75", "--models", "3", "--items", "5", "--models-file", "m.yaml",
         "--dry-run", "--no-check", "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "nothing sent" in dry.stdout and " 15 " in dry.stdout  # 3 models x 5 questions
    assert not (tmp_path / "replacements").exists()
    wrong = subprocess.run(
        [sys.executable, "-m", "jurist", "judges", "replace", "--bench", "ifeval", "--judge", "x"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (
        wrong.returncode == 2 and "no replacement panel" in wrong.stderr and "Traceback" not in wrong.stderr
    )
