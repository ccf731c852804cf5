"""Reference judges: every named benchmark declares one; a judge entry's unset sampling is sent as the
reference's; a run records its judges against it in run.json and says, at its start and end, where they
depart from it."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question
from jurist.benchmarks.presets import (
    REFERENCE_KEY,
    ReferenceJudge,
    deviations,
    judge_preset,
    reference_of,
    same_model,
    with_reference_sampling,
)
from jurist.benchmarks.registry import benchmark_names, load_benchmark, register, unregister
from jurist.config import ModelSpec
from jurist.run.pipeline import Pipeline

REFERENCE = ReferenceJudge(
    model="gpt-4.1",
    temperature=0.0,
    max_tokens=16000,
    prompt_version="toy@1 prompts",
    protocol="simple",
    source="a test",
    params={"top_p": 0.95},
)


def test_unset_sampling_is_the_references_and_the_entry_wins() -> None:
    bare = ModelSpec(alias="j", model="judge", api_key="secret")
    filled = with_reference_sampling(bare, REFERENCE)
    assert (filled.temperature, filled.max_tokens, filled.passthrough_params()) == (
        0.0,
        16000,
        {"top_p": 0.95},
    )
    assert filled.api_key == "secret" and bare.temperature is None  # a copy; the key kept, never dumped
    own = ModelSpec.model_validate(
        {"alias": "j", "model": "judge", "temperature": 0.7, "max_tokens": 512, "top_p": 0.5}
    )
    assert with_reference_sampling(own, REFERENCE) is own
    fixed = ReferenceJudge(None, 1.0, 1, "p", "x", "s", fixed=("max_tokens",))
    assert with_reference_sampling(bare, fixed).max_tokens is None  # the protocol sends it itself


def test_models_named_alike_and_not() -> None:
    assert same_model("gpt-4.1", "gpt-4.1-2025-04-14") and same_model("gpt-4.1", "openai/GPT-4.1")
    assert same_model("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5-20250929")
    assert not same_model("gpt-4.1", "gpt-4.1-mini") and not same_model("gpt-4.1", "gpt-4o")


def test_deviations_name_each_difference() -> None:
    same = ModelSpec.model_validate(
        {"model": "gpt-4.1-2025-04-14", "temperature": 0.0, "max_tokens": 16000, "top_p": 0.95}
    )
    assert deviations(REFERENCE, same, "simple") == []
    other = ModelSpec.model_validate({"model": "qwen3-8b", "temperature": 0.6, "top_p": 0.95})
    assert deviations(REFERENCE, other, "structured") == [
        "model qwen3-8b (reference gpt-4.1)",
        "temperature 0.6 (reference 0.0)",
        "max_tokens left to the server (reference 16000)",
        "protocol structured (reference simple)",
    ]
    assert deviations(REFERENCE, same, "simple+custom", Path("mine.yaml")) == [
        "prompt mine.yaml (reference toy@1 prompts)"
    ]


def test_the_record_and_the_lines() -> None:
    info = {REFERENCE_KEY: REFERENCE.as_info()}
    assert reference_of(info) == REFERENCE and reference_of({}) is None
    specs = {"a": ModelSpec(model="gpt-4.1"), "b": ModelSpec(model="llama", temperature=0.0)}
    preset = judge_preset(info, specs, {"a": "simple", "b": "simple"})
    record = preset.record()
    assert record is not None and record["follows_reference"] is False
    assert record["judges"]["a"] == {
        "model": "gpt-4.1",
        "temperature": 0.0,
        "max_tokens": 16000,
        "params": {"top_p": 0.95},
        "protocol": "simple",
        "deviations": [],
    }
    (retiring, line) = preset.lines("toy")  # gpt-4.1 shuts down on 2027-01-14 (config/retirements.py)
    assert retiring.startswith("toy: the reference judge gpt-4.1 ") and "2027-01-14" in retiring
    assert retiring.endswith("jurist judges replace --bench toy --judge MODEL")
    assert line.startswith("toy: judge b deviates from the reference judge: model llama (reference gpt-4.1)")
    following = judge_preset(info, {"a": specs["a"]}, {"a": "simple"})
    assert following.follows_reference and following.lines("toy")[1:] == [
        "toy: judged as the reference (gpt-4.1, toy@1 prompts)"
    ]
    assert judge_preset({}, specs, {}).record() is None and judge_preset({}, specs, {}).lines("toy") == []


# -- every named benchmark declares its reference judge ------------------------------------------------------


def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


NAMED = {
    ("healthbench", ()): ("gpt-4.1-2025-04-14", 0.5, 2048, "healthbench"),
    ("healthbench", (("variant", "eval-framework"),)): (None, 1.0, 2048, "healthbench-eval-framework"),
    ("writingbench", ()): ("claude-sonnet-4-5", 1.0, 2048, "writingbench"),
    ("alpaca-eval", ()): ("gpt-4-1106-preview", 1.0, 1, "alpaca-eval"),
    ("arena-hard-v2.0", ()): ("gpt-4.1", 0.0, 16000, "arena-hard"),
    ("arena-hard-v0.1", ()): ("gpt-4-1106-preview", 0.0, 4096, "arena-hard"),
}


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared data not present")
@pytest.mark.skipif(
    "alpaca-eval" not in benchmark_names(), reason="the proposed registry diff is not applied"
)
@pytest.mark.parametrize(("name", "options"), list(NAMED))
def test_every_named_benchmark_declares_its_reference_judge(
    name: str, options: tuple[tuple[str, str], ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    reference = reference_of(load_benchmark(name, dict(options)).info)
    assert reference is not None and reference.prompt_version and reference.source
    assert (reference.model, reference.temperature, reference.max_tokens, reference.protocol) == NAMED[
        (name, options)
    ]


@pytest.mark.skipif(
    "alpaca-eval" not in benchmark_names(), reason="the proposed registry diff is not applied"
)
def test_a_rubric_graders_unset_sampling_is_no_deviation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rubric kind sends its grader's reference settings itself: an entry that leaves them unset is
    graded as the reference grades."""
    _no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    info = load_benchmark("healthbench", {}).info
    preset = judge_preset(info, {"g": ModelSpec(model="gpt-4.1-2025-04-14")}, {"g": "healthbench"})
    assert preset.follows_reference


