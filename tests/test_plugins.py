"""Benchmarks and judge kinds from installed packages' entry points (``jurist.benchmarks``,
``jurist.judge_kinds``), read by importlib.metadata from real ``*.dist-info`` folders written here into a
folder put on ``sys.path``: the same files pip writes, so discovery is the real one, only faster than an
install (the end-to-end install is tests/test_plugin_package.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurist.benchmarks.registry import benchmark_names, benchmark_provider, load_benchmark
from jurist.errors import JuristError
from jurist.judging import kinds
from jurist.judging.kinds import JudgePromptSource
from jurist.judging.rubric_prompts import rubric_grader
from jurist.plugins import forget_plugins, plugins

GOOD = """
from jurist.benchmarks import Benchmark, BenchmarkCard, Question, take_options

def benchmark(options):
    take_options("toy-plugin", options, {})
    return Benchmark("toy-plugin", [Question("q1", "Say hi."), Question("q2", "Say bye.")], baseline="ref",
                     shipped_answers={"ref": {"q1": "hi", "q2": "bye"}}, judge_protocol="jurist-pairwise")

def catalog_card(name):
    return BenchmarkCard(name, "pairwise", 1, None, (), about="two toy questions")

def not_a_benchmark(options):
    return "a string"

def raises(options):
    raise ValueError("the toy plugin is broken\\nsecond line")
"""

KIND = """
OUTCOME = "point"

def judge_kind(setup):
    raise RuntimeError("no grader here")

def card_probes(kind, context):
    return []
"""


def _distribution(site: Path, name: str, modules: dict[str, str], points: dict[str, dict[str, str]]) -> None:
    """An installed distribution as pip leaves it: its modules and a dist-info with METADATA and
    entry_points.txt."""
    for module, text in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2\n", encoding="utf-8")
    groups = "".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items()) + "\n"
        for group, entries in points.items()
    )
    (info / "entry_points.txt").write_text(groups, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` holding two installed distributions: a good plugin and a broken one."""
    folder = tmp_path / "site"
    folder.mkdir()
    _distribution(
        folder,
        "toy-plugins",
        {"toy_bench": GOOD, "toy_kind": KIND},
        {
            "jurist.benchmarks": {
                "toy-plugin": "toy_bench",
                "toy-not-a-benchmark": "toy_bench:not_a_benchmark",
                "toy-raises": "toy_bench:raises",
                "starter": "toy_bench",  # a built-in name: never looked up among the plugins
            },
            "jurist.judge_kinds": {"toy-kind": "toy_kind"},
        },
    )
    _distribution(
        folder,
        "broken-plugin",
        {"broken_bench": "import a_module_that_is_not_installed\n"},
        {
            "jurist.benchmarks": {"toy-broken": "broken_bench"},
            "jurist.judge_kinds": {"toy-broken": "broken_bench"},
        },
    )
    monkeypatch.syspath_prepend(str(folder))
    forget_plugins()
    yield folder
    forget_plugins()


