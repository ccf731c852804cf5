"""AlpacaEval 2.0 as a benchmark: the weighted logprob judge read as upstream reads it (checked against the
stored annotations of 20 models), a mock judge's preferences scored as the leaderboard's win-rate formula,
LC with the official inputs (a stand-in of their shape) or today's estimate offline, and pinned data offline.

The judge prompt used in runs here is a clearly fake ChatML template with upstream's placeholders: upstream's
text is not in the shared data and never in this repository.
"""

from __future__ import annotations

import ast
import asyncio
import csv
import gzip
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import web

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import base
from jurist.errors import InputError, JuristError
from mock_openai import MockOpenAI

# Without the proposed base.py diff there is no Benchmark.official_scoring, nor anything below.
if "official_scoring" not in base.Benchmark.__dataclass_fields__:
    pytest.skip("needs the proposed diffs (Benchmark.official_scoring)", allow_module_level=True)

from jurist.benchmarks import alpaca_eval as ae  # noqa: E402
from jurist.benchmarks.registry import benchmark_names  # noqa: E402
from jurist.config import ModelSpec  # noqa: E402
from jurist.families import ScoreOptions, score_run  # noqa: E402
from jurist.judging import alpaca_protocol as ap  # noqa: E402
from jurist.judging.base import JudgeItem  # noqa: E402
from jurist.ratings.lc_winrate import GamedRows, length_controlled_win_rate  # noqa: E402
from jurist.store.jsonl import read_jsonl  # noqa: E402

ALPACA = SHARED_DATA / "alpaca-eval"
pytestmark = pytest.mark.skipif(not ALPACA.is_dir(), reason="shared AlpacaEval data not present")
needs_registry = pytest.mark.skipif(
    "alpaca-eval" not in benchmark_names(), reason="the proposed registry diff is not applied"
)

FAKE_TEMPLATE = (
    "<|im_start|>system\nFAKE ALPACA JUDGE used by jurist's tests; not AlpacaEval's prompt.\n<|im_end|>\n"
    "<|im_start|>user\nTask: {instruction}\n\n[FIRST]\n{output_1}\n[/FIRST]\n\n"
    "[SECOND]\n{output_2}\n[/SECOND]\n\nReply m or M.\n<|im_end|>"
)
BIAS = 0.5
"""The mock judge's lean towards the output shown first, so that the order coin matters to the result."""
STRENGTH = {"strong": 4.0, "close": 2.3, "weak": 0.0}


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def tag_strength(text: str) -> float:
    """A mock answer is ``[model] prompt``; the reference's own texts are strength 2."""
    if text.startswith("[") and "]" in text:
        return STRENGTH.get(text[1 : text.index("]")], 2.0)
    return 2.0


def p_first(first: str, second: str) -> float:
    return sigmoid(tag_strength(first) - tag_strength(second) + BIAS)


