"""``jurist run --bench judgebench`` on the mock server; ``jurist judgebench score`` on stored outputs."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.judgebench import Pair, load_pairs, load_split, score_decisions, unswap
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl
from mock_verdicts import chance_draw
from test_judgebench import EXPECTED

JUDGEBENCH = SHARED_DATA / "judgebench"
needs_data = pytest.mark.skipif(not (JUDGEBENCH / "outputs").is_dir(), reason="shared JudgeBench data absent")
SOURCES = ("mmlu-pro-law", "livebench-reasoning", "livebench-math", "livecodebench")


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def write_pairs(path: Path, n: int, seed: int = 7) -> Path:
    """Synthetic pairs the mock can judge: the correct response is tagged [strong], the wrong one [weak]."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        label = rng.choice(["A>B", "B>A"])
        right, wrong = f"[strong] answer {i}", f"[weak] answer {i}"
        a, b = (right, wrong) if label == "A>B" else (wrong, right)
        record = {
            "pair_id": f"p{i:04d}",
            "original_id": None,
            "source": SOURCES[i % 4],
            "question": f"question number {i}?",
            "response_model": "synthetic",
            "response_A": a,
            "response_B": b,
            "label": label,
        }
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def chance_decision(judge: str, p_right: float, p_tie: float, shown_a: str, shown_b: str) -> str:
    """What mock judge ``judge-pNN[-tMM]`` says about one game (mirrors mock_openai.chance_verdict)."""
    right = "A>B" if shown_a.startswith("[strong]") else "B>A"
    draw = chance_draw(judge, shown_a, shown_b)
    return right if draw < p_right else "A=B" if draw < p_right + p_tie else unswap(right)  # type: ignore[arg-type,return-value]


@pytest.fixture
def setup(tmp_path: Path, mock_server: Any) -> tuple[Any, Path, Path]:
    server = mock_server()
    models = write_models_file(
        tmp_path / "models.yaml",
        server.base_url,
        {
            "judge-good": {},
            "judge-broken": {},
            "judge-p70": {},
            "judge-p80-t10": {},
            "judge-p60": {"parallel": 2},
        },
    )
    return server, models, write_pairs(tmp_path / "pairs.jsonl", 400)


def board(out: Path) -> dict[str, dict[str, Any]]:
    return {row["judge"]: row for row in json.loads((out / "judgebench.json").read_text())}


# ------------------------------------------------------------------------------------- stored outputs (CLI)


