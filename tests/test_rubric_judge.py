"""The rubric judge kind: every item in flight at once within the limits, strict reading with one re-ask,
"unscored" recorded and counted, items kept across a failed attempt, prompts read as data and never run."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.benchmarks import healthbench, writingbench
from jurist.benchmarks.base import Question
from jurist.config import Endpoint, ModelSpec
from jurist.engine.cache.store import open_cache
from jurist.engine.client import Completion, Engine, ModelClient
from jurist.errors import InputError, JuristError
from jurist.judging.base import CacheMode, JudgeItem, PartialJudgment
from jurist.judging.python_strings import read_python_strings
from jurist.judging.rubric import RubricJudge
from jurist.judging.rubric_prompts import HealthBenchGrader, WritingBenchGrader, rubric_grader
from jurist.judging.rubric_readers import read_criteria_met, read_criteria_met_ef, read_score

# -- test prompts: clearly fake texts with upstream's placeholders (the mechanics, not upstream's wording) ---
FAKE_HB_TEMPLATE = (
    "FAKE GRADER PROMPT (test text, not upstream's)\n=== CONVERSATION ===\n<<conversation>>\n"
    "=== ITEM ===\n<<rubric_item>>\n=== END ==="
)
FAKE_HB_SYSTEM = "Fake grader system line for tests."
FAKE_WB_SYSTEM = "Fake critic system line for tests."
FAKE_WB_TEMPLATE = (
    "FAKE CRITIC PROMPT (test text)\nCRITERIA: {criteria}\nQUERY: {query}\nRESPONSE: {response}\n"
    'Reply as {{"score": n, "reason": "..."}} (doubled braces stay single).'
)
_ITEM = re.compile(r"=== ITEM ===\n(.*)\n=== END ===", re.DOTALL)
_POINTS = re.compile(r"^\[(-?\d+(?:\.\d+)?)\] (.*)$", re.DOTALL)
_CRITERIA = re.compile(r"CRITERIA: (\{.*\})\nQUERY: ", re.DOTALL)


def write_hb_prompt(path: Path) -> Path:
    """A --judge-prompt file in simple-evals' form (assignments of string literals, one with .strip())."""
    path.write_text(
        "import os  # never executed by jurist\n"
        f"GRADER_TEMPLATE = {json.dumps(FAKE_HB_TEMPLATE)}.strip()\n"
        f"OPENAI_SYSTEM_MESSAGE_API = {json.dumps(FAKE_HB_SYSTEM)}\n",
        encoding="utf-8",
    )
    return path


def write_wb_prompt(path: Path) -> Path:
    path.write_text(
        f"evaluate_system = {json.dumps(FAKE_WB_SYSTEM)}\n"
        f"evaluate_prompt = '''\n{FAKE_WB_TEMPLATE}\n'''.strip()\n",
        encoding="utf-8",
    )
    return path


def criterion_of(user: str) -> str:
    """The criterion a fake grader prompt asks about (without simple-evals' ``[points]`` prefix)."""
    match = _ITEM.search(user)
    assert match, user[:200]
    item = match.group(1)
    prefixed = _POINTS.match(item)
    return prefixed.group(2) if prefixed else item


def criteria_of(user: str) -> dict[str, Any]:
    """The WritingBench criterion a fake critic prompt shows (as Python wrote the dict)."""
    import ast

    match = _CRITERIA.search(user)
    assert match, user[:200]
    value = ast.literal_eval(match.group(1))  # test side only: the test reads its own rendering
    assert isinstance(value, dict)
    return value


def digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def met_rule(criterion: str) -> bool:
    """The fake grader's decision, known to the tests: about two criteria in three are met."""
    return digest(criterion)[0] % 3 != 0


def garbage_rule(criterion: str) -> bool:
    """Criteria the garbage-talking grader never grades readably (about one in eleven)."""
    return digest(criterion)[1] % 11 == 0


def score_rule(criterion: dict[str, Any]) -> int:
    """The fake critic's score of a WritingBench criterion, 1..10, known to the tests."""
    return digest(str(criterion["name"]) + str(criterion.get("criteria_description")))[0] % 10 + 1


