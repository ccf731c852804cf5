"""``jurist list``, ``jurist --version`` and ``run --bench``'s help: every registered benchmark, with facts
that agree with the benchmark itself and presence read from the files where they are looked for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA
from jurist import __version__
from jurist.benchmarks import benchmark_card, benchmark_names, kind_of, load_benchmark
from jurist.benchmarks.base import Benchmark
from jurist.benchmarks.registry import register, unregister

ROOT = Path(__file__).resolve().parents[1]


def jurist(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )


def _listed(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    result = jurist("list", "--format", "json", *args, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    return {record["name"]: record for record in json.loads(result.stdout)}


def _needs(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {need["what"]: need for need in record["needs"]}


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    result = jurist("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"jurist {__version__}"


def test_run_help_names_every_registered_benchmark(tmp_path: Path) -> None:
    result = jurist("run", "--help", cwd=tmp_path, env={"COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    for name in benchmark_names():
        assert name in text, name
    assert "jurist list" in text


def test_every_benchmark_is_listed_with_a_card(tmp_path: Path) -> None:
    """With no data dir and an empty cache, only the starter is present; every absent need has its line."""
    records = _listed(tmp_path, env={"JURIST_DATA_DIR": "", "JURIST_ARENA_HARD_PROMPTS": ""})
    assert sorted(records) == benchmark_names()
    for name, record in records.items():
        assert record["kind"] in ("pairwise", "rubric", "rules", "judge-accuracy", "placement"), name
        assert record["default_samples"] == 1, name
        needs = _needs(record)
        assert "data" in needs, name
        if record["kind"] != "rules":
            assert "judge prompts" in needs, name
        for need in needs.values():
            if need["what"] == "checker data":
                continue  # NLTK's data: test_checker_data_is_found_where_nltk_looks
            if name == "starter":
                assert need["present"] and need["source"] == "package"
            else:
                assert not need["present"], (name, need)
                assert name in need["get"] and "--data-dir" in need["get"], (name, need)
    assert records["ifeval"]["kind"] == "rules" and records["judgebench"]["kind"] == "judge-accuracy"
    assert records["lmarena-100k"]["kind"] == "placement" and records["healthbench"]["kind"] == "rubric"
    assert records["arena-hard-v2.0"]["reference_judge"] == "gpt-4.1 (temperature 0, max_tokens 16000)"


def test_shared_data_dir_makes_the_files_present(tmp_path: Path) -> None:
    """``--data-dir`` (the shared data's layout as it is) holds every benchmark's data and prompts but the
    arenas' parquet files; the table says where each came from and the line for what is missing."""
    env = {"JURIST_DATA_DIR": "", "JURIST_ARENA_HARD_PROMPTS": ""}
    records = _listed(tmp_path, "--data-dir", str(SHARED_DATA), env=env)
    for name in ("ifeval", "ifbench", "healthbench", "writingbench", "alpaca-eval", "judgebench"):
        for need in ("data", "judge prompts"):
            if need in _needs(records[name]):
                assert _needs(records[name])[need]["source"] == "data dir", (name, need)
    for name in ("arena-hard-v2.0", "arena-hard-v0.1"):
        assert _needs(records[name])["data"]["present"] and _needs(records[name])["judge prompts"]["present"]
    assert not _needs(records["lmarena-100k"])["data"]["present"]
    table = jurist("list", "--data-dir", str(SHARED_DATA), cwd=tmp_path, env={**env, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert f"data dirs: {SHARED_DATA.resolve()}" in table.stdout
    assert "lmarena-100k data: `jurist run --bench lmarena-100k --dry-run`" in table.stdout


def test_checker_data_is_found_where_nltk_looks(tmp_path: Path) -> None:
    """IFEval's punkt_tab in the shared data's nltk_data (on NLTK_DATA) is present; IFBench also reads the
    stop words and the tagger, which it lacks: missing, with the downloader command and which prompts."""
    env = {"NLTK_DATA": str(SHARED_DATA / "nltk_data"), "JURIST_DATA_DIR": ""}
    records = _listed(tmp_path, env=env)
    punkt = _needs(records["ifeval"])["checker data"]
    assert punkt["present"] and punkt["source"] == "nltk path"
    assert Path(punkt["path"]) == SHARED_DATA / "nltk_data"
    ifbench = _needs(records["ifbench"])["checker data"]
    if ifbench["present"]:
        pytest.skip("NLTK's stop words and tagger are installed on this machine")
    assert "nltk.downloader" in ifbench["get"] and "stopwords" in ifbench["get"]
    assert "averaged_perceptron_tagger_eng" in ifbench["get"] and "ratio:stop_words" in ifbench["get"]


def test_presence_follows_the_cache_and_the_hub_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pinned file in jurist's download cache, an arena snapshot in the hub cache: both are found where
    a run would read them, and named so."""
    from jurist.benchmarks import ifeval
    from jurist.benchmarks.catalog import card_record
    from jurist.benchmarks.data_files import cache_dir
    from jurist.benchmarks.lmarena_data import HUB_ARENAS

    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    pinned = ifeval.VERSIONS["current"]
    cached = cache_dir() / pinned.cache_name
    cached.parent.mkdir(parents=True)
    cached.write_bytes((SHARED_DATA / "ifeval" / "input_data.jsonl").read_bytes())
    arena = HUB_ARENAS["lmarena-140k"]
    snapshot = cache_dir() / "hf" / f"datasets--{arena.repo_id.replace('/', '--')}" / "snapshots"
    (snapshot / arena.revision / "data").mkdir(parents=True)
    (snapshot / arena.revision / "data" / "train-00000-of-00001.parquet").write_bytes(b"PAR1")
    cards = {name: benchmark_card(name) for name in ("ifeval", "lmarena-140k", "lmarena-100k")}
    records = {name: card_record(card) for name, card in cards.items() if card is not None}
    assert _needs(records["ifeval"])["data"]["source"] == "jurist cache"
    assert _needs(records["lmarena-140k"])["data"]["source"] == "hub cache"
    assert not _needs(records["lmarena-100k"])["data"]["present"]


@pytest.mark.parametrize(
    "name",
    [
        "starter",
        "ifeval",
        "ifbench",
        "judgebench",
        "healthbench",
        "writingbench",
        "arena-hard-v0.1",
        "arena-hard-v2.0",
    ],
)
def test_a_card_agrees_with_the_benchmark_it_describes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kind, default samples and reference judge as the loaded benchmark has them (read from its data)."""
    from jurist.benchmarks.catalog import reference_text
    from jurist.benchmarks.presets import reference_of

    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    monkeypatch.delenv("JURIST_JUDGEBENCH_DIR", raising=False)
    card = benchmark_card(name)
    assert card is not None
    bench = load_benchmark(name)
    assert (card.kind, card.default_samples) == (kind_of(bench), bench.default_samples)
    assert card.reference_judge == reference_text(reference_of(bench.info))


def test_the_arena_card_agrees_with_an_arena_in_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A placement benchmark read from ``$JURIST_DATA_DIR/lmarena-100k/`` (a synthetic arena): listed as
    present there, and of the kind the loaded benchmark is."""
    pytest.importorskip("pyarrow")
    from arena_synth import build_arena, write_parquet
    from jurist.benchmarks.catalog import card_record

    write_parquet(
        build_arena(n_models=8, n_battles=2_000, seed=1), tmp_path / "lmarena-100k" / "data", shards=2
    )
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    card = benchmark_card("lmarena-100k")
    assert card is not None
    assert _needs(card_record(card))["data"]["source"] == "data dir"
    bench = load_benchmark("lmarena-100k", {"n": "5", "min_battles": "20"})
    assert (card.kind, card.default_samples) == (kind_of(bench), bench.default_samples) == ("placement", 1)


def test_a_registered_benchmark_is_listed_without_edits(tmp_path: Path) -> None:
    """The list iterates the registry: a benchmark added at run time appears, with its card or without."""
    from jurist.benchmarks.catalog import BenchmarkCard, Found, Need
    from jurist.commands.list import bench_help, catalog

    def toy(options: object) -> Benchmark:
        raise AssertionError("listing must not load a benchmark")

    card = BenchmarkCard("toy", "pairwise", 3, None, (Need("data", lambda: Found("package", "x"), "-"),))
    register("toy-carded", toy, card)
    register("toy-bare", toy)
    try:
        records = {record["name"]: record for record in catalog()}
        assert "toy-carded" in bench_help() and "toy-bare" in bench_help()
    finally:
        unregister("toy-carded")
        unregister("toy-bare")
    assert records["toy-carded"]["default_samples"] == 3 and records["toy-carded"]["needs"][0]["present"]
    assert records["toy-bare"]["kind"] is None and "no catalog card" in records["toy-bare"]["about"]


def test_list_refuses_a_bad_format_or_folder(tmp_path: Path) -> None:
    result = jurist("list", "--format", "csv", cwd=tmp_path)
    assert result.returncode == 2 and "--format" in result.stderr and "Traceback" not in result.stderr
    result = jurist("list", "--data-dir", str(tmp_path / "nope"), cwd=tmp_path)
    assert result.returncode == 2 and "not a folder" in result.stderr
