"""``jurist serve reward``: the reward a trainer gets is the benchmark's own judgment of that answer.

For every family, the requests the server sends are the ones ``jurist run`` sends for the same answers
(same bytes), a (question, answer) the run judged is answered from the request cache with no new judge
request and the same verdicts, and the reward is that question's outcome in the run.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.store.run_dir import RunDir
from serve_fixtures import StartServer, call, candidate_reward, read_jsonl, servers

MODEL, JUDGE = "mixed", "judge-p70"


@pytest.fixture
def reward_server() -> Iterator[StartServer]:
    yield from servers()


def judge_messages(server: Any, judge: str) -> list[str]:
    """The judge requests the mock received, as comparable text (messages and sampling)."""
    return sorted(json.dumps(b, sort_keys=True) for b in server.stats.bodies if b.get("model") == judge)


def answers_of(out: Path, model: str) -> dict[str, str]:
    return {
        uid: record["answer"]
        for (uid, sample), record in RunDir(out).load_answers(model).items()
        if sample == 0
    }


@pytest.fixture
def starter_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> dict[str, Any]:
    """A starter run of ``mixed`` judged by ``judge-p70``: its answers, judgments and battles."""
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {MODEL: {}, JUDGE: {}})
    out = tmp_path / "run"
    result = run_quiet(models_file=models, models=[MODEL], judges=[JUDGE], out=out, limit=8)
    assert result.exit_code == 0
    battles: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for battle in read_jsonl(out / "battles.jsonl"):
        battles[battle["uid"]].append(battle)
    judgments = {j["uid"]: j for j in read_jsonl(out / "judgments" / JUDGE / f"{MODEL}.jsonl")}
    found = {"battles": battles, "judgments": judgments, "eval_bodies": judge_messages(server, JUDGE)}
    return {"server": server, "models": models, "out": out, "answers": answers_of(out, MODEL), **found}


def labels(record: dict[str, Any]) -> dict[int, str | None]:
    return {game["game"]: game["label"] for game in record["games"]}


def test_pairwise_rewards_are_the_runs_outcomes_from_the_cache_in_every_shape(
    starter_run: dict[str, Any], reward_server: Any, tmp_path: Path
) -> None:
    mock, answers = starter_run["server"], starter_run["answers"]
    url, server = reward_server(
        bench="starter", judge=JUDGE, models_file=starter_run["models"], out=tmp_path / "s"
    )
    sent = mock.stats.requests
    items = [{"uid": uid, "answer": text, "step": 3} for uid, text in answers.items()]
    status, body = call(url, "/v1/reward", {"items": items})
    assert status == 200 and body["family"] == "pairwise"
    assert mock.stats.requests == sent  # every judge request answered by the cache
    assert body["cost"]["requests"] == 0 and body["cost"]["cache_hits"] == 2 * len(items)
    for item in body["items"]:
        uid = item["uid"]
        assert {g["game"]: g["label"] for g in item["games"]} == labels(starter_run["judgments"][uid])
        assert item["reward"] == pytest.approx(candidate_reward(starter_run["battles"][uid], MODEL))
    rewards = {item["uid"]: item["reward"] for item in body["items"]}
    assert len(set(rewards.values())) > 1  # the noisy judge makes the rewards differ

    # NeMo-Gym's /verify: the row's fields back, both judgements and verdicts, the reward
    uid, text = next(iter(answers.items()))
    parts = [{"type": "output_text", "text": text[:5]}, {"type": "refusal", "refusal": "x"},
             {"type": "output_text", "text": text[5:]}]  # fmt: skip
    output = [{"type": "reasoning", "summary": []}, {"type": "message", "content": parts}]
    row = {"responses_create_params": {"input": [{"role": "user", "content": "q"}]}, "uid": uid,
           "question": "ignored: the uid names the question", "category": "hard_prompt", "extra": 7,
           "response": {"output": output}}  # fmt: skip
    status, verified = call(url, "/verify", row)
    assert status == 200 and mock.stats.requests == sent
    judged = starter_run["judgments"][uid]
    assert verified["reward"] == pytest.approx(rewards[uid])
    assert (
        verified["verdict_gen_base"] == labels(judged)[2]
        and verified["verdict_base_gen"] == labels(judged)[1]
    )
    game2 = next(g for g in judged["games"] if g["game"] == 2)
    assert verified["judgement_gen_base"] == game2["raw"]
    assert verified["category"] == judged["category"] and verified["invalid_gen_base"] is False
    assert verified["extra"] == 7 and verified["responses_create_params"] == row["responses_create_params"]
    assert verified["mask_sample"] is False and verified["failure_kind"] is None
    # OpenRLHF's /get_reward: query = prompt + response (+ end token); the label names the uid
    prompts = [f"<|im_start|>user\nQ{n}<|im_end|>\n<|im_start|>assistant\n" for n in range(len(answers))]
    queries = [p + a + "<|im_end|>" for p, a in zip(prompts, answers.values(), strict=True)]
    status, got = call(url, "/get_reward", {"query": queries, "prompts": prompts, "labels": list(answers)})
    assert status == 200 and mock.stats.requests == sent
    assert got["rewards"] == pytest.approx([rewards[u] for u in answers]) and got["scores"] == got["rewards"]
    assert got["extra_logs"]["jurist_judge_requests"] == [0.0] * len(answers)
    status, explicit = call(url, "/get_reward", {"responses": list(answers.values()), "prompts": prompts,
                                                 "labels": [{"uid": u} for u in answers]})  # fmt: skip
    assert status == 200 and explicit["rewards"] == got["rewards"]
    status, metrics = call(url, "/metrics")
    assert metrics["judge_requests"] == 0 and metrics["cache_hits"] >= 2 * len(items)
    assert metrics["steps"][0]["step"] == 3 and metrics["steps"][0]["items"] == len(items)
    assert metrics["latency"]["/v1/reward"]["p50_ms"] is not None
    assert server.service is not None
    steps = read_jsonl(server.service.root / "steps.jsonl")
    assert len(steps) == len(items) and {s["step"] for s in steps} == {3}


def test_gen_base_is_nemo_gyms_one_game_rule(
    starter_run: dict[str, Any], reward_server: Any, tmp_path: Path
) -> None:
    url, _ = reward_server(bench="starter", judge=JUDGE, models_file=starter_run["models"], reward="gen-base",
                           out=tmp_path / "s")  # fmt: skip
    items = [{"uid": uid, "answer": text} for uid, text in starter_run["answers"].items()]
    _, body = call(url, "/v1/reward", {"items": items})
    for item in body["items"]:
        first = labels(starter_run["judgments"][item["uid"]])[2]  # game 2 shows the candidate as A
        assert item["reward"] == (1.0 if first in ("A>>B", "A>B") else 0.0)


def test_pairwise_prompts_are_the_same_bytes_in_eval_and_reward_mode(
    starter_run: dict[str, Any], reward_server: Any, tmp_path: Path
) -> None:
    mock = starter_run["server"]
    mock.stats.bodies.clear()
    url, _ = reward_server(bench="starter", judge=JUDGE, models_file=starter_run["models"], cache=False,
                           out=tmp_path / "s")  # fmt: skip
    items = [{"uid": uid, "answer": text} for uid, text in starter_run["answers"].items()]
    status, body = call(url, "/v1/reward", {"items": items})
    assert status == 200 and body["cost"]["requests"] == 2 * len(items)  # no cache: asked afresh
    assert judge_messages(mock, JUDGE) == starter_run["eval_bodies"]
    for item in body["items"]:
        assert {g["game"]: g["label"] for g in item["games"]} == labels(starter_run["judgments"][item["uid"]])


def test_a_question_of_its_own_needs_a_baseline_answer(
    starter_run: dict[str, Any], reward_server: Any, tmp_path: Path
) -> None:
    url, _ = reward_server(
        bench="starter", judge=JUDGE, models_file=starter_run["models"], out=tmp_path / "s"
    )
    status, body = call(url, "/v1/reward", {"items": [{"question": "What is 2+2?", "answer": "4"}]})
    assert status == 400 and "baseline_answer" in body["error"]
    item = {"question": "What is 2+2?", "answer": "[better] 4", "baseline_answer": "[worse] 5"}
    status, body = call(url, "/v1/reward", {"items": [item]})
    assert status == 200 and body["items"][0]["reward"] is not None
    assert body["items"][0]["uid"].startswith("q-") and body["cost"]["requests"] == 2


def test_alpaca_preference_reward_is_the_runs_probability(
    tmp_path: Path, run_quiet: Any, reward_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpaca = pytest.importorskip("test_alpaca_eval_bench")
    if not (SHARED_DATA / "alpaca-eval").is_dir():
        pytest.skip("shared AlpacaEval data absent")
    alpaca.no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    mock = alpaca.AlpacaMock()
    mock.start()
    try:
        models = write_models_file(tmp_path / "m.yaml", mock.base_url, {"strong": {}, "judge-lp": {}})
        prompt = alpaca._fake_template(tmp_path)
        out = tmp_path / "run"
        common = {"bench": "alpaca-eval", "models_file": models, "judge_prompt": prompt}
        assert run_quiet(**common, models=["strong"], judges=["judge-lp"], out=out, limit=6).exit_code == 0
        judged = {j["uid"]: j for j in read_jsonl(out / "judgments" / "judge-lp" / "strong.jsonl")}
        eval_bodies = sorted(json.dumps(b, sort_keys=True) for b in mock.judge_bodies)
        url, _ = reward_server(**common, judge="judge-lp", out=tmp_path / "s")
        items = [{"uid": uid, "answer": text} for uid, text in answers_of(out, "strong").items()]
        before = len(mock.judge_bodies)
        status, body = call(url, "/v1/reward", {"items": items})
        assert status == 200 and len(mock.judge_bodies) == before and body["cost"]["requests"] == 0
        for item in body["items"]:
            assert item["reward"] == pytest.approx(judged[item["uid"]]["p_model"])
            assert item["preference"]["verdict_source"] == "logprobs"
        mock.judge_bodies.clear()
        url, _ = reward_server(**common, judge="judge-lp", out=tmp_path / "s2", cache=False)
        assert call(url, "/v1/reward", {"items": items})[0] == 200
        assert sorted(json.dumps(b, sort_keys=True) for b in mock.judge_bodies) == eval_bodies
    finally:
        mock.stop()


def test_healthbench_rubric_reward_is_the_answers_own_score(
    tmp_path: Path, mock_server: Any, run_quiet: Any, reward_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_rubric_judge import hb_reply, install_reply, write_hb_prompt

    if not (SHARED_DATA / "healthbench").is_dir():
        pytest.skip("shared HealthBench data absent")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    mock = mock_server()
    install_reply(mock, lambda m: hb_reply(m))
    models = write_models_file(tmp_path / "m.yaml", mock.base_url, {"m": {}, "g": {}})
    common = {
        "bench": "healthbench",
        "models_file": models,
        "judge_prompt": write_hb_prompt(tmp_path / "p.py"),
    }
    out = tmp_path / "run"
    assert run_quiet(**common, models=["m"], judges=["g"], out=out, limit=3).exit_code == 0
    points: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for point in read_jsonl(out / "points" / "m.jsonl"):
        points[point["uid"]].append(point)
    eval_bodies = judge_messages(mock, "g")
    url, _ = reward_server(**common, judge="g", out=tmp_path / "s")
    items = [{"uid": uid, "answer": text} for uid, text in answers_of(out, "m").items()]
    sent = mock.stats.requests
    status, body = call(url, "/v1/reward", {"items": items})
    assert status == 200 and mock.stats.requests == sent
    for item in body["items"]:
        graded = sorted(points[item["uid"]], key=lambda p: p["detail"]["item"])
        met = sum(p["detail"]["points"] for p in graded if p["value"] == 1.0)
        possible = sum(p["detail"]["points"] for p in graded if p["detail"]["points"] > 0)
        assert item["reward"] == pytest.approx(met / possible)
        assert [e["met"] for e in item["rubric"]] == [p["value"] == 1.0 for p in graded]
    mock.stats.bodies.clear()
    url, _ = reward_server(**common, judge="g", out=tmp_path / "s2", cache=False)
    assert call(url, "/v1/reward", {"items": items})[0] == 200
    assert judge_messages(mock, "g") == eval_bodies


@pytest.mark.parametrize("bench", ["ifeval", "ifbench"])
def test_rules_reward_is_the_share_followed_with_the_runs_checks(
    tmp_path: Path, mock_server: Any, run_quiet: Any, reward_server: Any, bench: str
) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [{"key": k, "prompt": f"question {k}{', indeed' if k % 3 == 0 else ''}: no commas, all lowercase",
             "instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"],
             "kwargs": [{}, {}]} for k in range(6)]  # fmt: skip
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mock = mock_server()
    models = write_models_file(tmp_path / "m.yaml", mock.base_url, {"m": {}})
    common = {"bench": bench, "bench_options": {"file": str(questions)}}
    out = tmp_path / "run"
    assert run_quiet(**common, models_file=models, models=["m"], out=out).exit_code == 0
    checked = {p["uid"]: p["detail"]["instructions"] for p in read_jsonl(out / "points" / "m.jsonl")}
    url, _ = reward_server(**common, out=tmp_path / "s")
    loose_url, _ = reward_server(**common, out=tmp_path / "l", loose=True)
    items = [{"uid": uid, "answer": text} for uid, text in answers_of(out, "m").items()]
    status, body = call(url, "/v1/reward", {"items": items})
    assert status == 200 and body["family"] == "rules"
    for item in body["items"]:  # strict: only what the reward counts is computed and shown
        run_checks = checked[item["uid"]]
        assert item["rules"] == [{k: v for k, v in c.items() if k != "loose"} for c in run_checks]
        share = sum(c["strict"] for c in run_checks) / 2
        assert item["reward"] == share and item["cost"]["requests"] == 0
    status, body = call(loose_url, "/v1/reward", {"items": items})
    assert status == 200
    for item in body["items"]:  # --loose: both outcomes, as the run stores them
        assert item["rules"] == checked[item["uid"]]
        assert item["reward"] == sum(c["loose"] for c in checked[item["uid"]]) / 2
    own = {"question": "a prompt of its own", "answer": "hello, world", "instruction_id_list":
           ["punctuation:no_comma"], "kwargs": [None]}  # fmt: skip
    status, body = call(url, "/v1/reward", {"items": [own]})
    assert status == 200 and body["items"][0]["reward"] == 0.0


def test_arena_hard_v2_verify_rows_by_uid_and_by_category(
    tmp_path: Path, mock_server: Any, run_quiet: Any, reward_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NeMo-Gym's rows against Arena-Hard v2.0: a row by uid is the run's judgment from the cache; a row of
    its own is judged with its category's prompt (creative_writing's system prompt, as the run's)."""
    named = pytest.importorskip("test_arena_hard_named")
    named.no_network(monkeypatch)
    gemini = named.synthetic_gemini(tmp_path, monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(named.data_dir(tmp_path, gemini)))
    mock = mock_server()
    models = write_models_file(tmp_path / "m.yaml", mock.base_url, {MODEL: {}, JUDGE: {}})
    out = tmp_path / "run"
    common = {"bench": "arena-hard-v2.0", "models_file": models}
    assert (
        run_quiet(
            **common, models=[MODEL], judges=[JUDGE], out=out, limit=8, limit_sample="stratified"
        ).exit_code
        == 0
    )
    judged = {j["uid"]: j for j in read_jsonl(out / "judgments" / JUDGE / f"{MODEL}.jsonl")}
    assert {j["category"] for j in judged.values()} == {"hard_prompt", "creative_writing"}
    url, _ = reward_server(**common, judge=JUDGE, out=tmp_path / "s")
    sent = mock.stats.requests
    for uid, text in answers_of(out, MODEL).items():
        output = [{"type": "message", "content": [{"type": "output_text", "text": text}]}]
        status, row = call(
            url, "/verify", {"uid": uid, "responses_create_params": {}, "response": {"output": output}}
        )
        assert status == 200 and row["category"] == judged[uid]["category"]
        assert (
            row["verdict_base_gen"] == labels(judged[uid])[1]
            and row["verdict_gen_base"] == labels(judged[uid])[2]
        )
    assert mock.stats.requests == sent
    run_systems = {b["messages"][0]["content"] for b in mock.stats.bodies if b.get("model") == JUDGE}
    mock.stats.bodies.clear()
    output = [{"type": "message", "content": [{"type": "output_text", "text": "[better] a poem"}]}]
    own = {"question": "Write a poem about rain.", "baseline_answer": "[worse] rain"}
    own |= {"category": "creative_writing", "responses_create_params": {}, "response": {"output": output}}
    status, row = call(url, "/verify", own)
    assert status == 200 and row["category"] == "creative_writing" and row["reward"] is not None
    (system,) = {b["messages"][0]["content"] for b in mock.stats.bodies if b.get("model") == JUDGE}
    assert system in run_systems and len(run_systems) == 2  # the run's creative_writing system prompt


