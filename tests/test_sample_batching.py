"""Repeated samples in one request with ``n`` where the server honours it, one request each where not."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file


def _question_file(path: Path, n: int) -> Path:
    rows = [
        {"key": k, "prompt": f"question {k}", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
        for k in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _distinct_choices(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every choice of every request a different text, as sampling at temperature 1 would."""
    original = server._reply
    count = Counter[str]()

    def reply(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        response = original(model, messages, body)
        if response.status != 200:
            return response
        payload = json.loads(response.body)
        for choice in payload["choices"]:
            text = choice["message"]["content"]
            choice["message"]["content"] = f"{text} #{count[text]}"
            count[text] += 1
        response.body = json.dumps(payload).encode()
        return response

    monkeypatch.setattr(server, "_reply", reply)


def _answers(run: Path, alias: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "answers" / f"{alias}.jsonl").read_text().splitlines()]


def _run(run_quiet: Any, tmp_path: Path, server: Any, alias: str, samples: int, **spec: Any) -> Path:
    write_models_file(tmp_path / "m.yaml", server.base_url, {alias: {"seed": 3, **spec}})
    questions = _question_file(tmp_path / "q.jsonl", 12)
    out = tmp_path / "run"
    result = run_quiet(
        bench="ifeval",
        bench_options={"file": str(questions)},
        models_file=tmp_path / "m.yaml",
        models=[alias],
        samples=samples,
        out=out,
    )
    assert result.exit_code == 0
    return out


def test_a_server_that_honours_n_answers_every_sample_of_a_question_in_one_request(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    _distinct_choices(server, monkeypatch)
    out = _run(run_quiet, tmp_path, server, "vllm-like", 4)
    assert server.stats.requests == 12  # not 48
    assert Counter(body.get("n") for body in server.stats.bodies) == {4: 12}
    answers = _answers(out, "vllm-like")
    assert sorted((a["uid"], a["sample"]) for a in answers) == sorted(
        (str(k), s) for k in range(12) for s in range(4)
    )
    assert len({a["answer"] for a in answers}) == 48  # each choice is its own sample
    billed = sum(a["usage"]["completion_tokens"] or 0 for a in answers)
    assert billed == sum(4 * (len(f"[vllm-like] question {k}") // 4) for k in range(12))  # counted once
    # Growing to 8 asks for samples 4-7 only, again one request per question, seeded for sample 4.
    _run(run_quiet, tmp_path, server, "vllm-like", 8)
    assert server.stats.requests == 24
    assert Counter((b.get("n"), b.get("seed")) for b in server.stats.bodies) == {(4, 3): 12, (4, 7): 12}
    keys = [(a["uid"], a["sample"]) for a in _answers(out, "vllm-like")]
    assert len(keys) == len(set(keys)) == 96


def test_a_server_that_ignores_n_gets_one_request_per_sample_and_nothing_is_lost(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    _distinct_choices(server, monkeypatch)
    out = _run(run_quiet, tmp_path, server, "llama-ignores-n", 4, parallel=1)
    assert server.stats.requests == 12 * 4  # the first batch's one choice counts; no batch after it
    assert sum(1 for body in server.stats.bodies if body.get("n")) == 1
    keys = [(a["uid"], a["sample"]) for a in _answers(out, "llama-ignores-n")]
    assert len(keys) == len(set(keys)) == 48


def test_a_server_that_refuses_n_is_asked_one_sample_at_a_time(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    out = _run(run_quiet, tmp_path, server, "api-refuses-n", 3, parallel=1)
    refused = sum(1 for body in server.stats.bodies if body.get("n"))
    assert refused == 1  # one 400, never recorded as a failure, then single requests
    assert server.stats.requests == refused + 12 * 3
    assert not (out / "failures.jsonl").exists()
    keys = [(a["uid"], a["sample"]) for a in _answers(out, "api-refuses-n")]
    assert len(keys) == len(set(keys)) == 36


def test_sample_batching_false_never_sends_n(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    server = mock_server()
    _run(run_quiet, tmp_path, server, "plain", 3, sample_batching=False)
    assert server.stats.requests == 36 and not any(body.get("n") for body in server.stats.bodies)