class AlpacaMock(MockOpenAI):
    """The mock server, whose judges also answer the fake AlpacaEval prompt: one token, ``m`` or ``M``,
    with top logprobs P(m) = 0.9 p, P(M) = 0.9 (1 - p) and 0.1 on another token (so only the two labels'
    share counts). ``judge-text`` sends no logprobs; ``judge-labels`` offers neither label."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.judge_bodies: list[dict[str, Any]] = []

    def _probe(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        self.judge_bodies.append(body)  # max_tokens 1: the base class files these as probes
        return super()._probe(request, body)

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        if "FAKE ALPACA JUDGE" not in system:
            return super()._reply(model, messages, body)
        user = next(m["content"] for m in messages if m["role"] == "user")
        first = user.split("[FIRST]\n", 1)[1].split("\n[/FIRST]", 1)[0]
        second = user.split("[SECOND]\n", 1)[1].split("\n[/SECOND]", 1)[0]
        p = p_first(first, second)
        token = "m" if p >= 0.5 else "M"
        top = [("m", math.log(0.9 * p)), ("M", math.log(0.9 * (1 - p))), ("The", math.log(0.1))]
        if model == "judge-labels":
            top = [("A", math.log(0.6)), ("B", math.log(0.4))]
        alternatives = [{"token": t, "logprob": v} for t, v in top]
        logprobs = {"content": [{"token": token, "logprob": -0.1, "top_logprobs": alternatives}]}
        message = {"role": "assistant", "content": token}
        choice = {"index": 0, "message": message, "finish_reason": "length", "logprobs": logprobs}
        if model == "judge-text":
            choice["logprobs"] = None
        usage = {"prompt_tokens": len(user) // 4, "completion_tokens": 1, "total_tokens": 1}
        payload = {
            "id": "mock",
            "object": "chat.completion",
            "model": model,
            "choices": [choice],
            "usage": usage,
        }
        return web.json_response(payload)


@pytest.fixture
def alpaca_mock() -> Iterator[AlpacaMock]:
    server = AlpacaMock()
    server.start()
    yield server
    server.stop()


def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def reference_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        gzip.decompress((ALPACA / "results" / "gpt4_1106_preview" / "model_outputs.json.gz").read_bytes())
    )
    return rows


def switched(instruction: str) -> bool:
    """Upstream's order coin, written out here on its own (not jurist's function)."""
    return bool(random.Random("is_switched_outputs" + instruction + "0").choices([False, True], k=1)[0])


def annotation_files() -> list[Path]:
    return sorted(ALPACA.glob("results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json.gz"))


# -- the judge's reading, against upstream's own stored results --------------------------------------------


def test_the_reader_gives_back_every_stored_preference() -> None:
    """Each stored raw reply, read as jurist reads it and un-swapped by the seeded coin, is the stored
    preference: 12,040 of the 20 models' rows keep their reply."""
    checked = 0
    for path in annotation_files():
        for row in json.loads(gzip.decompress(path.read_bytes())):
            raw = row.get("raw_completion")
            if raw is None:
                continue
            completion = ast.literal_eval(raw) if isinstance(raw, str) else raw
            read = ap.first_label_probability(completion["logprobs"])
            assert read is not None and read[0] is not None
            got = ap.preference_of(read[0], ap.is_switched(row["instruction"]))
            assert got == pytest.approx(row["preference"], abs=1e-9)
            assert ap.is_switched(row["instruction"]) == switched(row["instruction"])
            checked += 1
    assert len(annotation_files()) == 20 and checked == 12_040


def test_win_rates_of_judge_records_equal_the_leaderboard() -> None:
    """The 20 models' preferences as jurist's judge records, through its battles and win rate, give the
    leaderboard's win_rate (the fidelity test of the import, kept, on the judge's own path)."""
    from jurist.families import win_rate_leaderboard

    board = ALPACA / "leaderboards" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
    with board.open(newline="", encoding="utf-8") as handle:
        official = {row[""]: float(row["win_rate"]) for row in csv.DictReader(handle)}
    for path in annotation_files():
        model = path.parent.parent.name
        if model == "gpt4_1106_preview":
            continue
        battles: list[dict[str, Any]] = []
        for row in json.loads(gzip.decompress(path.read_bytes())):
            preference = row["preference"]
            preference = 1.5 if preference == 0 else preference
            record: dict[str, Any] = {
                "uid": ae.question_uid(row["instruction"]),
                "judge": "j",
                "model": model,
            }
            record |= {"baseline": "ref", "p_model": preference - 1, "invalid": False}
            battles.extend(ap.preference_battles(record))
        (row,) = [r for r in win_rate_leaderboard(battles, {"ref"}, n_bootstrap=0) if r["model"] == model]
        assert row["score"] == pytest.approx(official[model], abs=1e-4), model


def test_reading_a_reply() -> None:
    def lp(*pairs: tuple[str, float]) -> dict[str, Any]:
        top = [{"token": t, "logprob": math.log(p)} for t, p in pairs]
        return {"content": [{"token": pairs[0][0], "logprob": 0.0, "top_logprobs": top}]}

    share, labels = ap.first_label_probability(lp(("m", 0.3), ("M", 0.1), ("x", 0.6))) or (None, {})
    assert share == pytest.approx(0.75) and set(labels) == {"m", "M"}
    assert ap.first_label_probability(lp(("M", 0.5), ("The", 0.5)))[0] == 0.0  # type: ignore[index]
    assert ap.first_label_probability(lp((" m", 0.5), ("A", 0.5))) == (None, {})  # exact tokens, as upstream
    assert ap.first_label_probability(None) is None
    legacy = {"tokens": ["m"], "top_logprobs": [{"m": math.log(0.2), "M": math.log(0.6)}]}
    assert ap.first_label_probability(legacy)[0] == pytest.approx(0.25)  # type: ignore[index]
    assert [ap.text_probability(text) for text in (" m\n", "M", "maybe")] == [1.0, 0.0, None]
    assert (ap.preference_of(0.25, False), ap.preference_of(0.25, True)) == (1.75, 1.25)