def test_writingbench_rubric_reward_is_the_mean_criterion_score(
    tmp_path: Path, mock_server: Any, run_quiet: Any, reward_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_rubric_judge import install_reply, wb_reply, write_wb_prompt

    if not (SHARED_DATA / "writingbench").is_dir():
        pytest.skip("shared WritingBench data absent")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    mock = mock_server()
    install_reply(mock, wb_reply)
    models = write_models_file(tmp_path / "m.yaml", mock.base_url, {"m": {}, "critic": {"temperature": None}})
    common = {
        "bench": "writingbench",
        "models_file": models,
        "judge_prompt": write_wb_prompt(tmp_path / "c.py"),
    }
    out = tmp_path / "run"
    assert run_quiet(**common, models=["m"], judges=["critic"], out=out, limit=3).exit_code == 0
    scores: dict[str, list[int]] = defaultdict(list)
    for point in read_jsonl(out / "points" / "m.jsonl"):
        scores[point["uid"]].append(point["detail"]["score"])
    url, _ = reward_server(**common, judge="critic", out=tmp_path / "s")
    items = [{"uid": uid, "answer": text} for uid, text in answers_of(out, "m").items()]
    sent = mock.stats.requests
    status, body = call(url, "/v1/reward", {"items": items})
    assert status == 200 and mock.stats.requests == sent
    for item in body["items"]:
        assert item["reward"] == pytest.approx(sum(scores[item["uid"]]) / len(scores[item["uid"]]))
    prompts = [f"P{n}" for n in range(len(items))]
    request = {
        "responses": [i["answer"] for i in items],
        "prompts": prompts,
        "labels": [i["uid"] for i in items],
    }
    status, got = call(url, "/get_reward", request)
    assert status == 200 and got["scores"] == pytest.approx([r / 10 for r in got["rewards"]])


def test_rule_workers_give_the_same_checks_as_the_server_itself(tmp_path: Path, reward_server: Any) -> None:
    questions = tmp_path / "q.jsonl"
    ids = ["punctuation:no_comma", "detectable_format:title"]
    rows = [
        {"key": k, "prompt": f"q{k}", "instruction_id_list": ids, "kwargs": [None, {}]} for k in range(12)
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = [
        {"uid": str(k), "answer": ("<<Title>> no commas" if k % 2 else "no comma here")} for k in range(12)
    ]
    common = {"bench": "ifeval", "bench_options": {"file": str(questions)}}
    inline, _ = reward_server(**common, out=tmp_path / "a", rule_workers=1)
    pooled, _ = reward_server(**common, out=tmp_path / "b", rule_workers=2)
    first, second = call(inline, "/v1/reward", {"items": items}), call(pooled, "/v1/reward", {"items": items})
    assert first[0] == second[0] == 200
    for body in (first[1], second[1]):
        for item in body["items"]:
            item.pop("seconds")
    assert first == second
    assert [i["reward"] for i in first[1]["items"]] == [0.5, 1.0] * 6
    unknown = {"question": "own", "answer": "x", "instruction_id_list": ["no:such"], "kwargs": [{}]}
    status, body = call(pooled, "/v1/reward", {"items": [unknown]})
    assert status == 400 and "no checker" in body["error"]


def test_a_rule_server_checks_on_the_usable_cores_and_an_option_that_does_not_apply_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from jurist.errors import JuristError
    from jurist.serve import rule_checks
    from jurist.serve.service import RewardService, ServeSettings

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert rule_checks.usable_cores() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert rule_checks.usable_cores() == rule_checks.MAX_AUTO_RULE_WORKERS  # the trainer keeps the rest
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    questions = tmp_path / "q.jsonl"
    row = {"key": 1, "prompt": "q", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    questions.write_text(json.dumps(row) + "\n")
    service = RewardService.build(ServeSettings(bench="ifeval", bench_options={"file": str(questions)},
                                                out=tmp_path / "rules"))  # fmt: skip
    try:
        assert service.rules is not None and service.rules.workers == 2
    finally:
        asyncio.run(service.aclose())
    models = write_models_file(tmp_path / "m.yaml", "http://127.0.0.1:9/v1", {JUDGE: {}})
    judged = {"bench": "starter", "judge": JUDGE, "models_file": models}
    refused = [
        ({**judged, "rule_workers": 2}, "--rule-workers: starter is judged, not checked by rules$"),
        ({**judged, "loose": True}, "--loose: starter is judged, not checked by rules"),
        ({"bench": "ifeval", "bench_options": {"file": str(questions)}, "reward": "gen-base"},
         "--reward gen-base: ifeval's reward is its rules one"),
    ]  # fmt: skip
    for n, (fields, message) in enumerate(refused):
        out = tmp_path / f"refused{n}"
        with pytest.raises(JuristError, match=message):
            RewardService.build(ServeSettings(**fields, out=out))
        assert not out.exists()  # refused before the directory is made or locked


def test_each_family_says_its_own_reward_and_a_family_without_one_is_refused(tmp_path: Path) -> None:
    from jurist.benchmarks import Benchmark, Question
    from jurist.errors import JuristError
    from jurist.families import RewardOptions, family_reward

    questions = [Question(uid="q1", prompt="Write one line.")]
    rules = Benchmark(name="own-rules", questions=questions, judge_kind=None, rule_suite="ifeval",
                      metrics=("instruction-following",))  # fmt: skip
    checks = [{"id": "a", "strict": True, "loose": True}, {"id": "b", "strict": False, "loose": True}]
    strict = family_reward(rules, None, RewardOptions())
    loose = family_reward(rules, None, RewardOptions(loose=True))
    assert (strict.label, strict.judged, strict.against_baseline, strict.two_games) == (
        "rules",
        False,
        False,
        False,
    )
    assert strict.of({"instructions": checks}) == 0.5 and loose.of({"instructions": checks}) == 1.0
    assert strict.of({"instructions": []}) == 1.0 and strict.shown({"instructions": checks}) == {
        "rules": checks
    }
    assert strict.own_question("own-rules", has_instructions=True) is None
    assert "instruction_id_list" in str(strict.own_question("own-rules", has_instructions=False))
    pairs = Benchmark(name="own-pairs", questions=questions, metrics=("judge-accuracy",))
    with pytest.raises(JuristError, match="own-pairs: the judge-accuracy family serves no reward"):
        family_reward(pairs, None, RewardOptions())


def test_an_items_cost_shows_every_field_by_name() -> None:
    import dataclasses

    from jurist.serve.service import ItemCost

    cost = ItemCost(requests=2, cache_hits=1, failed=0, prompt_tokens=30, completion_tokens=4, cost_usd=0.5)
    assert cost.as_dict() == dataclasses.asdict(cost)
    assert list(cost.as_dict()) == [f.name for f in dataclasses.fields(ItemCost)]