# -- a run ---------------------------------------------------------------------------------------------------


def toy_benchmark(options: BenchmarkOptions) -> Benchmark:
    questions = [Question(uid=f"t{i}", prompt=f"toy question {i}?") for i in range(4)]
    return Benchmark(
        name="toy-preset",
        questions=questions,
        shipped_answers={"toy-ref": {q.uid: f"reference answer {q.uid}" for q in questions}},
        baseline="toy-ref",
        judge_protocol="simple",
        info={REFERENCE_KEY: REFERENCE.as_info()},
    )


@pytest.fixture
def toy() -> Iterator[None]:
    register("toy-preset", toy_benchmark)
    yield
    unregister("toy-preset")


@pytest.mark.skipif(not hasattr(Pipeline, "_say_notes"), reason="the proposed pipeline diff is not applied")
def test_a_run_fills_records_and_says_how_its_judges_depart(
    toy: None, tmp_path: Path, mock_server: Any, run_quiet: Any, capsys: Any
) -> None:
    server = mock_server()
    aliases: dict[str, dict[str, Any]] = {
        "strong": {},
        "judge-good": {"temperature": None, "max_tokens": None},  # left unset: the reference's are sent
        "gpt-4.1": {"temperature": 0.0, "max_tokens": 16000, "top_p": 0.95},
    }
    models = write_models_file(tmp_path / "m.yaml", server.base_url, aliases)
    out = tmp_path / "run"
    result = run_quiet(
        bench="toy-preset", models_file=models, models=["strong"], judges=["judge-good"], out=out
    )
    assert result.exit_code == 0
    bodies = [b for b in server.stats.bodies if b["model"] == "judge-good"]
    assert len(bodies) == 8 and all(
        (b["temperature"], b["max_tokens"], b["top_p"]) == (0.0, 16000, 0.95) for b in bodies
    )
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["bench_info"][REFERENCE_KEY]["model"] == "gpt-4.1"
    preset = run_json["judge_preset"]
    assert preset["judges"]["judge-good"]["deviations"] == ["model judge-good (reference gpt-4.1)"]
    assert run_json["model_specs"]["judge-good"]["max_tokens"] == 16000  # what was sent is what is recorded
    err = capsys.readouterr().err
    # said once, at the start
    assert err.count("toy-preset: judge judge-good deviates from the reference judge") == 1
    following = run_quiet(
        bench="toy-preset", models_file=models, models=["strong"], judges=["gpt-4.1"], out=tmp_path / "ref"
    )
    assert following.exit_code == 0
    assert (
        json.loads((tmp_path / "ref" / "run.json").read_text())["judge_preset"]["follows_reference"] is True
    )
    assert capsys.readouterr().err.count("toy-preset: judged as the reference (gpt-4.1, toy@1 prompts)") == 1
    other = run_quiet(
        bench="toy-preset", models_file=models, models=["strong"], judges=["gpt-4.1"], out=tmp_path / "other",
        judge_protocol="jurist-pairwise",
    )  # fmt: skip
    assert other.exit_code == 0
    assert json.loads((tmp_path / "other" / "run.json").read_text())["judge_preset"]["judges"]["gpt-4.1"][
        "deviations"
    ] == ["protocol jurist-pairwise (reference simple)"]
