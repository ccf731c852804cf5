"""The reward server is safe by default: loopback unless told, a token when told otherwise, hostile bodies
refused in one line while serving goes on, a failed judge an error and never a reward, secrets nowhere;
and the verl helpers (over HTTP and in-process) give the server's rewards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY, write_models_file
from jurist.errors import JuristError
from jurist.serve.app import Bounds
from jurist.serve.clients import HttpScorer, InProcessScorer, RewardError
from jurist.serve.server import Listen
from jurist.serve.service import ServeSettings
from jurist.serve.shapes import cut_response
from serve_fixtures import StartServer, call, servers

TOKEN = "s3cret-token-for-tests-0123456789"


@pytest.fixture
def reward_server() -> Iterator[StartServer]:
    yield from servers()


@pytest.fixture
def models(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server(faults={"FAILS ALWAYS": ["500"] * 40})
    return server, write_models_file(tmp_path / "m.yaml", server.base_url, {"judge": {}})


def starter(models: Path, tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {"bench": "starter", "judge": "judge", "models_file": models, "out": tmp_path / "s", **more}


def own_item(question: str = "Name a colour.") -> dict[str, Any]:
    return {"question": question, "answer": "[better] blue", "baseline_answer": "[worse] none"}


def test_a_token_is_needed_for_every_request_and_never_echoed(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    url, _ = reward_server(listen=Listen(port=0, token_file=token_file), **starter(models[1], tmp_path))
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        status, body = call(url, "/health", headers=headers)
        assert status == 401 and TOKEN not in json.dumps(body)
        assert call(url, "/v1/reward", {"items": [own_item()]}, headers=headers)[0] == 401
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert call(url, "/health", headers=good)[0] == 200
    status, body = call(url, "/v1/reward", {"items": [own_item()]}, headers=good)
    assert status == 200 and body["items"][0]["reward"] is not None
    assert TOKEN not in json.dumps(call(url, "/metrics", headers=good)[1])


def test_binding_beyond_loopback_needs_a_token_and_loopback_answers_its_own_host(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any
) -> None:
    with pytest.raises(JuristError, match="needs --token-file"):
        reward_server(listen=Listen(host="0.0.0.0", port=0), **starter(models[1], tmp_path))
    assert not (tmp_path / "s").exists()  # refused before anything was built
    short = tmp_path / "short"
    short.write_text("abc")
    with pytest.raises(JuristError, match="at least 16 characters"):
        reward_server(listen=Listen(port=0, token_file=short), **starter(models[1], tmp_path))
    url, _ = reward_server(**starter(models[1], tmp_path))
    status, body = call(url, "/health", headers={"Host": "attacker.example:80"})
    assert status == 421 and "Host" in body["error"]
    assert call(url, "/health")[0] == 200


def test_hostile_bodies_get_one_line_and_the_server_goes_on(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any
) -> None:
    url, _ = reward_server(
        bounds=Bounds(max_body_bytes=64 * 1024, max_batch=4), **starter(models[1], tmp_path)
    )
    hostile: list[tuple[dict[str, Any], int]] = [
        ({"raw": b"{not json"}, 400),
        ({"raw": b"[" * 100_000 + b"]" * 100_000}, 413),
        ({"raw": b"[" * 20_000 + b"]" * 20_000}, 400),
        ({"raw": b'{"items": [{"answer": NaN, "uid": "x"}]}'}, 400),
        ({"raw": b"\xff\xfe garbage"}, 400),
        ({"raw": b"{}", "headers": {"Content-Type": "text/plain"}}, 400),
        ({"raw": b"x" * 70_000}, 413),
        ({"body": []}, 400),
        ({"body": {"items": []}}, 400),
        ({"body": {"items": [own_item()] * 5}}, 400),
        ({"body": {"items": [{"uid": 3.5, "answer": "a"}]}}, 400),
        ({"body": {"items": [{"uid": "no-such-uid", "answer": "a"}]}}, 400),
        ({"body": {"items": [{"question": "q"}]}}, 400),
        ({"body": {"items": [{**own_item(), "sample": -1}]}}, 400),
        ({"body": {"items": [{**own_item(), "answer": {"$gt": ""}}]}}, 400),
        ({"body": {"items": "all of them"}}, 400),
    ]
    for request, expected in hostile:
        status, body = call(url, "/v1/reward", **request)
        assert status == expected, (request, body)
        assert isinstance(body["error"], str) and "\n" not in body["error"], body
    for path, body in [("/verify", {"uid": "x"}), ("/verify", {"response": {"output": "text"}}),
                       ("/get_reward", {"query": ["a"], "prompts": ["b"], "labels": [None]}),
                       ("/get_reward", {"query": ["a", "b"], "prompts": ["a"]})]:  # fmt: skip
        status, answer = call(url, path, body)
        assert status == 400 and answer["error"]
    assert call(url, "/nowhere")[0] == 404
    assert call(url, "/v1/reward", method="GET")[0] == 405
    status, body = call(url, "/v1/reward", {"items": [own_item()]})
    assert status == 200 and body["items"][0]["reward"] is not None
    status, metrics = call(url, "/metrics")
    assert metrics["statuses"]["400"] >= 18


def test_a_failed_judge_is_an_error_in_every_shape_never_a_reward(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any
) -> None:
    url, _ = reward_server(**starter(models[1], tmp_path))
    failing = own_item("FAILS ALWAYS: which colour?")
    status, body = call(url, "/v1/reward", {"items": [own_item(), failing]})
    assert status == 200
    good, bad = body["items"]
    assert good["reward"] is not None and "error" not in good
    assert bad["reward"] is None and bad["error_kind"] == "judge_failed" and "500" in bad["error"]
    response = {
        "output": [{"type": "message", "content": [{"type": "output_text", "text": failing["answer"]}]}]
    }
    row = {k: v for k, v in failing.items() if k != "answer"} | {"response": response}
    status, verified = call(url, "/verify", row)
    assert status == 200 and verified["mask_sample"] is True and verified["failure_kind"] == "judge_failed"
    status, got = call(url, "/get_reward", {"responses": ["[better] blue"], "prompts": [failing["question"]],
                                            "labels": [{"baseline_answer": "[worse] none"}]})  # fmt: skip
    assert status == 502 and "item 0" in got["error"]
    assert call(url, "/metrics")[1]["failed_items"] == 3


def test_openrlhf_queries_are_cut_after_the_prompt_and_end_tokens_dropped() -> None:
    prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert cut_response(prompt + "Hello there.<|im_end|><|endoftext|>", prompt, "item 0") == "Hello there."
    assert cut_response("<s>[INST] Hi [/INST] Yes</s>", "<s>[INST] Hi [/INST]", "item 0") == " Yes"
    assert cut_response(prompt + "a <|tag|> b", prompt, "item 0") == "a <|tag|> b"
    with pytest.raises(ValueError, match="does not start with its prompt"):
        cut_response("something else", prompt, "item 3")


def test_verl_helpers_over_http_and_in_process_agree(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any
) -> None:
    url, _ = reward_server(**starter(models[1], tmp_path))
    extra = {"question": "Name a colour.", "baseline_answer": "[worse] none", "step": 1}
    over_http = HttpScorer(url).compute_score("starter", "[better] blue", None, extra)
    scorer = InProcessScorer(
        ServeSettings(**starter(models[1], tmp_path, out=tmp_path / "s2"), retry=FAST_RETRY)
    )
    try:
        in_process = scorer.compute_score("starter", "[better] blue", None, extra)
        again = scorer.compute_score("starter", "[better] blue", None, extra)
        with pytest.raises(RewardError, match="gave up after"):
            scorer.compute_score("starter", "x", None, {**extra, "question": "FAILS ALWAYS: colour?"})
    finally:
        scorer.close()
    assert over_http["score"] == in_process["score"] and 0.0 <= over_http["score"] <= 1.0
    assert again == {**in_process, "jurist_judge_requests": 0.0, "jurist_cache_hits": 2.0}
    with pytest.raises(RewardError, match="HTTP 400"):
        HttpScorer(url).compute_score("starter", "a", "no-such-uid", None)


def test_the_command_serves_until_sigterm_and_refuses_an_open_bind(tmp_path: Path, mock_server: Any) -> None:
    questions = tmp_path / "q.jsonl"
    row = {"key": 1, "prompt": "say hi without commas", "instruction_id_list": ["punctuation:no_comma"],
           "kwargs": [{}]}  # fmt: skip
    questions.write_text(json.dumps(row) + "\n")
    base = [sys.executable, "-m", "jurist", "serve", "reward", "--bench", "ifeval", "-B", f"file={questions}"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    refused = subprocess.run(
        [*base, "--host", "0.0.0.0"], capture_output=True, text=True, env=env, timeout=120
    )
    assert (
        refused.returncode == 2
        and "needs --token-file" in refused.stderr
        and "Traceback" not in refused.stderr
    )
    process = subprocess.Popen(
        [*base, "--port", "0", "--out", str(tmp_path / "s")], stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "serving" in line, line
        url = line.split(" at ", 1)[1].split(";", 1)[0]
        status, body = call(url, "/v1/reward", {"items": [{"uid": "1", "answer": "hi there"}]})
        assert status == 200 and body["items"][0]["reward"] == 1.0
        assert call(url, "/health")[1]["family"] == "rules"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=60) == 0


def test_spend_is_counted_per_step_and_the_budget_stops_judging_as_an_error(
    tmp_path: Path, mock_server: Any, reward_server: Any
) -> None:
    mock = mock_server()
    price = {"price": {"input": 10.0, "output": 10.0}}  # USD per 1M tokens
    models = write_models_file(tmp_path / "m.yaml", mock.base_url, {"judge": price})
    url, server = reward_server(**starter(models, tmp_path), max_cost=0.3)
    items = [{**own_item(f"Question {n}?"), "step": 1 + n % 2} for n in range(4)]
    status, body = call(url, "/v1/reward", {"items": items})
    assert status == 200 and all(i["cost"]["cost_usd"] > 0 for i in body["items"])
    metrics = call(url, "/metrics")[1]
    by_step = {row["step"]: row for row in metrics["steps"]}
    assert set(by_step) == {1, 2} and by_step[1]["items"] == 2 and by_step[1]["requests"] == 4
    spent = sum(i["cost"]["cost_usd"] for i in body["items"])
    assert sum(row["cost_usd"] for row in by_step.values()) == pytest.approx(spent)
    assert metrics["cost_usd"] == pytest.approx(spent)
    flood = [{**own_item(f"Long question {n} " + "x" * 4000 + "?")} for n in range(40)]
    status, body = call(url, "/v1/reward", {"items": flood[:20]})
    status2, body2 = call(url, "/v1/reward", {"items": flood[20:]})
    refused = [i for i in body["items"] + body2["items"] if i.get("error_kind") == "budget"]
    assert status == status2 == 200 and refused and all(i["reward"] is None for i in refused)
    assert server.service is not None and (server.service.root / "usage.jsonl").is_file()


def test_concurrent_batches_from_several_clients_stay_within_the_judges_limit(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    mock, path = models
    url, _ = reward_server(**starter(path, tmp_path))

    def client(n: int) -> list[Any]:
        batches = [[own_item(f"Client {n} batch {b} item {i}?") for i in range(5)] for b in range(3)]
        return [call(url, "/v1/reward", {"items": batch}) for batch in batches]

    with ThreadPoolExecutor(4) as pool:
        answers = [answer for batch in pool.map(client, range(4)) for answer in batch]
    assert all(status == 200 for status, _ in answers)
    rewards = [item["reward"] for _, body in answers for item in body["items"]]
    assert len(rewards) == 60 and all(r is not None for r in rewards)
    assert mock.stats.requests_by_model["judge"] == 120 and mock.stats.peak_by_model["judge"] <= 8


def test_openrlhf_reward_func_file_sends_the_token(
    tmp_path: Path, models: tuple[Any, Path], reward_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurist.serve.clients import reward_func

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    url, _ = reward_server(listen=Listen(port=0, token_file=token_file), **starter(models[1], tmp_path))
    monkeypatch.setenv("JURIST_REWARD_URL", url)
    prompt = "Name a colour.\n"
    labels = [json.dumps({"question": "Name a colour.", "baseline_answer": "[worse] none"})]
    monkeypatch.delenv("JURIST_REWARD_TOKEN_FILE", raising=False)
    with pytest.raises(RewardError, match="HTTP 401"):
        reward_func([prompt + "[better] blue</s>"], [prompt], labels)
    monkeypatch.setenv("JURIST_REWARD_TOKEN_FILE", str(token_file))
    got = reward_func([prompt + "[better] blue</s>"], [prompt], labels)
    assert len(got["rewards"]) == 1 and 0.0 <= float(got["rewards"][0]) <= 1.0