@needs_data
def test_score_command_reproduces_source_md(tmp_path: Path) -> None:
    result = jurist("judgebench", "score", str(JUDGEBENCH / "outputs"), "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {row["judge"]: row for row in json.loads(result.stdout)}
    assert set(rows) == set(EXPECTED)
    for judge, expected in EXPECTED.items():
        row = rows[judge]
        got = tuple(round(row[k], 2) for k in ("knowledge", "reasoning", "math", "coding", "overall"))
        assert got == expected, judge
        assert row["n"] == 350 and row["failed"] == 0
        assert set(row) == {"judge", "response_model", "n", "overall", "knowledge", "reasoning", "math"} | {
            "coding",
            "consistency",
            "failed",
        }
    table = jurist("judgebench", "score", *sorted(map(str, (JUDGEBENCH / "outputs").iterdir())), cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "arena_hard:o1-mini-2024-09-12" in table.stdout and "65.71" in table.stdout


# ------------------------------------------------------------------------------------------ running judges


def test_chance_judges_score_exactly_and_near_closed_form(setup: Any, run_quiet: Any) -> None:
    server, models, pairs_file = setup
    out = pairs_file.parent / "run"
    result = run_quiet(
        bench="judgebench",
        bench_options={"split": str(pairs_file)},
        models_file=models,
        judges=["judge-p70", "judge-p80-t10"],
        out=out,
    )
    assert result.exit_code == 0 and result.failures == 0
    # two judges, two games per pair, no re-asks; and the judge card's probes, within a tenth of those
    card = json.loads((out / "judge_card.json").read_text())["judges"]
    probes = sum(card[judge]["probe_requests"] for judge in card)
    assert server.stats.requests == 2 * 400 * 2 + probes and 0 < probes <= 2 * 400 * 2 // 10
    pairs = load_pairs(pairs_file)
    rows = board(out)
    for judge in card:  # the card's gold agreement is JudgeBench's accuracy
        gold = card[judge]["probes"]["gold_agreement"]
        assert 100 * gold["estimate"] == pytest.approx(rows[judge]["overall"], abs=0.01) and gold["n"] == 400
    for judge, p_right, p_tie in (("judge-p70", 0.7, 0.0), ("judge-p80-t10", 0.8, 0.1)):
        # Exact: recompute each game's draw as the mock made it, then apply JudgeBench's rule.
        decisions = [
            (
                chance_decision(judge, p_right, p_tie, pair.response_A, pair.response_B),
                chance_decision(judge, p_right, p_tie, pair.response_B, pair.response_A),
            )
            for pair in pairs
        ]
        expected = score_decisions(pairs, decisions, judge=judge)
        row = rows[judge]
        for field in ("overall", "knowledge", "reasoning", "math", "coding", "consistency"):
            assert row[field] == pytest.approx(getattr(expected, field)), (judge, field)
        assert row["failed"] == 0 and row["n"] == 400 and row["response_model"] == "synthetic"
        # And the closed form r^2 + 2 r t for independent games (reference B4), within 4 standard errors.
        closed = 100 * (p_right**2 + 2 * p_right * p_tie)
        assert abs(row["overall"] - closed) < 4 * 100 * (closed / 100 * (1 - closed / 100) / 400) ** 0.5
    # Stored judgments: one line per pair with both games, game 2 swapped.
    stored = read_jsonl(out / "judgments" / "judge-p70" / "response_B.jsonl")
    assert len(stored) == 400 and {r["uid"] for r in stored} == {p.pair_id for p in pairs}
    first = stored[0]
    assert first["kind"] == "pairwise" and first["sample"] == 0
    assert [g["a"] for g in first["games"]] == ["response_A", "response_B"]
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["bench"] == "judgebench" and run_json["status"] == "finished"
    assert run_json["usage"]["requests"] == server.stats.requests


def test_three_judges_share_the_global_limit(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    server = mock_server(delay=0.02)
    caps = {"judge-p60": 2, "judge-p70": 3, "judge-good": 6}  # 11 wanted in all, 8 allowed
    models = write_models_file(
        tmp_path / "models.yaml", server.base_url, {judge: {"parallel": cap} for judge, cap in caps.items()}
    )
    result = run_quiet(
        bench="judgebench",
        bench_options={"split": str(write_pairs(tmp_path / "pairs.jsonl", 40))},
        models_file=models,
        judges=list(caps),
        out=tmp_path / "run",
        max_concurrency=8,
    )
    assert result.exit_code == 0
    assert server.stats.requests == 3 * 40 * 2
    assert server.stats.peak_in_flight == 8  # the global cap binds, and all three judges ran at once
    for judge, cap in caps.items():
        assert 1 <= server.stats.peak_by_model[judge] <= cap, judge
    assert board(tmp_path / "run")["judge-good"]["overall"] == 100.0


def test_resume_sends_nothing_and_keeps_invalid_verdicts(setup: Any, run_quiet: Any) -> None:
    server, models, pairs_file = setup
    out = pairs_file.parent / "run"
    args: dict[str, Any] = {
        "bench": "judgebench",
        "bench_options": {"split": str(pairs_file)},
        "models_file": models,
        "judges": ["judge-good", "judge-broken"],
        "out": out,
        "limit": 12,
        "check": True,
    }
    first = run_quiet(**args)
    assert first.exit_code == 0
    assert server.stats.requests_by_model["judge-broken"] == 12 * 2 * 2  # every game re-asked once
    assert server.stats.probes == 2  # the pre-run check: one probe per endpoint of each busy judge
    rows = board(out)
    assert rows["judge-good"]["overall"] == 100.0 and rows["judge-good"]["consistency"] == 100.0
    broken = rows["judge-broken"]
    assert broken["overall"] == 0.0 and broken["failed"] == 24 and broken["consistency"] == 0.0
    requests, probes = server.stats.requests, server.stats.probes
    second = run_quiet(**args)
    assert second.requests == 0 and server.stats.requests == requests
    assert server.stats.probes == probes  # nothing to do, so nothing to check either
    assert board(out) == rows
    # --rejudge-invalid asks the broken judge again, and only it.
    run_quiet(**args, rejudge_invalid=True)
    assert server.stats.requests - requests == 12 * 2 * 2
    assert server.stats.requests_by_model["judge-good"] == 12 * 2


def test_failed_request_is_recorded_scored_as_missing_and_retried(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server(faults={"question number 3?": ["400"]})
    models = write_models_file(tmp_path / "models.yaml", server.base_url, {"judge-good": {}})
    args: dict[str, Any] = {
        "bench": "judgebench",
        "bench_options": {"split": str(write_pairs(tmp_path / "pairs.jsonl", 8))},
        "models_file": models,
        "judges": ["judge-good"],
        "out": tmp_path / "run",
    }
    first = run_quiet(**args)
    assert first.exit_code == 1 and first.failures == 1
    failures = read_jsonl(tmp_path / "run" / "failures.jsonl")
    assert failures[0]["uid"] == "p0003" and failures[0]["status"] == 400
    row = board(tmp_path / "run")["judge-good"]
    assert row["overall"] == 7 / 8 * 100 and row["failed"] == 2  # as upstream: no decision, pair counted
    before = server.stats.requests
    second = run_quiet(**args)
    # Only the failed game is sent again: the other game of that pair succeeded and comes from the cache.
    assert second.exit_code == 0 and server.stats.requests - before == 1
    assert board(tmp_path / "run")["judge-good"]["overall"] == 100.0


# -------------------------------------------------------------------------------------------- pair loading


@needs_data
def test_split_names_resolve_locally_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import jurist.benchmarks.judgebench as module

    def no_hub(split: str) -> list[Pair]:
        raise AssertionError("the Hub must not be tried when a local copy exists")

    monkeypatch.setattr(module, "load_pairs_from_hub", no_hub)
    monkeypatch.setenv("JURIST_JUDGEBENCH_DIR", str(JUDGEBENCH))
    name, pairs = load_split("claude")
    assert name == "claude" and len(pairs) == 270


def test_split_without_local_copy_tries_the_download_then_the_hub(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No local copy: the pinned download, then (``datasets`` installed, hub reachable) the Hub; when both
    fail, one error naming the data dir, the JudgeBench override and why each way failed."""
    import jurist.benchmarks.data_files as data_files
    import jurist.benchmarks.hub as hub
    import jurist.benchmarks.judgebench as module

    def no_network(pinned: object, url: str) -> bytes:
        raise OSError("no network")

    def offline(split: str) -> list[Pair]:
        raise ConnectionError("hub down")

    monkeypatch.setattr(data_files, "_fetch", no_network)
    monkeypatch.setattr(module, "load_pairs_from_hub", offline)
    monkeypatch.setenv("JURIST_JUDGEBENCH_DIR", str(tmp_path))
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    monkeypatch.setattr(module, "hub_client_installed", lambda: False)
    with pytest.raises(JuristError, match="no network.*JURIST_DATA_DIR.*JURIST_JUDGEBENCH_DIR"):
        load_split("gpt")
    monkeypatch.setattr(module, "hub_client_installed", lambda: True)
    monkeypatch.setattr(hub, "unreachable_reason", lambda: None)
    with pytest.raises(JuristError, match="JURIST_DATA_DIR.*hub down"):
        load_split("gpt")
    monkeypatch.setattr(
        module,
        "load_pairs_from_hub",
        lambda split: [Pair("x", None, "livecodebench", "q", "m", "a", "b", "A>B")],
    )
    assert load_split("gpt")[1][0].pair_id == "x"
    with pytest.raises(JuristError, match="neither gpt nor claude"):
        load_split("mistral")


@needs_data
def test_split_names_resolve_from_jurist_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common data dir holds JudgeBench as it holds every benchmark (the shared data's layout), its
    bytes checked against the pin; no download, no Hub."""
    import jurist.benchmarks.data_files as data_files
    import jurist.benchmarks.judgebench as module

    def no_fetch(*args: object) -> bytes:
        raise AssertionError("nothing may be downloaded when the data dir holds the split")

    monkeypatch.setattr(data_files, "_fetch", no_fetch)
    monkeypatch.setattr(module, "load_pairs_from_hub", no_fetch)
    monkeypatch.delenv("JURIST_JUDGEBENCH_DIR", raising=False)
    monkeypatch.setenv("JURIST_DATA_DIR", str(JUDGEBENCH.parent))
    assert [(name, len(pairs)) for name, pairs in map(load_split, ("gpt", "claude"))] == [
        ("gpt", 350),
        ("claude", 270),
    ]


@needs_data
def test_cli_run_on_the_gpt_split(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"judge-p70": {}})
    env_args = ["--models-file", "m.yaml", "--judge", "judge-p70", "--limit", "20", "--no-progress"]
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--bench", "judgebench", "-B", "split=gpt", *env_args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JURIST_JUDGEBENCH_DIR": str(JUDGEBENCH)},
    )
    assert result.returncode == 0, result.stderr
    assert "judge-p70" in result.stdout and "overall" in result.stdout
    (row,) = json.loads((tmp_path / "runs" / "judgebench-gpt" / "judgebench.json").read_text())
    assert row["n"] == 20 and row["response_model"] == "gpt-4o-2024-05-13"
    assert server.stats.requests == 40 and server.stats.probes == 1
    misuse = jurist("run", "-B", "split=gpt", cwd=tmp_path)
    assert misuse.returncode == 2 and "-B split: starter has no such option" in misuse.stderr
