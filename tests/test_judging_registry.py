"""Judge kinds come from a registry, and a benchmark hands its judge kind its prompt: judging/ imports no
benchmark module, a kind reads the pinned texts only through what its benchmark hands it, and a kind
registered from outside is what a run judges with."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import alpaca_eval, healthbench, writingbench
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question
from jurist.benchmarks.registry import register as register_benchmark
from jurist.benchmarks.registry import unregister as unregister_benchmark
from jurist.config import ModelSpec
from jurist.errors import JuristError
from jurist.judging import kinds
from jurist.judging.alpaca_protocol import AlpacaJudge, parse_template
from jurist.judging.base import JudgeKind
from jurist.judging.kinds import JudgeKindSetup, JudgePromptSource, judge_kind_for
from jurist.judging.pairwise import PairwiseJudge
from jurist.judging.pairwise import judge_kind as pairwise_kind
from jurist.judging.rubric import RubricJudge
from test_alpaca_eval_bench import FAKE_TEMPLATE
from test_rubric_judge import FAKE_HB_TEMPLATE, write_hb_prompt

JUDGING = Path(__file__).resolve().parents[1] / "src" / "jurist" / "judging"
JUDGE = ModelSpec(model="judge-x")


def handed(files: Sequence[Path], presets: dict[str, Any] | None = None) -> JudgePromptSource:
    return JudgePromptSource("test origin", lambda: list(files), presets or {})


def never_looked_for() -> list[Path]:
    raise AssertionError("--judge-prompt replaces the texts: the pinned files must not be looked for")


# -- the rule of the house -----------------------------------------------------------------------------------
def test_judging_imports_no_benchmark_module() -> None:
    modules = sorted(JUDGING.rglob("*.py"))
    assert len(modules) > 5
    for path in modules:
        source = path.read_text(encoding="utf-8")
        assert "jurist.benchmarks" not in source, f"{path.name} names jurist.benchmarks"
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module == "jurist":
                assert "benchmarks" not in {alias.name for alias in node.names}, path.name


# -- the registry --------------------------------------------------------------------------------------------
def test_the_builtin_kinds_are_found_by_name() -> None:
    assert {"pairwise", "preference", "rubric"} <= set(kinds.judge_kind_names())
    kind = judge_kind_for("pairwise", protocol=None, default_protocol="jurist-pairwise", spec=JUDGE)
    assert isinstance(kind, PairwiseJudge) and kind.protocol_name == "jurist-pairwise"
    assert kind.outcome == "battle"
    with pytest.raises(JuristError, match="--judge-protocol: unknown protocol 'nope'"):
        judge_kind_for("pairwise", protocol="nope", default_protocol="jurist-pairwise", spec=JUDGE)


def test_an_unknown_kind_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(JuristError) as failed:
        judge_kind_for("pointwise", protocol=None, default_protocol="x", spec=JUDGE)
    message = str(failed.value)
    assert message == "unknown judge kind 'pointwise' (known: pairwise, preference, rubric)"


def test_a_registered_name_comes_and_goes() -> None:
    def built(setup: JudgeKindSetup) -> JudgeKind:
        return pairwise_kind(setup)

    kinds.register("pairwise-again", built)
    try:
        assert "pairwise-again" in kinds.judge_kind_names()
        kind = judge_kind_for("pairwise-again", protocol="simple", default_protocol="x", spec=JUDGE)
        assert isinstance(kind, PairwiseJudge) and kind.protocol_name == "simple"
    finally:
        kinds.unregister("pairwise-again")
    assert "pairwise-again" not in kinds.judge_kind_names()


def test_what_a_kinds_judgments_become_is_known_before_a_judge_is_built() -> None:
    """A run decides whether it needs baselines from the kind's outcome, not from a list of kind names: a
    kind registered as pointwise gets none, even under a benchmark that names a baseline."""
    from jurist.benchmarks.base import Benchmark, Question
    from jurist.run.plan import judges_against_baselines

    assert [kinds.judge_kind_outcome(n) for n in ("pairwise", "preference", "rubric")] == [
        "battle",
        "battle",
        "point",
    ]
    for name, (module, _) in kinds._BUILTIN.items():  # the table the plan reads says what each module says
        assert kinds._BUILTIN_OUTCOMES[name] == importlib.import_module(module).OUTCOME
    with pytest.raises(JuristError, match="unknown judge kind 'nope'"):
        kinds.judge_kind_outcome("nope")
    bench = Benchmark(name="b", questions=[Question(uid="q", prompt="p")], baseline="ref")
    kinds.register("graded-alone", pairwise_kind, outcome="point")
    try:
        assert kinds.judge_kind_outcome("graded-alone") == "point"
        assert judges_against_baselines(bench)
        assert not judges_against_baselines(dataclasses.replace(bench, judge_kind="graded-alone"))
    finally:
        kinds.unregister("graded-alone")


# -- a benchmark hands its kind its prompt -------------------------------------------------------------------
def test_the_preference_kind_reads_the_prompt_its_benchmark_hands_it(tmp_path: Path) -> None:
    template = tmp_path / "judge.txt"
    template.write_text(FAKE_TEMPLATE, encoding="utf-8")
    common: dict[str, Any] = {"protocol": None, "default_protocol": "alpaca-eval", "spec": JUDGE}
    kind = judge_kind_for("preference", prompt_source=handed([template]), **common)
    assert isinstance(kind, AlpacaJudge) and kind.protocol_name == "alpaca-eval"
    assert kind.template.messages == parse_template(FAKE_TEMPLATE, "x") and not kind.template.custom
    source = JudgePromptSource("test origin", never_looked_for)
    custom = judge_kind_for("preference", prompt_source=source, prompt_file=template, **common)
    assert isinstance(custom, AlpacaJudge) and custom.protocol_name == "alpaca-eval+custom"
    assert custom.template.sha256 == kind.template.sha256  # the same text, marked as the user's
    with pytest.raises(JuristError, match="needs its benchmark's judge prompt; pass --judge-prompt FILE"):
        judge_kind_for("preference", **common)


def test_the_rubric_kind_reads_the_prompt_and_sampling_its_benchmark_hands_it(tmp_path: Path) -> None:
    grader_file = write_hb_prompt(tmp_path / "healthbench_eval.py")
    presets = {"temperature": 0.25, "max_tokens": 99}
    common: dict[str, Any] = {
        "protocol": None,
        "default_protocol": "healthbench-eval-framework",
        "spec": JUDGE,
    }
    kind = judge_kind_for("rubric", prompt_source=handed([grader_file], presets), **common)
    assert isinstance(kind, RubricJudge) and kind.outcome == "point"
    grader = kind.grader
    assert (grader.source, dict(grader.presets)) == ("test origin", presets)
    turns, rubric = [{"role": "user", "content": "hi"}], [{"criterion": "says hi", "points": 1}]
    question = Question("q", "p", metadata={"messages": turns, "rubrics": rubric})
    (sent,) = grader.messages(question, "hello", 0)  # eval_framework's form: no system message
    assert sent["content"].startswith(FAKE_HB_TEMPLATE.split("<<conversation>>")[0])
    source = JudgePromptSource("test origin", never_looked_for, presets)
    custom = judge_kind_for("rubric", prompt_source=source, prompt_file=grader_file, **common)
    assert isinstance(custom, RubricJudge) and dict(custom.grader.presets) == presets  # texts only replaced
    assert custom.grader.source == f"{grader_file} (--judge-prompt)"
    with pytest.raises(JuristError, match="reads 2 prompt files; its benchmark handed 1"):
        simple_evals = {**common, "default_protocol": "healthbench"}
        judge_kind_for("rubric", prompt_source=handed([grader_file]), **simple_evals)
    with pytest.raises(JuristError, match="writingbench grader needs its benchmark's prompt files"):
        judge_kind_for("rubric", **{**common, "default_protocol": "writingbench"})


def test_the_benchmarks_hand_their_pinned_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (SHARED_DATA / "healthbench" / "healthbench_eval.py").is_file():
        pytest.skip("shared data not available")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    simple, framework = healthbench.judge_prompt("simple-evals"), healthbench.judge_prompt("eval-framework")
    assert [p.name for p in simple.files()] == ["healthbench_eval.py", "chat_completion_sampler.py"]
    assert [p.name for p in framework.files()] == ["healthbench_eval.py"]
    assert simple.origin == framework.origin == healthbench.SIMPLE_EVALS
    assert dict(simple.presets) == {"temperature": 0.5, "max_tokens": 2048}
    assert dict(framework.presets) == {"temperature": 1.0, "top_p": 0.95, "max_tokens": 2048}
    assert healthbench.benchmark({"variant": "eval-framework"}).judge_prompt_source == framework
    assert [p.name for p in writingbench.JUDGE_PROMPT.files()] == ["prompt.py"]
    assert writingbench.JUDGE_PROMPT.origin == writingbench.UPSTREAM
    assert [p.name for p in alpaca_eval.JUDGE_PROMPT.files()] == ["alpaca_eval_clf.txt"]
    assert alpaca_eval.benchmark({}).judge_prompt_source is alpaca_eval.JUDGE_PROMPT


# -- a kind registered in a test, used by a real run ---------------------------------------------------------
TOY_PROMPT = JudgePromptSource("the toy's own", never_looked_for)


@pytest.fixture
def spied() -> Iterator[list[tuple[str, JudgeKindSetup]]]:
    """``pairwise`` replaced by a registered factory that records what each judge's kind is built from
    and builds it as the built-in does; the toy benchmark hands its kind a prompt of its own."""
    built: list[tuple[str, JudgeKindSetup]] = []

    def factory(setup: JudgeKindSetup) -> JudgeKind:
        built.append((setup.spec.model, setup))
        return pairwise_kind(setup)

    def toy(options: BenchmarkOptions) -> Benchmark:
        questions = [Question(uid=f"toy-{i}", prompt=f"toy question {i}?") for i in range(3)]
        return Benchmark(
            name="toy-handed",
            questions=questions,
            shipped_answers={"toy-ref": {q.uid: f"reference answer {q.uid}" for q in questions}},
            baseline="toy-ref",
            judge_protocol="jurist-pairwise",
            judge_prompt_source=TOY_PROMPT,
        )

    kinds.register("pairwise", factory)
    register_benchmark("toy-handed", toy)
    yield built
    kinds.unregister("pairwise")
    unregister_benchmark("toy-handed")


def test_a_run_judges_with_the_registered_kind_and_hands_it_the_benchmarks_prompt(
    spied: list[tuple[str, JudgeKindSetup]], tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = write_models_file(tmp_path / "models.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    run = {"bench": "toy-handed", "models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    result = run_quiet(**run, out=tmp_path / "run")
    assert result.exit_code == 0 and server.stats.requests == 3 + 3 * 2  # answers, then two games each
    assert [(model, setup.prompt_source, setup.default_protocol) for model, setup in spied] == [
        ("judge-good", TOY_PROMPT, "jurist-pairwise")
    ]
    (row,) = [r for r in result.leaderboard if r["model"] == "strong" and r.get("judge") == "judge-good"]
    assert row["n"] == 3
    kinds.unregister("pairwise")  # the built-in again
    kind = judge_kind_for("pairwise", protocol=None, default_protocol="jurist-pairwise", spec=JUDGE)
    assert isinstance(kind, PairwiseJudge) and len(spied) == 1
