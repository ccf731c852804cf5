"""WritingBench's critic is shown what upstream's critic is shown, on every answer shape: the candidate's
reply goes through the real engine (a mock server on 127.0.0.1), and each critic request is compared with
upstream's own ``process_gen_field`` (X-PLUG/WritingBench@ae2d517, ``evaluate_benchmark.py`` from the shared
data) run on the same text; a server's ``reasoning_content`` never reaches the critic."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, run_config, write_models_file
from jurist.judging.answer_cuts import writingbench_cut
from jurist.run.pipeline import run_pipeline
from mock_openai import MockOpenAI
from test_rubric_judge import install_reply, wb_reply, write_wb_prompt

UPSTREAM = SHARED_DATA / "writingbench" / "upstream-code" / "evaluate_benchmark.py"
SECRET = "REASONING-CONTENT-NEVER-SHOWN"
SHAPES: dict[str, tuple[str, str | None]] = {
    # disagreeing shapes before this change
    "no_opening_tag": ("First I think about it.\nStill thinking.</think>\n\nThe letter itself.", None),
    "single_newline": ("<think>Plan the letter.</think>\nThe letter itself.", None),
    "upper_case_tag": ("<THINK>Plan the letter.</THINK>\n\nThe letter itself.", None),
    "two_closing_tags": ("<think>Plan.</think>\n\nDraft one.</think>\n\nDraft two.", None),
    "unclosed_think": ("<think>Planning the letter, and still planning when the tokens ran out", None),
    # agreeing shapes
    "standard": ("<think>Plan the letter.</think>\n\nThe letter itself.", None),
    "three_newlines": ("  <think>Plan.</think>\n\n\nThe letter, after a blank line.", None),
    "plain": ("The letter itself, with no thought at all.", None),
    "reasoning_content": ("The letter itself.", SECRET),
    "reasoning_content_and_tag": ("<think>Inline plan.</think>\n\nThe letter itself.", SECRET),
}


def upstream_cut() -> Callable[[str], str]:
    """Upstream's ``process_gen_field``, its source taken from upstream's file and run as it is (the rest
    of the script needs its models and packages, so only this function is compiled)."""
    tree = ast.parse(UPSTREAM.read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "process_gen_field"]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(UPSTREAM), "exec"), namespace)
    cut: Callable[[str], str] = namespace["process_gen_field"]
    return cut


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].rsplit(end, 1)[0]


@pytest.fixture(scope="module")
def critic_saw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[str]]]:
    """One WritingBench run, one answer shape per query: shape -> the responses its critic requests showed."""
    tmp_path = tmp_path_factory.mktemp("wb-cut")
    server = MockOpenAI()
    server.start()
    try:
        yield _run_shapes(server, tmp_path)
    finally:
        server.stop()


def _run_shapes(server: MockOpenAI, tmp_path: Path) -> dict[str, list[str]]:
    install_reply(server, wb_reply)
    shape_of: dict[str, str] = {}
    graded = server._reply

    def candidate(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        response = graded(model, messages, body)
        if model != "m":
            return response
        query = messages[-1]["content"]
        name = shape_of.setdefault(query, list(SHAPES)[len(shape_of) % len(SHAPES)])
        content, reasoning = SHAPES[name]
        payload = json.loads(response.body)
        payload["choices"][0]["message"]["content"] = content
        if reasoning is not None:
            payload["choices"][0]["message"]["reasoning_content"] = reasoning
        response.body = json.dumps(payload).encode()
        return response

    server._reply = candidate
    server.keep_bodies = True
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}, "critic": {}})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        patch.setenv("JURIST_CACHE_DIR", str(tmp_path / "cache"))
        result = run_pipeline(
            run_config(
                bench="writingbench",
                models_file=models,
                models=["m"],
                judges=["critic"],
                judge_prompt=write_wb_prompt(tmp_path / "critic.py"),
                limit=len(SHAPES),
                out=tmp_path / "run",
                progress=False,
                check=False,
            )
        )
    assert result.exit_code == 0
    assert sorted(shape_of.values()) == sorted(SHAPES)  # every shape answered one query
    saw: dict[str, list[str]] = {name: [] for name in SHAPES}
    for body in server.stats.bodies:
        if body["model"] != "critic":
            continue
        user = body["messages"][-1]["content"]
        query = _between(user, "\nQUERY: ", "\nRESPONSE: ")
        saw[shape_of[query]].append(_between(user, "\nRESPONSE: ", '\nReply as {"score"'))
    return saw


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_critic_sees_what_upstreams_critic_sees(critic_saw: dict[str, list[str]], shape: str) -> None:
    content, _ = SHAPES[shape]
    expected = upstream_cut()(content)
    assert critic_saw[shape] and set(critic_saw[shape]) == {expected}  # every criterion, the same text
    assert writingbench_cut(content) == expected


def test_reasoning_content_never_reaches_the_critic(critic_saw: dict[str, list[str]]) -> None:
    shown = [text for texts in critic_saw.values() for text in texts]
    assert shown and not any(SECRET in text for text in shown)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "</think>\n\n",
        "a</think>\n\n</think>\n\nb",
        "<think>x</think>\r\n\r\ny",
        "x</think>\n",
        "é</think>\n\nü",
    ],
)
def test_the_cut_is_upstreams_on_edge_texts(text: str) -> None:
    assert writingbench_cut(text) == upstream_cut()(text)