def hb_reply(messages: list[dict[str, Any]], *, garbage: bool = False) -> str:
    user = next(m["content"] for m in messages if m["role"] == "user")
    criterion = criterion_of(user)
    if garbage and garbage_rule(criterion):
        return "Hmm, hard to say. Probably? {not json}"
    verdict = {"explanation": f"rule says {met_rule(criterion)}", "criteria_met": met_rule(criterion)}
    return "```json\n" + json.dumps(verdict, indent=2) + "\n```"


def wb_reply(messages: list[dict[str, Any]]) -> str:
    user = next(m["content"] for m in messages if m["role"] == "user")
    return json.dumps({"score": score_rule(criteria_of(user)), "reason": "rule"})


def install_reply(server: Any, reply: Callable[[list[dict[str, Any]]], str]) -> None:
    """Make the mock answer grader requests (fake prompts) with ``reply``; candidates as before."""
    original = server._reply

    def patched(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        response = original(model, messages, body)
        if user.startswith(("FAKE GRADER", "FAKE CRITIC")):
            payload = json.loads(response.body)
            payload["choices"][0]["message"]["content"] = reply(messages)
            response.body = json.dumps(payload).encode()
        return response

    server._reply = patched


class FakeClient:
    """A stand-in for ModelClient that answers from a function, for scoring tests with thousands of items."""

    def __init__(self, reply: Callable[[list[dict[str, Any]]], str]) -> None:
        self.reply = reply
        self.requests: list[list[dict[str, Any]]] = []

    async def complete(
        self, messages: list[dict[str, Any]], *, sample: int = 0, cache: CacheMode = "use", **params: Any
    ) -> Completion:
        self.requests.append(messages)
        return Completion(self.reply(messages), None, 10, 10, 0.0, 1)


def judge_all(kind: RubricJudge, client: Any, items: list[JudgeItem]) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        return [await kind.judge(client, item, cache="use") for item in items]

    return asyncio.run(main())


# -- a small rubric of our own -------------------------------------------------------------------------------
def hb_grader(simple_evals: bool = True, presets: dict[str, Any] | None = None) -> HealthBenchGrader:
    system = FAKE_HB_SYSTEM if simple_evals else None
    return HealthBenchGrader(FAKE_HB_TEMPLATE, system, simple_evals, "test", presets or {})


def toy_question(n_items: int = 6, uid: str = "q1") -> Question:
    rubric = [
        {
            "criterion": f"crit-{i} says something {i}",
            "points": (-3 if i % 4 == 3 else i + 1),
            "tags": ["axis:x"],
        }
        for i in range(n_items)
    ]
    messages = [{"role": "user", "content": "I have a headache."}]
    metadata = {"messages": messages, "rubrics": rubric, "example_tags": ["theme:toy"]}
    return Question(uid=uid, prompt="I have a headache.", category="toy", metadata=metadata)


def spec(url: str = "http://127.0.0.1:9/v1", **extra: Any) -> ModelSpec:
    return ModelSpec(alias="g", model="g", endpoints=[Endpoint(api_base=url)], **{"timeout": 5.0, **extra})


def item(question: Question, answer: str = "Rest and water.", sample: int = 0) -> JudgeItem:
    return JudgeItem("g", "m", question, sample, answer)


@pytest.fixture
def engine_for(mock_server: Any, tmp_path: Path) -> Iterator[Callable[..., tuple[Any, Engine]]]:
    engines: list[Engine] = []

    def make(
        *,
        parallel: int = 8,
        delay: float = 0.0,
        faults: dict[str, list[str]] | None = None,
        cache: bool = False,
        **extra: Any,
    ) -> tuple[Any, Engine]:
        server = mock_server(delay=delay, faults=faults or {})
        store = open_cache(tmp_path / "cache") if cache else None
        engine = Engine(
            {"g": spec(server.base_url, parallel=parallel, **extra)},
            max_concurrency=64,
            policy=FAST_RETRY,
            cache=store,
        )
        engines.append(engine)
        return server, engine

    yield make


def run(engine: Engine, coro: Callable[[ModelClient], Any]) -> Any:
    async def main() -> Any:
        try:
            return await coro(engine.client("g"))
        finally:
            await engine.aclose()

    return asyncio.run(main())


# -- concurrency and limits ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("parallel", "peak"), [(8, 6), (3, 3)])
def test_all_items_of_an_answer_are_in_flight_together_within_the_model_limit(
    engine_for: Any, parallel: int, peak: int
) -> None:
    server, engine = engine_for(parallel=parallel, delay=0.15)
    install_reply(server, hb_reply)
    kind = RubricJudge(hb_grader(), engine.specs["g"])
    record = run(engine, lambda client: kind.judge(client, item(toy_question(6)), cache="off"))
    assert server.stats.requests == 6 and server.stats.peak_by_model["g"] == peak
    assert [e["met"] for e in record["items"]] == [met_rule(f"crit-{i} says something {i}") for i in range(6)]
    assert record["kind"] == "rubric" and record["unscored"] == 0 and record["invalid"] is False


def test_reference_sampling_settings_fill_only_what_the_models_file_leaves_unset(engine_for: Any) -> None:
    server, engine = engine_for(temperature=0.0)
    install_reply(server, hb_reply)
    kind = RubricJudge(hb_grader(presets={"temperature": 0.5, "max_tokens": 2048}), engine.specs["g"])
    run(engine, lambda client: kind.judge(client, item(toy_question(2)), cache="off"))
    assert {(b["temperature"], b["max_tokens"]) for b in server.stats.bodies} == {(0.0, 2048)}
    assert [m["role"] for m in server.stats.bodies[0]["messages"]] == ["system", "user"]
    other = RubricJudge(hb_grader(presets={"temperature": 0.5, "max_tokens": 2048}), spec(temperature=0.5))
    assert other.fingerprint != kind.fingerprint  # the settings sent are part of what a grade depends on


# -- strict reading, one re-ask, "unscored" ------------------------------------------------------------------
def test_an_unreadable_item_is_reasked_once_then_recorded_unscored_and_counted(engine_for: Any) -> None:
    server, engine = engine_for()
    question = toy_question(4)
    bad = "crit-1 says something 1"
    install_reply(
        server, lambda m: "no idea" if bad in m[-1]["content"] or bad in m[1]["content"] else hb_reply(m)
    )
    kind = RubricJudge(hb_grader(), engine.specs["g"])
    record = run(engine, lambda client: kind.judge(client, item(question), cache="off"))
    entry = record["items"][1]
    assert entry["status"] == "unscored" and "met" not in entry and len(entry["reasks"]) == 1
    assert entry["raw"] == "no idea" and entry["reasks"][0]["raw"] == "no idea"
    assert server.stats.requests == 4 + 1  # one re-ask, no loop
    reask = server.stats.bodies[-1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "no idea"} and "criteria_met" in reask[-1]["content"]
    assert record["unscored"] == 1 and record["invalid"] is True
    points = kind.outcomes(record)
    assert [p["value"] for p in points] == [
        float(met_rule(c["criterion"])) if i != 1 else None
        for i, c in enumerate(question.metadata["rubrics"])
    ]
    assert points[1]["detail"]["unscored"] is True and points[0]["detail"]["points"] == 1


def test_a_reask_that_is_answered_is_scored(engine_for: Any) -> None:
    server, engine = engine_for()
    install_reply(server, lambda m: hb_reply(m) if len(m) > 2 else "thinking out loud")
    kind = RubricJudge(hb_grader(simple_evals=False), engine.specs["g"])  # eval_framework: no system message
    record = run(engine, lambda client: kind.judge(client, item(toy_question(3)), cache="off"))
    assert all(e["status"] == "scored" and len(e["reasks"]) == 1 for e in record["items"])
    assert server.stats.requests == 6 and record["unscored"] == 0


@pytest.mark.parametrize(
    ("reader", "text", "expected"),
    [
        (read_criteria_met, '{"explanation": "ok", "criteria_met": true}', True),
        (read_criteria_met, '```json\n{"explanation": "ok", "criteria_met": false}\n```', False),
        (read_criteria_met, '{"criteria_met": "true"}', None),  # simple-evals wants a JSON boolean
        (read_criteria_met, 'Sure! {"criteria_met": true}', None),  # and nothing around the object
        (read_criteria_met, "{'criteria_met': True}", None),  # Python, not JSON: never evaluated
        (read_criteria_met, '["criteria_met"]', None),
        (read_criteria_met_ef, 'Sure! {"explanation": "x", "criteria_met": "Yes"}', True),
        (read_criteria_met_ef, '{"explanation": "x", "criteria_met": "no"}', False),
        (read_criteria_met_ef, '{"criteria_met": true}', None),  # eval_framework wants an explanation
        (read_criteria_met_ef, '{"explanation": "x", "criteria_met": "maybe"}', None),
    ],
)
def test_criteria_met_readers(reader: Callable[[str], Any], text: str, expected: bool | None) -> None:
    grade = reader(text)
    assert (grade["met"] if grade else None) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 7, "reason": "fine"}', 7),
        ('```json\n{"score": 10, "reason": "fine"}\n```', 10),
        ('{"score": 7.0, "reason": "fine"}', None),
        ('{"score": "7", "reason": "fine"}', None),
        ('{"score": true, "reason": "fine"}', None),
        ('{"score": 11, "reason": "fine"}', None),
        ('{"score": 0, "reason": "fine"}', None),
        ('{"score": 5}', None),
        ("{'score': 5, 'reason': 'x'}", None),
        ('The score is {"score": 5, "reason": "x"}', None),
    ],
)
def test_writingbench_scores_are_strict_integers(text: str, expected: int | None) -> None:
    grade = read_score(text)
    assert (grade["score"] if grade else None) == expected