def one_line(error: pytest.ExceptionInfo[JuristError]) -> str:
    message = str(error.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_an_installed_benchmark_is_found_built_and_named_with_its_package(site: Path) -> None:
    assert {"toy-plugin", "toy-broken", "starter"} <= set(benchmark_names())
    assert "toy-plugin" not in benchmark_names(installed=False)
    assert benchmark_provider("toy-plugin") == "toy-plugins 1.2" and benchmark_provider("starter") is None
    bench = load_benchmark("toy-plugin")
    assert bench.name == "toy-plugin" and [q.uid for q in bench.questions] == ["q1", "q2"]
    assert load_benchmark("starter").name == "starter"  # the built-in, not the plugin's entry of that name
    with pytest.raises(JuristError, match="-B x: toy-plugin has no such option"):
        load_benchmark("toy-plugin", {"x": "1"})  # a plugin's own JuristError passes as it is


def test_a_broken_benchmark_plugin_is_one_line_naming_its_distribution_and_entry_point(site: Path) -> None:
    with pytest.raises(JuristError) as broken:
        load_benchmark("toy-broken")
    message = one_line(broken)
    assert "broken-plugin 1.2" in message and "toy-broken = broken_bench" in message
    assert "ModuleNotFoundError" in message and "a_module_that_is_not_installed" in message
    with pytest.raises(JuristError) as raised:
        load_benchmark("toy-raises")
    assert "toy-raises = toy_bench:raises" in one_line(raised) and "the toy plugin is broken" in str(
        raised.value
    )
    with pytest.raises(JuristError) as wrong:
        load_benchmark("toy-not-a-benchmark")
    assert "returned str, not a Benchmark" in one_line(wrong)


def test_a_package_whose_entry_points_cannot_be_read_is_left_out_in_one_logged_line(
    site: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Not in the shared folder: other libraries, pydantic's plugin loader among them, fail on such a
    package whatever jurist does.)"""
    garbled = (
        site.parent / "garbled" / "garbled_plugin-0.1.dist-info"
    )  # an entry_points.txt importlib cannot parse
    garbled.mkdir(parents=True)
    (garbled / "METADATA").write_text("Metadata-Version: 2.1\nName: garbled-plugin\nVersion: 0.1\n")
    (garbled / "entry_points.txt").write_text("[jurist.benchmarks]\nno equals sign here\n")
    monkeypatch.syspath_prepend(str(garbled.parent))
    forget_plugins()
    with caplog.at_level("WARNING", logger="jurist.plugins"):
        assert "toy-plugin" in benchmark_names()  # the other packages' plugins are found as ever
    (record,) = [r for r in caplog.records if "garbled-plugin" in r.getMessage()]
    assert "\n" not in record.getMessage() and "its plugins are left out" in record.getMessage()


def test_building_in_names_reads_no_package_metadata(site: Path) -> None:
    """``jurist --help`` builds every command's help (``--bench`` names the benchmarks), and a built-in
    benchmark or judge kind is found without reading any installed package's metadata."""
    from jurist.commands.list import bench_help

    forget_plugins()
    assert "starter" in bench_help() and load_benchmark("starter").name == "starter"
    assert kinds.judge_kind_outcome("rubric") == "point" and kinds.judge_kind_probes("pairwise")
    assert plugins.cache_info().currsize == 0


def test_a_question_file_path_reads_no_package_metadata(site: Path, tmp_path: Path) -> None:
    """``--bench path/question.jsonl`` is a file, never an entry point's name: the 0.3 s read of every
    installed package's metadata is not paid before the first request (a bare name still is looked up)."""
    questions = tmp_path / "question.jsonl"
    questions.write_text('{"uid": "a", "category": "hard_prompt", "prompt": "x"}\n')
    forget_plugins()
    assert load_benchmark(str(questions)).questions[0].uid == "a"
    assert plugins.cache_info().currsize == 0
    with pytest.raises(JuristError, match="neither a known benchmark"):
        load_benchmark(str(tmp_path / "missing.jsonl"))
    assert "toy-plugin" in benchmark_names()


def test_an_installed_judge_kind_is_found_and_a_broken_one_said_in_one_line(site: Path) -> None:
    assert (
        "toy-kind" in kinds.judge_kind_names() and kinds.judge_kind_provider("toy-kind") == "toy-plugins 1.2"
    )
    assert kinds.judge_kind_outcome("toy-kind") == "point"
    assert kinds.judge_kind_probes("toy-kind") == "toy_kind"  # its module has card_probes
    with pytest.raises(JuristError) as failed:
        kinds._factory("toy-kind")(None)  # type: ignore[arg-type]
    assert "building judge kind 'toy-kind' failed (RuntimeError: no grader here)" in one_line(failed)
    with pytest.raises(JuristError) as broken:
        kinds.judge_kind_outcome("toy-broken")
    assert "broken-plugin 1.2" in one_line(broken) and "[jurist.judge_kinds]" in str(broken.value)
    with pytest.raises(JuristError, match="unknown judge kind 'nope'"):
        kinds.judge_kind_outcome("nope")


def test_a_benchmark_hands_the_rubric_kind_its_own_grader(tmp_path: Path) -> None:
    """A rubric benchmark from outside brings its grader through its prompt source; jurist's graders are
    found by protocol name only when it brings none."""
    handed: list[object] = []

    def build(prompt_file: Path | None, source: JudgePromptSource) -> object:
        handed.append((prompt_file, source.origin))
        return "the plugin's grader"

    source = JudgePromptSource("its own", lambda: [], grader=build)
    assert rubric_grader("any-protocol-name", tmp_path / "p.txt", source) == "the plugin's grader"  # type: ignore[comparison-overlap]
    assert handed == [(tmp_path / "p.txt", "its own")]
    with pytest.raises(JuristError, match="unknown rubric protocol 'any-protocol-name'"):
        rubric_grader("any-protocol-name", None, JudgePromptSource("none", lambda: []))


def test_jurist_list_shows_the_package_and_a_broken_plugin_in_one_line(site: Path, tmp_path: Path) -> None:
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "400"}  # one line per note, unwrapped
    listed = subprocess.run(
        [sys.executable, "-m", "jurist", "list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert listed.returncode == 0, listed.stderr
    assert "toy-plugin: from the installed package toy-plugins 1.2" in listed.stdout
    (line,) = [line for line in listed.stdout.splitlines() if line.startswith("toy-broken: plugin")]
    assert "broken-plugin 1.2" in line and "ModuleNotFoundError" in line
    run = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--bench", "toy-broken", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert run.returncode == 2 and len(errors) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "broken-plugin 1.2" in errors[0] and "toy-broken = broken_bench" in errors[0]
