"""HealthBench as simple-evals scores it after PR #108: the length adjustment on the shared 500-row subset,
reproduced by running upstream's own ``healthbench_eval.py`` (PR #108's merge, byte for byte, from the
shared data) with the same mock grader, to the decimal; the options as upstream takes them."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import shutil
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA
from jurist.benchmarks import healthbench
from jurist.errors import JuristError
from jurist.families.rubric.score import LENGTH_ADJUSTED, LengthAdjustment, score_rubric_points
from jurist.judging.base import JudgeItem
from jurist.judging.rubric import RubricJudge
from test_rubric_judge import FakeClient, hb_grader, hb_reply, met_rule, spec

DATA = SHARED_DATA / "healthbench" / "healthbench_500_subset.jsonl"
UPSTREAM = SHARED_DATA / "healthbench" / "upstream-pr108" / "healthbench_eval.py"
SETTINGS = [(2000.0, 0.0147), (300.0, 0.4)]  # HealthBench Professional's constants; one that clips at 0


def answer_for(prompt: list[dict[str, str]]) -> str:
    """A policy's answer, known to both sides: its length (0 to ~6,000 characters, some not ASCII) from a
    digest of the conversation."""
    digest = hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).digest()
    size = int.from_bytes(digest[:2], "big") % 6000
    return ("Drink water, rest; see a doctor — é ✓ " * 200)[:size]


# -- upstream's module, run with stand-ins for the harness around it (not upstream code) ---------------------
@dataclass
class _SingleEvalResult:
    score: float | None
    metrics: dict[str, float] = field(default_factory=dict)
    html: str | None = None
    convo: Any = None
    example_level_metadata: dict[str, Any] | None = None


@dataclass
class _EvalResult:
    score: float | None
    metrics: dict[str, float] | None
    htmls: list[Any]
    convos: list[Any]
    metadata: dict[str, Any] | None


class _Template:
    def render(self, **_: Any) -> str:
        return ""


def _harness(package: Path) -> None:
    """simple-evals' ``common``, ``types`` and sampler modules as far as healthbench_eval.py uses them."""
    (package / "__init__.py").write_text("")
    (package / "sampler").mkdir()
    (package / "sampler" / "__init__.py").write_text("")
    (package / "sampler" / "chat_completion_sampler.py").write_text(
        "OPENAI_SYSTEM_MESSAGE_API = 'stand-in'\nclass ChatCompletionSampler: pass\n"
    )
    (package / "types.py").write_text(
        "from tests_stand_ins import Eval, EvalResult, MessageList, SamplerBase, SingleEvalResult\n"
    )
    (package / "common.py").write_text(
        "from tests_stand_ins import HTML_JINJA, jinja_env, map_with_progress\n"
    )


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[types.ModuleType]:
    root = tmp_path_factory.mktemp("simple-evals")
    package = root / "se_pr108"
    package.mkdir()
    _harness(package)
    shutil.copyfile(UPSTREAM, package / "healthbench_eval.py")  # byte for byte, in a temporary folder only
    stand_ins = types.ModuleType("tests_stand_ins")
    stand_ins.Eval = object  # type: ignore[attr-defined]
    stand_ins.SamplerBase = object  # type: ignore[attr-defined]
    stand_ins.MessageList = list  # type: ignore[attr-defined]
    stand_ins.EvalResult = _EvalResult  # type: ignore[attr-defined]
    stand_ins.SingleEvalResult = _SingleEvalResult  # type: ignore[attr-defined]
    stand_ins.HTML_JINJA = ""  # type: ignore[attr-defined]
    stand_ins.jinja_env = types.SimpleNamespace(from_string=lambda _: _Template())  # type: ignore[attr-defined]
    stand_ins.map_with_progress = lambda fn, xs, num_threads=1, pbar=False: [fn(x) for x in xs]  # type: ignore[attr-defined]
    blobfile = types.ModuleType("blobfile")
    blobfile.BlobFile = open  # type: ignore[attr-defined]
    added = {"tests_stand_ins": stand_ins, "blobfile": blobfile, "pandas": types.ModuleType("pandas")}
    saved = {name: sys.modules.get(name) for name in added}
    sys.modules.update(added)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("se_pr108.healthbench_eval")
    finally:
        sys.path.remove(str(root))
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        for name in [n for n in sys.modules if n.startswith("se_pr108")]:
            del sys.modules[name]