def test_judge_text_is_never_evaluated(tmp_path: Path) -> None:
    marker = tmp_path / "touched"
    payload = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    for reader in (read_criteria_met, read_criteria_met_ef, read_score):
        assert reader(payload) is None and reader("{" + payload + "}") is None
    assert not marker.exists()


# -- a failed item: the others are kept, and only it is asked again ------------------------------------------
def test_a_failed_item_keeps_the_graded_ones_and_the_next_attempt_asks_only_it(engine_for: Any) -> None:
    server, engine = engine_for(faults={"crit-2 says": ["400"]})
    install_reply(server, hb_reply)
    kind = RubricJudge(hb_grader(), engine.specs["g"])
    question = toy_question(5)

    async def twice(client: ModelClient) -> tuple[PartialJudgment, dict[str, Any], int]:
        try:
            await kind.judge(client, item(question), cache="off")
        except PartialJudgment as partial:
            sent = server.stats.requests
            record = await kind.judge(client, item(question), cache="off", earlier=partial.games)
            return partial, record, server.stats.requests - sent
        raise AssertionError("the 400 should have failed item 2")

    partial, record, resent = run(engine, twice)
    assert sorted(partial.games) == [0, 1, 3, 4] and partial.failure.status == 400
    assert resent == 1 and [e["item"] for e in record["items"]] == [0, 1, 2, 3, 4]
    assert all(e["status"] == "scored" for e in record["items"])


