"""``jurist run --bench ARENA_FILE`` end to end against the mock server, then ``jurist show`` on its battles.

The synthetic arena's stored answers carry the mock judges' strength tags, so every verdict is known: the
evaluated model ``better`` (strength 3) beats weak and worse answers, ties better ones, loses to strong.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena_synth import TIERS, SynthArena, build_arena, write_jsonl, write_parquet
from conftest import write_models_file
from jurist.store.jsonl import read_jsonl

STRENGTH = {tier: k for k, tier in enumerate(TIERS)}


@pytest.fixture(scope="module")
def arena() -> SynthArena:
    return build_arena(n_models=30, n_battles=20_000, n_rare=3, seed=5)


@pytest.fixture
def models_file(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server()
    aliases = ["better", "judge-good", "judge-p80"]
    return server, write_models_file(tmp_path / "models.yaml", server.base_url, {a: {} for a in aliases})


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def expected_winner(battle: dict[str, Any], tiers: dict[str, str]) -> str:
    def strength(name: str) -> int:
        return 3 if name == "better" else STRENGTH[tiers[name]]

    gap = strength(battle["model_a"]) - strength(battle["model_b"])
    return "model_a" if gap > 0 else "model_b" if gap < 0 else "tie"


def test_an_arena_file_runs_end_to_end_and_show_reproduces_it(
    arena: SynthArena, models_file: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    pytest.importorskip("pyarrow")
    server, models = models_file
    bench = write_parquet(arena, tmp_path / "arena.parquet")
    out = tmp_path / "run"
    args = {"bench": str(bench), "bench_options": {"n": "40", "seed": "3"}, "models_file": models, "out": out}
    result = run_quiet(**args, models=["better"], judges=["judge-good"])
    assert result.exit_code == 0
    assert server.stats.requests_by_model == {"better": 40, "judge-good": 40}  # one game per battle
    battles = read_jsonl(out / "battles.jsonl")
    judged = [b for b in battles if b["source"] == "llm-judge"]
    human = [b for b in battles if b["source"] == "human"]
    assert len(judged) == 40 and all(b["judge_model"] == "judge-good" for b in judged)
    assert all(b["judge_model"] is None for b in human) and len(human) > 15_000
    judgments = {j["uid"]: j for j in read_jsonl(out / "judgments" / "judge-good" / "better.jsonl")}
    for battle in judged:
        assert "better" in (battle["model_a"], battle["model_b"])
        opponent = battle["model_b"] if battle["model_a"] == "better" else battle["model_a"]
        assert opponent in arena.tiers  # the real arena model, not the alias
        assert battle["winner"] == expected_winner(battle, arena.tiers)
        (game,) = judgments[battle["uid"]]["games"]  # one game, shown as drawn
        assert (battle["model_a"] == "better") == (game["a"] == "better") == (game["game"] == 2)
    positions = {game["game"] for j in judgments.values() for game in j["games"]}
    assert positions == {1, 2}  # the drawn position varies across battles
    report = json.loads((out / "elo_ratings.json").read_text())
    assert report["model"] == "better" and report["judge_model"] == "judge-good"
    assert report["n_bootstraps"] == 100 and report["seed"] == 0
    assert set(report) >= {"arena", "model", "judge_model", "n_bootstraps", "seed", "ratings"}
    row = next(r for r in result.leaderboard if r["model"] == "better")
    me = next(e for e in report["ratings"] if e["source"] == "evaluated")
    assert row["rating"] == me["rating"] and me["n_battles"] == 40
    worse = [
        arena.rating[m]
        for m, t in arena.tiers.items()
        if t in ("weak", "worse") and m in report["jurist"]["models"]
    ]
    assert me["rating"] > max(worse) - 100  # it beat every weak and worse answer
    # The battles file alone gives the same elo_ratings.json through the command line.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "battles.jsonl").write_bytes((out / "battles.jsonl").read_bytes())
    shown = jurist("show", str(alone), "--write", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "better" in shown.stdout and "rank" in shown.stdout
    assert json.loads((alone / "elo_ratings.json").read_text()) == report
    # Running again sends nothing and changes nothing.
    again = run_quiet(**args, models=["better"], judges=["judge-good"])
    assert again.requests == 0 and json.loads((out / "elo_ratings.json").read_text()) == report


def test_both_positions_and_a_calibrated_temperature(
    arena: SynthArena, models_file: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models = models_file
    bench = write_jsonl(arena, tmp_path / "arena.jsonl")
    calibration = tmp_path / "calibration"
    cal = run_quiet(
        bench=str(bench),
        bench_options={"calibration": "60"},
        models_file=models,
        out=calibration,
        judges=["judge-p80"],
    )
    assert cal.exit_code == 0 and server.stats.requests_by_model == {"judge-p80": 60}
    fit = json.loads((calibration / "calibration.json").read_text())["judges"]["judge-p80"]
    assert (
        fit["n_pairs"] > 10 and fit["temperature"] > 0.0
    )  # the judge agrees with the humans more often than not
    shown_calibration = jurist("show", str(calibration), cwd=tmp_path)
    assert shown_calibration.returncode == 0, shown_calibration.stderr
    assert "judge-p80" in shown_calibration.stdout and "temperature" in shown_calibration.stdout
    out = tmp_path / "run"
    options = {"n": "15", "positions": "both", "calibration_run": str(calibration)}
    result = run_quiet(
        bench=str(bench),
        bench_options=options,
        models_file=models,
        out=out,
        models=["better"],
        judges=["judge-p80"],
    )
    assert result.exit_code == 0
    judged = [b for b in read_jsonl(out / "battles.jsonl") if b["source"] == "llm-judge"]
    assert len(judged) == 30 and {b["game"] for b in judged} == {1, 2}
    soft = {b["pref"] for b in judged if b["winner"] != "tie"}
    assert soft and all(0.0 < p < 1.0 for p in soft)  # sigmoid(T * gap), not 0 or 1
    shown = jurist("show", str(out), "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == json.loads((out / "elo_ratings.json").read_text())


def test_the_registry_names_the_hub_arenas_and_reads_jurist_data_dir(
    arena: SynthArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    from jurist.benchmarks.registry import benchmark_names, load_benchmark

    assert {"lmarena-100k", "lmarena-140k"} <= set(benchmark_names())
    write_parquet(arena, tmp_path / "lmarena-140k", shards=2, hub_style=True)
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    bench = load_benchmark("lmarena-140k", {"n": "9", "languages": "en"})
    assert bench.name == "lmarena-140k" and len(bench.questions) == 9
    assert {q.category for q in bench.questions} == {"en"}
    assert bench.info["revision"] == "6322995ab34d7c2693e3f47dd13fa5caa0789a74"