def upstream_grader(messages: list[dict[str, str]]) -> Any:
    """The mock grader behind upstream's eval: the same decision as jurist's (``met_rule``)."""
    prompt = messages[-1]["content"]
    item = prompt.rpartition("# Rubric item\n")[2].partition("\n\n# Instructions")[0]
    criterion = item.split("] ", 1)[1]
    reply = json.dumps({"explanation": "rule", "criteria_met": met_rule(criterion)})
    return types.SimpleNamespace(response_text=f"```json\n{reply}\n```")


def upstream_policy(messages: list[dict[str, str]]) -> Any:
    return types.SimpleNamespace(
        response_text=answer_for(messages), response_metadata={}, actual_queried_message_list=messages
    )


def run_upstream(module: types.ModuleType, center: float, penalty: float) -> Any:
    evaluation = module.HealthBenchEval(
        grader_model=upstream_grader,
        input_path=str(DATA),
        length_adjustment_center=center,
        length_adjustment_penalty_per_500_chars=penalty,
        n_threads=1,
    )
    return evaluation(upstream_policy)


@pytest.fixture(scope="module")
def jurist_points() -> list[dict[str, Any]]:
    """jurist's rubric judge over the 500 rows, with the same answers and the same mock grader."""
    questions = healthbench.read_questions(DATA)
    kind = RubricJudge(hb_grader(), spec())
    client = FakeClient(hb_reply)

    async def main() -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = []
        for question in questions:
            item = JudgeItem("g", "m", question, 0, answer_for(question.metadata["messages"]))
            points.extend(kind.outcomes(await kind.judge(client, item, cache="use")))  # type: ignore[arg-type]
        return points

    return asyncio.run(main())


@pytest.mark.parametrize(("center", "penalty"), SETTINGS)
def test_length_adjusted_score_equals_upstreams_on_the_shared_subset(
    upstream: types.ModuleType, jurist_points: list[dict[str, Any]], center: float, penalty: float
) -> None:
    result = run_upstream(upstream, center, penalty)
    (row,) = score_rubric_points(
        jurist_points,
        suite="healthbench",
        variant="simple-evals",
        n_bootstrap=100,
        seed=0,
        ci_level=0.9,
        length=LengthAdjustment(center, penalty),
    )
    assert row["n_answers"] == result.metrics[f"{LENGTH_ADJUSTED}:n_samples"] == 500
    assert row["score"] == pytest.approx(float(result.score), abs=1e-12)  # the headline stays unadjusted
    adjusted = row["length_adjusted"]
    assert adjusted["score"] == pytest.approx(float(result.metrics[LENGTH_ADJUSTED]), abs=1e-12)
    assert adjusted["score"] != pytest.approx(row["score"], abs=1e-6)  # the adjustment did something
    assert row["metrics"][LENGTH_ADJUSTED]["score"] == adjusted["score"]
    assert (adjusted["center"], adjusted["penalty_per_500_chars"]) == (center, penalty)
    assert adjusted["answers_without_length"] == 0


def test_each_answers_adjustment_is_upstreams_function(upstream: types.ModuleType) -> None:
    adjust = LengthAdjustment(2000.0, 0.022)
    for score, text in [(0.8, "a" * 2500), (0.1, ""), (-0.3, "é" * 123), (1.0, "✓" * 9001)]:
        ours = adjust.adjusted(score, len(text))
        theirs = upstream.calculate_length_adjusted_score(
            score, text, center=2000.0, penalty_per_500_chars=0.022
        )
        assert ours == theirs


def test_the_clipped_mean_of_a_heavy_penalty_is_zero_as_upstreams(
    upstream: types.ModuleType, jurist_points: list[dict[str, Any]]
) -> None:
    result = run_upstream(upstream, 0.0, 5.0)
    (row,) = score_rubric_points(
        jurist_points, suite="healthbench", variant="simple-evals", n_bootstrap=10, seed=0, ci_level=0.9,
        length=LengthAdjustment(0.0, 5.0),
    )  # fmt: skip
    assert row["length_adjusted"]["score"] == float(result.metrics[LENGTH_ADJUSTED]) == 0.0