def test_rejudging_asks_only_the_unscored_items_afresh(engine_for: Any) -> None:
    server, engine = engine_for(cache=True)
    broken = {"on": True}
    bad = "crit-3 says something 3"
    install_reply(server, lambda m: "??" if broken["on"] and bad in m[1]["content"] else hb_reply(m))
    kind = RubricJudge(hb_grader(), engine.specs["g"])
    question = toy_question(5)

    async def both(client: ModelClient) -> tuple[dict[str, Any], dict[str, Any], int]:
        first = await kind.judge(client, item(question), cache="use")
        sent = server.stats.requests
        broken["on"] = False
        second = await kind.judge(client, item(question), cache="refresh")
        return first, second, server.stats.requests - sent

    first, second, resent = run(engine, both)
    assert first["unscored"] == 1 and second["unscored"] == 0
    assert resent == 1  # the scored items came back from the request cache


# -- identity ------------------------------------------------------------------------------------------------
def test_the_key_follows_answer_rubric_prompt_and_sample() -> None:
    kind = RubricJudge(hb_grader(), spec())
    base = kind.key(item(toy_question(3)))
    assert kind.key(item(toy_question(3))) == base
    assert kind.key(item(toy_question(3), answer="Other.")) != base
    assert kind.key(item(toy_question(4))) != base
    assert kind.key(item(toy_question(3), sample=1)) != base
    assert RubricJudge(hb_grader(simple_evals=False), spec()).key(item(toy_question(3))) != base