def test_the_template_is_parsed_filled_once_and_checked(tmp_path: Path) -> None:
    messages = ap.parse_template(FAKE_TEMPLATE, "fake")
    template = ap.AlpacaTemplate(messages, "fake", "0" * 64)
    shown = template.render("say {output_1}", "first  ", "  second {instruction}")
    assert [m["role"] for m in shown] == ["system", "user"]
    assert shown[1]["content"].startswith("Task: say {output_1}\n\n[FIRST]\nfirst  \n[/FIRST]")
    assert shown[1]["content"].endswith("  second {instruction}\n[/SECOND]\n\nReply m or M.")
    with pytest.raises(InputError, match=r"placeholder \{output_2\} appears 0 times"):
        ap.parse_template(FAKE_TEMPLATE.replace("{output_2}", ""), "fake")
    with pytest.raises(InputError, match="appears 2 times"):
        ap.parse_template(FAKE_TEMPLATE.replace("Reply", "{instruction} Reply"), "fake")
    with pytest.raises(InputError, match="not a ChatML prompt"):
        ap.parse_template("Task: {instruction} {output_1} {output_2}", "fake")
    with pytest.raises(InputError, match="role 'judge'"):
        ap.parse_template(FAKE_TEMPLATE.replace("<|im_start|>user", "<|im_start|>judge"), "fake")
    path = tmp_path / "judge.txt"
    path.write_text(FAKE_TEMPLATE, encoding="utf-8")
    loaded = ap.load_template(path, None)
    assert loaded.custom and loaded.sha256 == hashlib.sha256(FAKE_TEMPLATE.encode()).hexdigest()


def test_identical_outputs_are_a_tie_without_a_request() -> None:
    class NoClient:
        async def complete(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("identical outputs must not be sent")

    judge = ap.AlpacaJudge(
        ap.AlpacaTemplate(ap.parse_template(FAKE_TEMPLATE, "f"), "f", "0" * 64), ModelSpec(model="j")
    )
    question = base.Question(uid="u", prompt="p")
    item = JudgeItem("j", "m", question, 0, "same text", "ref", "same text")
    record = asyncio.run(judge.judge(NoClient(), item, cache="use"))  # type: ignore[arg-type]
    assert (record["preference"], record["p_model"], record["verdict_source"]) == (1.5, 0.5, "identical")
    halves = [("model_b", 0.5), ("model_a", 0.5)]
    assert [(b["winner"], b["weight"]) for b in judge.outcomes(record)] == halves


# -- data, pinned and offline ------------------------------------------------------------------------------


def test_the_shared_data_dir_works_as_it_is_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    bench = ae.benchmark({})
    rows = reference_rows()
    assert [q.prompt for q in bench.questions] == [r["instruction"] for r in rows] and len(rows) == 805
    assert bench.shipped_answers[ae.BASELINE][bench.questions[7].uid] == rows[7]["output"]
    from jurist.interop.alpaca_eval import alpaca_uid  # an imported AlpacaEval run names them alike

    assert all(q.uid == alpaca_uid(q.prompt) for q in bench.questions)
    assert bench.baseline == "gpt4_1106_preview" and bench.judge_kind == "preference"
    assert {q.category for q in bench.questions} == {r["dataset"] for r in rows} and len(rows[0]) == 4
    assert bench.info["lc"]["source"] == "estimated" and bench.info["lc"]["reason"].startswith("offline")
    assert "today's estimate" in bench.info["notes"][0] and "df_gamed.csv" in bench.info["notes"][0]
    assert bench.official_scoring.length_controlled
    reference = bench.info["reference_judge"]
    assert [reference[k] for k in ("model", "temperature", "max_tokens")] == ["gpt-4-1106-preview", 1.0, 1]
    with pytest.raises(JuristError, match="-B lc"):
        ae.benchmark({"lc": "sometimes"})


def test_offline_without_a_data_dir_fails_at_once_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    no_network(monkeypatch)
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    started = time.monotonic()
    with pytest.raises(JuristError) as failed:
        ae.benchmark({})
    message = str(failed.value)
    assert time.monotonic() - started < 5 and "\n" not in message
    for needed in ("JURIST_DATA_DIR", "alpaca-eval/alpaca_eval_gpt4_baseline.json", ae.GZ_COPY,
                   "alpaca-eval/alpaca_eval_clf.txt", "alpaca-eval/df_gamed.csv"):  # fmt: skip
        assert needed in message
    with pytest.raises(
        JuristError, match=r"alpaca-eval needs alpaca-eval/alpaca_eval_clf.txt.*JURIST_DATA_DIR"
    ):
        ap.load_template(None, ae.JUDGE_PROMPT)  # the judge's prompt: upstream's, never a stand-in


def test_an_altered_local_copy_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_network(monkeypatch)
    folder = tmp_path / "alpaca-eval" / "results" / "gpt4_1106_preview"
    folder.mkdir(parents=True)
    rows = reference_rows()
    rows[3]["output"] += " (edited)"
    (folder / "model_outputs.json.gz").write_bytes(gzip.compress(json.dumps(rows).encode()))
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError, match="not that of hub tatsu-lab/alpaca_eval@2edc6fa"):
        ae.benchmark({})