def test_no_adjustment_unless_asked(jurist_points: list[dict[str, Any]]) -> None:
    (row,) = score_rubric_points(
        jurist_points, suite="healthbench", variant="simple-evals", n_bootstrap=10, seed=0, ci_level=0.9
    )
    assert "length_adjusted" not in row and LENGTH_ADJUSTED not in row["metrics"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"length_penalty": "0.02"}, "both or neither"),
        ({"length_center": "2000"}, "both or neither"),
        ({"length_penalty": "-1", "length_center": "2000"}, ">= 0"),
        ({"length_penalty": "0.02", "length_center": "nan"}, ">= 0"),
        ({"length_penalty": "x", "length_center": "2000"}, "not a number"),
    ],
)
def test_the_options_are_refused_as_upstream_refuses_them(options: dict[str, str], message: str) -> None:
    with pytest.raises(JuristError, match=message):
        healthbench.length_adjustment(options)


def test_the_options_are_recorded_for_run_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    bench = healthbench.benchmark({"length_penalty": "0.0147", "length_center": "2000"})
    recorded = bench.info["length_adjustment"]
    assert recorded["center"] == 2000.0 and recorded["penalty_per_500_chars"] == 0.0147
    assert LengthAdjustment.from_info(recorded) == LengthAdjustment(2000.0, 0.0147)
    assert "length_adjustment" not in healthbench.benchmark({}).info


# -- the GPT-5.4 grader preset (-B grader=gpt-5.4) beside the classic one --------------------------------
def test_the_two_grader_presets_as_upstream_sets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    classic = healthbench.benchmark({})
    new = healthbench.benchmark({"grader": "gpt-5.4"})
    old_ref, new_ref = classic.info["reference_judge"], new.info["reference_judge"]
    assert (old_ref["model"], old_ref["temperature"], old_ref["max_tokens"]) == (
        "gpt-4.1-2025-04-14",
        0.5,
        2048,
    )
    assert (new_ref["model"], new_ref["temperature"], new_ref["max_tokens"]) == (
        "gpt-5.4-2026-03-05",
        None,
        None,
    )
    assert new_ref["params"] == {"reasoning_effort": "low"} and new.judge_protocol == "healthbench-gpt-5.4"
    assert new.info["grader"]["api"] == "responses" and new.info["grader_preset"] == "gpt-5.4"
    with pytest.raises(JuristError, match="no grader"):
        healthbench.benchmark({"grader": "gpt-9"})
    with pytest.raises(JuristError, match="variant=eval-framework"):
        healthbench.benchmark({"grader": "gpt-5.4", "variant": "eval-framework"})


def test_the_gpt_5_4_grader_request_is_upstreams_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Professional grader's request, through the engine's Responses wire to a mock of /v1/responses:
    the grader prompt alone as input (no system message), reasoning effort low, no temperature, no limit."""
    from jurist.config import Endpoint, ModelSpec
    from jurist.engine.client import Engine
    from jurist.judging.kinds import JudgeKindSetup
    from jurist.judging.rubric import judge_kind
    from test_responses_api import ResponsesMock

    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    bench = healthbench.benchmark({"grader": "gpt-5.4"})
    question = bench.questions[0]
    server = ResponsesMock()
    server.reply = lambda body: json.dumps({"explanation": "ok", "criteria_met": True})
    server.start()
    try:
        spec = ModelSpec(
            alias="g",
            model="gpt-5.4-2026-03-05",
            api_type="openai-responses",
            endpoints=[Endpoint(api_base=server.base_url, api_key="sk-test-000")],
        )
        setup = JudgeKindSetup(
            spec=spec,
            protocol=None,
            default_protocol=bench.judge_protocol,
            prompt_file=None,
            prompt_source=bench.judge_prompt_source,
        )
        kind = judge_kind(setup)
        engine = Engine({"g": spec}, max_concurrency=4)

        async def main() -> dict[str, Any]:
            try:
                return await kind.judge(
                    engine.client("g"), JudgeItem("g", "m", question, 0, "An answer."), cache="off"
                )
            finally:
                await engine.aclose()

        record = asyncio.run(main())
    finally:
        server.stop()
    assert len(server.bodies) == len(question.metadata["rubrics"])
    template = upstream_template()
    for body in server.bodies:
        assert set(body) == {"model", "input", "reasoning"} and body["reasoning"] == {"effort": "low"}
        (message,) = body["input"]
        assert message["role"] == "user" and message["content"].startswith(template.split("<<")[0])
    assert record["protocol"] == "healthbench-gpt-5.4"


def upstream_template() -> str:
    """PR #108's ``GRADER_TEMPLATE`` (unchanged since jurist's pin): its text, read as data."""
    from jurist.judging.python_strings import read_python_strings

    return read_python_strings(UPSTREAM, ("GRADER_TEMPLATE",), ("GRADER_TEMPLATE",))["GRADER_TEMPLATE"]