# -- prompts are data ----------------------------------------------------------------------------------------
def test_prompt_files_are_read_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = tmp_path / "grader.py"
    source.write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n"
        'GRADER_TEMPLATE = """\n<<conversation>> / <<rubric_item>>\n""".strip()\nOTHER = compute()\n'
    )
    texts = read_python_strings(source, ("GRADER_TEMPLATE",), ("GRADER_TEMPLATE",))
    assert texts == {"GRADER_TEMPLATE": "<<conversation>> / <<rubric_item>>"} and not marker.exists()
    with pytest.raises(InputError, match="no OPENAI_SYSTEM_MESSAGE_API"):
        read_python_strings(source, ("OPENAI_SYSTEM_MESSAGE_API",), ("OPENAI_SYSTEM_MESSAGE_API",))
    source.write_text('GRADER_TEMPLATE = f"{1 + 1}"\n')
    with pytest.raises(InputError, match="line 1: GRADER_TEMPLATE is not a string literal"):
        read_python_strings(source, ("GRADER_TEMPLATE",), ())


def test_a_judge_prompt_file_replaces_upstreams_texts(tmp_path: Path) -> None:
    handed = healthbench.judge_prompt("simple-evals")
    grader = rubric_grader("healthbench", write_hb_prompt(tmp_path / "hb.py"), handed)
    assert isinstance(grader, HealthBenchGrader)
    assert grader.template == FAKE_HB_TEMPLATE and grader.system == FAKE_HB_SYSTEM
    assert grader.presets == {"temperature": 0.5, "max_tokens": 2048}  # simple-evals' grading sampler
    wb = rubric_grader("writingbench", write_wb_prompt(tmp_path / "wb.py"), writingbench.JUDGE_PROMPT)
    assert isinstance(wb, WritingBenchGrader) and wb.template == FAKE_WB_TEMPLATE
    (tmp_path / "bad.py").write_text('GRADER_TEMPLATE = "no placeholders here"\n')
    with pytest.raises(JuristError, match="no <<conversation>> placeholder"):
        rubric_grader("healthbench", tmp_path / "bad.py", handed)
    (tmp_path / "badwb.py").write_text(
        'evaluate_system = "s"\nevaluate_prompt = "{query} {response} {extra}"\n'
    )
    with pytest.raises(JuristError, match=r"a field \{extra\}"):
        rubric_grader("writingbench", tmp_path / "badwb.py", writingbench.JUDGE_PROMPT)
    with pytest.raises(JuristError, match="unknown rubric protocol"):
        rubric_grader("nope")


def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_pinned_prompts_offline_name_the_variable_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError) as failed:
        rubric_grader("healthbench", None, healthbench.judge_prompt("simple-evals"))
    message = str(failed.value)
    assert "\n" not in message and "JURIST_DATA_DIR" in message and "--judge-prompt" in message
    assert (
        "healthbench/healthbench_eval.py" in message and "healthbench/chat_completion_sampler.py" in message
    )
    with pytest.raises(JuristError, match="writingbench/prompt.py"):
        rubric_grader("writingbench", None, writingbench.JUDGE_PROMPT)


def test_a_prompt_copy_with_other_bytes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_network(monkeypatch)
    (tmp_path / "writingbench").mkdir()
    write_wb_prompt(tmp_path / "writingbench" / "prompt.py")
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError, match="sha256 .* is not that of writingbench critic-prompt"):
        rubric_grader("writingbench", None, writingbench.JUDGE_PROMPT)


def test_the_rubric_kind_takes_the_benchmarks_grader_and_refuses_another_protocol(tmp_path: Path) -> None:
    from jurist.judging.kinds import judge_kind_for

    prompt = write_hb_prompt(tmp_path / "hb.py")
    common: dict[str, Any] = {
        "default_protocol": "healthbench-eval-framework",
        "spec": spec(),
        "prompt_file": prompt,
        "prompt_source": healthbench.judge_prompt("eval-framework"),
    }
    kind = judge_kind_for("rubric", protocol=None, **common)  # type: ignore[arg-type]
    assert isinstance(kind, RubricJudge) and kind.protocol_name == "healthbench-eval-framework"
    assert kind.outcome == "point"
    assert kind.grader.presets == {"temperature": 1.0, "top_p": 0.95, "max_tokens": 2048}  # the benchmark's
    with pytest.raises(JuristError, match="--judge-protocol 'structured' does not apply"):
        judge_kind_for("rubric", protocol="structured", **common)  # type: ignore[arg-type]