def test_the_judge_prompt_is_fetched_once_checked_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = tmp_path / "clf.txt"  # a file:// URL stands in for the pinned raw URL
    served.write_text(FAKE_TEMPLATE, encoding="utf-8")
    digest = hashlib.sha256(FAKE_TEMPLATE.encode()).hexdigest()
    opened: list[str] = []
    real = urllib.request.urlopen

    def counting(url: str, *args: Any, **kwargs: Any) -> Any:
        opened.append(url)
        return real(url, *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", counting)
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    monkeypatch.setattr(ae, "TEMPLATE", replace(ae.TEMPLATE, url=served.as_uri(), sha256=digest))
    first, second = ap.load_template(None, ae.JUDGE_PROMPT), ap.load_template(None, ae.JUDGE_PROMPT)
    assert opened == [served.as_uri()] and first.sha256 == second.sha256 == digest and not first.custom
    assert first.messages == ap.parse_template(FAKE_TEMPLATE, "x")
    monkeypatch.setattr(ae, "TEMPLATE", replace(ae.TEMPLATE, url=served.as_uri(), sha256="1" * 64))
    with pytest.raises(JuristError, match="not the pinned"):
        ap.load_template(None, ae.JUDGE_PROMPT)


# -- runs with a mock judge ---------------------------------------------------------------------------------


def expected_win_rate(instructions: list[str], model: str) -> float:
    """100 * mean(preference - 1) with every preference worked out from the mock's rule and the coin."""
    ps = []
    for text in instructions:
        answer, reference = f"[{model}] {text}", "plain reference"
        if switched(text):
            ps.append(p_first(answer, reference))
        else:
            ps.append(1.0 - p_first(reference, answer))
    return 100.0 * sum(ps) / len(ps)


def _fake_template(tmp_path: Path) -> Path:
    path = tmp_path / "fake_alpaca_judge.txt"
    path.write_text(FAKE_TEMPLATE, encoding="utf-8")
    return path


@needs_registry
def test_a_mock_logprob_judge_scores_as_the_win_rate_formula(
    tmp_path: Path, alpaca_mock: AlpacaMock, run_quiet: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    models = write_models_file(
        tmp_path / "m.yaml", alpaca_mock.base_url, {"strong": {}, "weak": {}, "judge-lp": {}}
    )
    out = tmp_path / "run"
    args = {"bench": "alpaca-eval", "models_file": models, "out": out, "limit": 40, "n_bootstrap": 20}
    result = run_quiet(
        **args, models=["strong", "weak"], judges=["judge-lp"], judge_prompt=_fake_template(tmp_path)
    )
    assert result.exit_code == 0
    instructions = [row["instruction"] for row in reference_rows()[:40]]
    rows = {row["model"]: row for row in result.leaderboard}
    for model in ("strong", "weak"):  # LC rows carry the raw win rate beside LC
        assert rows[model]["win_rate"] == pytest.approx(expected_win_rate(instructions, model), abs=1e-3)
        assert rows[model]["n"] == 40 and rows[model]["difficulty_source"] == "estimated"
    plain = {row["model"]: row for row in score_run(out, ScoreOptions(n_bootstrap=0)).rows}
    assert plain["strong"]["score"] == pytest.approx(expected_win_rate(instructions, "strong"), abs=1e-3)
    # what was sent: the fake template filled in the coin's order, one token with its top 5 logprobs
    bodies = [b for b in alpaca_mock.judge_bodies if b["model"] == "judge-lp"]
    assert len(bodies) == 80 and all(b["max_tokens"] == 1 and b["logprobs"] is True for b in bodies)
    assert {b["top_logprobs"] for b in bodies} == {5} and {b["temperature"] for b in bodies} == {0.0}
    strong = [b["messages"][1]["content"] for b in bodies if "[strong]" in b["messages"][1]["content"]]
    for text in instructions[:10]:
        (content,) = [c for c in strong if c.startswith(f"Task: {text}\n\n[FIRST]\n")]
        assert content.split("[FIRST]\n", 1)[1].startswith("[strong]") == switched(text)
    judgments = read_jsonl(out / "judgments" / "judge-lp" / "strong.jsonl")
    assert {j["kind"] for j in judgments} == {"preference"} and {j["verdict_source"] for j in judgments} == {
        "logprobs"
    }
    assert all(j["protocol"] == "alpaca-eval+custom" and 1 <= j["preference"] <= 2 for j in judgments)
    err = capsys.readouterr().err
    assert "AlpacaEval LC is today's estimate" in err  # offline: said at the start and under the results
    assert "judge judge-lp deviates from the reference judge" in err and "prompt " in err
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["bench_info"]["reference_judge"]["model"] == "gpt-4-1106-preview"
    assert run_json["judge_preset"]["follows_reference"] is False
    again = run_quiet(
        **args, models=["strong", "weak"], judges=["judge-lp"], judge_prompt=_fake_template(tmp_path)
    )
    assert again.requests == 0 and len(alpaca_mock.judge_bodies) == 80  # all on disk


@needs_registry
def test_a_server_without_logprobs_is_read_from_text_and_flagged(
    tmp_path: Path, alpaca_mock: AlpacaMock, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    models = write_models_file(
        tmp_path / "m.yaml", alpaca_mock.base_url, {"close": {}, "judge-text": {}, "judge-labels": {}}
    )
    out = tmp_path / "run"
    result = run_quiet(
        bench="alpaca-eval", models_file=models, out=out, limit=12, models=["close"],
        judges=["judge-text", "judge-labels"], judge_prompt=_fake_template(tmp_path),
        bench_options={"lc": "estimate"},
    )  # fmt: skip
    text = read_jsonl(out / "judgments" / "judge-text" / "close.jsonl")
    assert {j["verdict_source"] for j in text} == {"text"} and len(text) == 12
    by_uid = {j["uid"]: j["preference"] for j in text}
    for row in reference_rows()[:12]:
        instruction, answer = row["instruction"], f"[close] {row['instruction']}"
        shown = (answer, row["output"]) if switched(instruction) else (row["output"], answer)
        said_m = p_first(*shown) >= 0.5  # the reply is the label alone: P(m) read as 1 or 0
        as_shown = 2.0 - (1.0 if said_m else 0.0)
        want = 3.0 - as_shown if switched(instruction) else as_shown
        assert by_uid[ae.question_uid(instruction)] == want
    assert len(set(by_uid.values())) == 2  # the order coin decides here: the judge leans to the first
    labels = read_jsonl(out / "judgments" / "judge-labels" / "close.jsonl")
    assert len(labels) == 12 and all(j["invalid"] and j["preference"] is None for j in labels)  # no label
    assert result.exit_code == 0  # judge-text's rows still score
    shown = subprocess.run(
        [sys.executable, "-m", "jurist", "show", str(out)], capture_output=True, text=True, timeout=120
    )
    said = " ".join((shown.stdout + shown.stderr).split())  # named under the table, for run and show alike
    assert "judge judge-text: 12 preference(s) read from the reply's text, not its logprobs" in said, said
    assert "judge judge-labels:" not in said


def _official_stand_ins(folder: Path) -> tuple[dict[str, str], np.ndarray, list[dict[str, float]]]:
    """Files shaped as the hub's two LC files (synthetic numbers), and their sha256s and contents."""
    rng = np.random.default_rng(7)
    gamma = rng.normal(0.0, 1.0, 805)
    target = folder / "alpaca-eval"
    target.mkdir(parents=True)
    difficulty = [["", "instruction_difficulty"]] + [[i, repr(float(g))] for i, g in enumerate(gamma)]
    gamed = [
        {"preference": float(rng.uniform()), "std_delta_len": float(rng.normal()), "gamma": float(gamma[i])}
        for _ in range(2)
        for i in range(805)
    ]
    header = ["index", "preference", "std_delta_len", "instruction_difficulty", "not_gamed_baseline", "model"]
    lines = [header] + [
        [
            n % 805,
            repr(g["preference"]),
            repr(g["std_delta_len"]),
            repr(g["gamma"]),
            "False",
            f"gamed{n // 805}",
        ]
        for n, g in enumerate(gamed)
    ]
    for name, table in (("instruction_difficulty.csv", difficulty), ("df_gamed.csv", lines)):
        with (target / name).open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows(table)
    digests = {
        name: hashlib.sha256((target / name).read_bytes()).hexdigest()
        for name in ("instruction_difficulty.csv", "df_gamed.csv")
    }
    return digests, gamma, gamed


@needs_registry
def test_lc_uses_the_official_difficulty_and_gamed_rows_when_present(
    tmp_path: Path, alpaca_mock: AlpacaMock, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_network(monkeypatch)
    data = tmp_path / "data"
    digests, gamma, gamed = _official_stand_ins(data)
    (data / "alpaca-eval" / "results").mkdir()
    os.symlink(
        ALPACA / "results" / "gpt4_1106_preview", data / "alpaca-eval" / "results" / "gpt4_1106_preview"
    )
    monkeypatch.setattr(
        ae, "DIFFICULTY", replace(ae.DIFFICULTY, sha256=digests["instruction_difficulty.csv"])
    )
    monkeypatch.setattr(ae, "GAMED", replace(ae.GAMED, sha256=digests["df_gamed.csv"]))
    monkeypatch.setenv("JURIST_DATA_DIR", str(data))
    models = write_models_file(tmp_path / "m.yaml", alpaca_mock.base_url, {"strong": {}, "judge-lp": {}})
    out = tmp_path / "run"
    result = run_quiet(
        bench="alpaca-eval", models_file=models, out=out, limit=60, models=["strong"], judges=["judge-lp"],
        judge_prompt=_fake_template(tmp_path),
    )  # fmt: skip
    (row,) = [r for r in result.leaderboard if r["model"] == "strong"]
    assert row["difficulty_source"] == "official"
    # the same fit put together here from the files and the run's answers, by position
    rows = reference_rows()[:60]
    uid_of = [ae.question_uid(r["instruction"]) for r in rows]
    judged = {j["uid"]: j["p_model"] for j in read_jsonl(out / "judgments" / "judge-lp" / "strong.jsonl")}
    answers = {a["uid"]: a["answer"] for a in read_jsonl(out / "answers" / "strong.jsonl")}
    p = np.array([judged[u] for u in uid_of])
    model_len = np.array([len(answers[u]) for u in uid_of], dtype=float)
    base_len = np.array([len(r["output"]) for r in rows], dtype=float)
    extended = np.concatenate([gamma[:60], [g["gamma"] for g in gamed]])
    rows_gamed = GamedRows(
        np.array([g["preference"] for g in gamed]),
        np.array([g["std_delta_len"] for g in gamed]),
        np.arange(60, 60 + len(gamed)),
    )
    want = length_controlled_win_rate(
        p, model_len, base_len, instruction_difficulty=extended, gamed=[rows_gamed], regularize_lambda=0.1
    )
    assert row["score"] == pytest.approx(want.length_controlled_win_rate, abs=1e-3)
    assert row["win_rate"] == pytest.approx(100 * p.mean(), abs=1e-3)
    plain = length_controlled_win_rate(p, model_len, base_len, instruction_difficulty=gamma[:60])
    assert abs(plain.length_controlled_win_rate - want.length_controlled_win_rate) > 0.01  # the rows matter
    assert row["discrete_win_rate"] == pytest.approx(100 * ((p > 0.5).sum() + (p == 0.5).sum() / 2) / 60)
    info = json.loads((out / "run.json").read_text())["bench_info"]["lc"]
    assert info["source"] == "official" and info["gamed_rows"] == 1610 and info["difficulty_files_agree"]


@needs_registry
def test_the_cli_offline_without_data_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "jurist_data_dir")}
    env |= {"https_proxy": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    env["JURIST_CACHE_DIR"] = str(tmp_path / "cache")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--bench", "alpaca-eval", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert result.returncode == 2 and time.monotonic() - started < 60
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert (
        len(errors) == 1 and "JURIST_DATA_DIR" in errors[0] and "alpaca_eval_gpt4_baseline.json" in errors[0]
    )
