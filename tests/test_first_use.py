"""What a new user still tripped over (the [first-use] issue): one test per item, from the command line as a
user types it, against the mock server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file


def jurist(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def question_file(tmp_path: Path, n: int = 4) -> Path:
    path = tmp_path / "question.jsonl"
    path.write_text("".join(json.dumps({"uid": f"q{i}", "prompt": f"prompt {i}"}) + "\n" for i in range(n)))
    return path


@pytest.fixture
def models(tmp_path: Path, mock_server: Any) -> Path:
    server = mock_server()
    aliases = ["strong", "mixed", "judge-good", "judge-broken", "base"]
    return write_models_file(tmp_path / "models.yaml", server.base_url, {a: {} for a in aliases})


# -- item 2: every unknown name gets the closest valid spelling ---------------------------------------------
@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["run", "--model", "opnai/gpt-4", "--no-check"], "did you mean openai/gpt-4?"),
        (["run", "--models-file", "models.yaml", "--model", "strnog", "--no-check"], "did you mean strong?"),
        (["run", "--models-file", "models.yaml", "--judge", "judge-god", "--no-check"], "judge-good?"),
        (["run", "--bench", "ifevl"], "did you mean ifeval?"),
        (["run", "--style-control", "lenght"], "did you mean length?"),
        (["run", "--method", "btt"], "did you mean bt?"),
        (["run", "--format", "jsno"], "did you mean json?"),
        (["run", "--batch", "judge"], "did you mean judges?"),
        (["run", "--judge-protocol", "arena-hrad", "--limit", "1", "--no-check"], "did you mean arena-hard?"),
        (["show", "RUN", "--style-control", "lenght"], "did you mean length?"),
        (["show", "RUN", "--method", "elo"], "is not winrate or bt"),
        (["show", "RUN", "--format", "markdwn"], "did you mean markdown?"),
    ],
)
def test_an_unknown_name_gets_the_closest_valid_spelling(
    tmp_path: Path, models: Path, args: list[str], meant: str
) -> None:
    (tmp_path / "RUN").mkdir()
    result = jurist(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()  # one line
    assert meant in line and "vllm/opnai" not in line and "several run directories" not in line


# -- item 1: every run ends with what it did and where its results are --------------------------------------
def run_args(tmp_path: Path, models: Path, *extra: str) -> list[str]:
    bench = str(question_file(tmp_path, 6))
    return ["run", "--bench", bench, "--models-file", str(models), "--model", "strong", "--judge",
            "judge-good", "--baseline", "base", "--out", "run", "--no-progress", *extra]  # fmt: skip


def env_with(**extra: str) -> dict[str, str]:
    import os

    return {**os.environ, "JURIST_DATA_DIR": str(SHARED_DATA), **extra}


def closing(stderr: str) -> tuple[str, str]:
    """A run's closing lines: what it did, and (the last line) where its results are."""
    lines = stderr.strip().splitlines()
    return next(line for line in reversed(lines) if line.startswith("this run: ")), lines[-1]


def test_every_run_ends_with_what_it_did_and_where_its_results_are(tmp_path: Path, models: Path) -> None:
    first = jurist(*run_args(tmp_path, models), cwd=tmp_path, env=env_with())
    assert first.returncode == 0, first.stderr
    did, where = closing(first.stderr)
    assert did.startswith("this run: sent ") and "12 answers" in did and "12 judge requests" in did
    assert where == "results: run/ (ratings.json, leaderboard.json, run.json); the page: jurist view run"
    again = jurist(*run_args(tmp_path, models), cwd=tmp_path, env=env_with())
    assert again.returncode == 0, again.stderr
    assert closing(again.stderr)[0] == (
        "this run: nothing left to send: every answer and judgment it needs was already in the run directory"
    )
    notes = [line for line in again.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == len(set(notes))  # no warning twice


def test_a_budget_stop_prints_the_partial_leaderboard_with_its_n(tmp_path: Path, models: Path) -> None:
    """--max-tokens 2400 leaves room for a few of the twelve judge requests (each reserves its largest
    possible cost before it is sent, one in flight), so the run stops with some questions judged."""
    args = run_args(tmp_path, models, "--max-tokens", "2400", "--max-concurrency", "1", "--no-cache")
    stopped = jurist(*args, "--format", "json", cwd=tmp_path, env=env_with())
    assert stopped.returncode == 3, stopped.stderr
    rows = {row["model"]: row for row in json.loads(stopped.stdout)}
    assert 0 < rows["strong"]["n"] < 6 and rows["base"]["baseline"]
    assert "the scores below are partial" in stopped.stderr
    did, where = closing(stopped.stderr)
    assert "the budget stopped it before the rest (skipped, not failed" in did
    assert where == "results: run/ (run.json); the page: jurist view run"  # no score file for a partial run
    assert not (tmp_path / "run" / "leaderboard.json").exists()
    resumed = jurist(*run_args(tmp_path, models, "--no-cache"), cwd=tmp_path, env=env_with())
    assert resumed.returncode == 0, resumed.stderr
    did = closing(resumed.stderr)[0]
    assert did.startswith("this run: resumed the last, unfinished run; sent")


# -- item 7: --cache-only names what the cache lacks, and the command that sends it --------------------------
def test_cache_only_reports_what_the_cache_lacks_not_a_failure(tmp_path: Path, models: Path) -> None:
    assert jurist(*run_args(tmp_path, models), cwd=tmp_path, env=env_with()).returncode == 0
    more = tmp_path / "more.jsonl"
    new = json.dumps({"uid": "q9", "prompt": "new"})
    more.write_text(question_file(tmp_path, 6).read_text() + new + "\n")
    args = [*run_args(tmp_path, models, "--cache-only"), "--bench", str(more), "--out", "other"]
    result = jurist(*args, cwd=tmp_path, env=env_with())
    assert result.returncode == 1
    assert "failed after retries" not in result.stderr and "run again to retry" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "not in the request cache" in line]
    assert line.startswith("2 request(s) are not in the request cache, and --cache-only sends nothing: ")
    assert "2 answers (strong 1, base 1)" in line and "without --cache-only sends them" in line
    did = closing(result.stderr)[0]
    assert did.startswith("this run: sent nothing; ") and did.endswith("; 2 still missing (above)")
    assert "answered from the request cache (12 answers, 12 judge requests)" in did


# -- item 4: `jurist list` names the reference judge a run uses, as upstream's pinned config states it ------
UPSTREAM_CONFIGS = {
    "arena-hard-local": SHARED_DATA / "arena-hard-local" / "judge_config.yaml",
    "arena-hard-v0.1": SHARED_DATA / "arena-hard" / "official-prompts" / "arena-hard-v0.1.yaml",
    "arena-hard-v2.0": SHARED_DATA / "arena-hard" / "official-prompts" / "arena-hard-v2.0.yaml",
}


def test_jurist_list_names_the_reference_judge_a_run_uses_and_upstream_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from jurist.benchmarks import load_benchmark
    from jurist.benchmarks.catalog import reference_text
    from jurist.benchmarks.presets import REFERENCE_KEY, ReferenceJudge

    listed = jurist("list", "--format", "json", cwd=tmp_path, env=env_with())
    assert listed.returncode == 0, listed.stderr
    records = {r["name"]: r for r in json.loads(listed.stdout)}
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    checked = []
    for name in ("arena-hard-local", "arena-hard-v0.1", "arena-hard-v2.0", "alpaca-eval", "healthbench"):
        info = load_benchmark(name, {}).info[REFERENCE_KEY]
        sampling = {k: info.get(k) for k in ("model", "temperature", "max_tokens")}
        used = reference_text(ReferenceJudge(**sampling, prompt_version="", protocol="", source=""))
        assert records[name]["reference_judge"] == used, name  # the list says what the run compares with
        if name in UPSTREAM_CONFIGS:
            config = yaml.safe_load(UPSTREAM_CONFIGS[name].read_text())
            sampled = f"temperature {config['temperature']:g}, max_tokens {config['max_tokens']}"
            want = f"{config['judge_model']} ({sampled})"
            assert used == want, name
        checked.append(name)
    assert records["arena-hard-local"]["reference_judge"].startswith("Qwen2-72B-Instruct-AWQ ")
    assert len(checked) == 5


# -- item 6: the docs state the reference figures as the tool reproduces them ------------------------------
def test_ifeval_reference_figures_in_the_docs_are_what_the_tool_prints(tmp_path: Path) -> None:
    import re

    responses = SHARED_DATA / "ifeval" / "input_response_data_gpt4_20231107_145030.jsonl"
    args = ["run", "--bench", "ifeval", "-B", "version=gpt4-2023", "--answers", str(responses)]
    result = jurist(
        *args, "--model", "gpt-4", "--format", "json", "--no-progress", cwd=tmp_path, env=env_with()
    )
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    counts = [
        round(row[f"{level}_{mode}"] * total / 100)
        for mode in ("strict", "loose")
        for level, total in (("prompt", 541), ("inst", 834))
    ]
    assert counts == [416, 697, 430, 713]
    upstream = json.loads((SHARED_DATA / "ifeval" / "expected_gpt4" / "expected_summary.json").read_text())
    published = [
        upstream[m][f"{lv}_level_correct"] for m in ("strict", "loose") for lv in ("prompt", "instruction")
    ]
    assert [p - c for p, c in zip(published, counts, strict=True)] == [1, 1, 1, 1]  # row 1122 only
    docs = " ".join((Path(__file__).parents[1] / "docs" / "benchmarks.md").read_text().split())
    stated = "prints 416/541 prompts and 697/834 instructions strict, 430/541 and 713/834 loose"
    assert stated in docs and re.search(r"keys 1122\s+and 1129", docs) and "gives `k`" in docs
    from jurist.rules.ifeval_words import frequency_letter

    assert (frequency_letter("#"), frequency_letter("!")) == ("k", "a")  # the seeded letters the docs name


# -- item 8: a small run's judge card says what its probes need, and offers --judge-card N -------------------
def test_a_small_runs_card_says_what_its_probes_need_and_judge_card_n_asks_for_them(
    tmp_path: Path, models: Path
) -> None:
    small = jurist(*run_args(tmp_path, models), cwd=tmp_path, env=env_with())
    assert small.returncode == 0, small.stderr
    (line,) = [line for line in small.stderr.splitlines() if line.startswith("judge card:")]
    assert "judge-good's verbosity and injection probes did not run: they need 20 probe requests" in line
    assert "a tenth of its 12 judge requests allows 1" in line and "a run of 200 judge requests" in line
    assert line.endswith("--judge-card 10 asks for them anyway (up to 20 probe requests)")
    asked = jurist(*run_args(tmp_path, models, "--judge-card", "10"), cwd=tmp_path, env=env_with())
    assert asked.returncode == 0, asked.stderr
    assert not [line for line in asked.stderr.splitlines() if line.startswith("judge card:")]
    card = json.loads((tmp_path / "run" / "judge_card.json").read_text())["judges"]["judge-good"]
    assert card["probes"]["verbosity"]["n"] == card["probes"]["injection"]["n"] == 6  # every question
    assert card["probe_requests"] == 12 and "12 judge-card probes" in asked.stderr


# -- item 5: export and import keep the scoring; a run a format cannot hold is refused ----------------------
def test_an_arena_hard_v2_run_exported_and_imported_back_is_scored_as_the_run_was(
    tmp_path: Path, models: Path
) -> None:
    env = env_with()
    args = ["run", "--bench", "arena-hard-v2.0", "--models-file", str(models), "--model", "strong"]
    args += ["--judge", "judge-good", "--limit", "8", "--sample", "stratified", "--no-progress"]
    ran = jurist(*args, "--out", "v2", "--no-judge-card", "--format", "json", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    exported = jurist("export", "arena-hard", "v2", "--out", "upstream", cwd=tmp_path, env=env)
    assert exported.returncode == 0, exported.stderr
    imported = jurist("import", "arena-hard", "upstream", "--out", "back", cwd=tmp_path, env=env)
    assert imported.returncode == 0, imported.stderr
    shown = jurist("show", "back", "--format", "json", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    keys = ("category", "model", "score", "n", "baseline")

    def rows(text: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(str(row.get(k)) for k in keys) for row in json.loads(text))

    assert rows(shown.stdout) == rows(ran.stdout)  # per category, with style control, as the run scored
    assert {row["category"] for row in json.loads(shown.stdout)} == {"hard_prompt", "creative_writing"}
    table = jurist("show", "back", cwd=tmp_path, env=env)
    assert "style-controlled win rate on hard_prompt" in table.stdout


def test_exporting_a_rule_checked_run_to_arena_hard_is_refused_in_one_line(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"key": 1000, "response": "hello"}) + "\n")
    args = ["run", "--bench", "ifeval", "--answers", str(answers), "--model", "mine", "--limit", "1"]
    assert jurist(*args, "--out", "ife", "--no-progress", cwd=tmp_path, env=env_with()).returncode == 0
    refused = jurist("export", "arena-hard", "ife", "--out", "upstream", cwd=tmp_path, env=env_with())
    assert refused.returncode == 2 and not (tmp_path / "upstream").exists()
    (line,) = refused.stderr.strip().splitlines()
    assert "this run of ifeval is checked by rule" in line and "cannot be exported there" in line


# -- item 4: a win rate's interval and the baseline's n do not depend on the other options -----------------
def test_the_win_rate_interval_and_the_baseline_n_are_the_same_with_length_controlled(tmp_path: Path) -> None:
    from test_alpaca_eval_bench import AlpacaMock, _fake_template

    server = AlpacaMock()
    server.start()
    try:
        models = write_models_file(
            tmp_path / "m.yaml", server.base_url, {"strong": {}, "weak": {}, "judge-lp": {}}
        )
        args = ["run", "--bench", "alpaca-eval", "--models-file", str(models), "--model", "strong,weak"]
        args += ["--judge", "judge-lp", "--judge-prompt", str(_fake_template(tmp_path)), "--limit", "40"]
        ran = jurist(*args, "--out", "run", "--no-progress", "--no-judge-card", cwd=tmp_path, env=env_with())
        assert ran.returncode == 0, ran.stderr
    finally:
        server.stop()
    import re

    ledger = json.loads((tmp_path / "run" / "run.json").read_text())["ledger"]["rows"]
    sent = sum(row["requests"] for row in ledger if row["phase"] == "judge")
    (sanity,) = [line for line in ran.stdout.splitlines() if re.match(r"│ judge-lp\s+│ +- ", line)]
    assert sent == 80 and int(sanity.split("│")[7]) == sent  # judge sanity's games: one per judge request

    def shown(*extra: str) -> dict[str, dict[str, Any]]:
        result = jurist("show", "run", "--format", "json", *extra, cwd=tmp_path, env=env_with())
        assert result.returncode == 0, result.stderr
        return {row["model"]: row for row in json.loads(result.stdout)}

    plain, lc = shown("--method", "winrate"), shown("--length-controlled")
    assert lc["strong"]["difficulty_source"] == "estimated"  # offline: the headline is the plain win rate
    for model in ("strong", "weak"):
        assert lc[model]["score"] == pytest.approx(plain[model]["score"], abs=1e-3)
        assert (lc[model]["ci_low"], lc[model]["ci_high"]) == (
            plain[model]["ci_low"],
            plain[model]["ci_high"],
        )
    (baseline,) = [name for name, row in plain.items() if row.get("baseline")]
    assert plain[baseline]["n"] == lc[baseline]["n"] == 40  # the questions judged against it, in both


def test_mean_at_n_spread_is_in_the_table_as_in_summary_json(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_rule_tasks import _comma_question_file, _VaryingAnswers

    server = mock_server()
    answers, original = _VaryingAnswers(), server._reply

    def reply(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        response = original(model, messages, body)
        payload = json.loads(response.body)
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        payload["choices"][0]["message"]["content"] = answers(prompt)
        response.body = json.dumps(payload).encode()
        return response

    monkeypatch.setattr(server, "_reply", reply)
    sampler = {"temperature": 1.0, "seed": 7, "sample_batching": False}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"sampler": sampler})
    questions = _comma_question_file(tmp_path / "q.jsonl", 20)
    args = ["run", "--bench", "ifeval", "-B", f"file={questions}", "--models-file", str(models)]
    result = jurist(
        *args,
        "--model",
        "sampler",
        "--samples",
        "4",
        "--out",
        "run",
        "--no-check",
        cwd=tmp_path,
        env=env_with(),
    )
    assert result.returncode == 0, result.stderr
    across = json.loads((tmp_path / "run" / "summary.json").read_text())["models"]["sampler"]["across_runs"]
    std = across["prompt_strict"]["std"]
    assert std > 0 and "sd over samples" in result.stdout
    assert f"±{std:.1f} (4 runs)" in result.stdout


# -- item 3: a model string's row is its label, never its URL; run.json keeps the string --------------------
def test_a_model_string_with_a_url_labels_its_row_without_it(tmp_path: Path, mock_server: Any) -> None:
    url = mock_server().base_url
    args = ["run", "--bench", str(question_file(tmp_path, 4)), "--model", f"vllm/strong@{url}"]
    args += ["--judge", f"good=vllm/judge-good@{url}", "--baseline", f"vllm/base@{url}", "--out", "run"]
    result = jurist(*args, "--no-progress", "--format", "json", cwd=tmp_path, env=env_with())
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {row["model"] for row in rows} == {"strong", "base"} and {r["judge"] for r in rows} == {"good"}
    assert url not in result.stdout
    specs = json.loads((tmp_path / "run" / "run.json").read_text())["model_specs"]
    assert (
        specs["good"]["model_string"] == f"vllm/judge-good@{url}" and specs["good"]["model"] == "judge-good"
    )
    assert specs["strong"]["model_string"] == f"vllm/strong@{url}"
    twice = jurist(*args[:4], f"vllm/strong@{url}", "--model", f"vllm/strong@{url}x", cwd=tmp_path)
    assert twice.returncode == 2 and "name it yourself: OTHER=" in twice.stderr


# -- item 2: errors in the user's terms, and no remedy the command refuses ----------------------------------
def test_judges_compare_on_a_rule_checked_run_says_it_has_no_judge(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"key": 1000, "response": "hello"}) + "\n")
    args = ["run", "--bench", "ifeval", "--answers", str(answers), "--model", "mine", "--limit", "1"]
    assert jurist(*args, "--out", "ife", "--no-progress", cwd=tmp_path, env=env_with()).returncode == 0
    result = jurist("judges", "compare", "ife", cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "checked by rule (ifeval) with no judge, so it has no judges to compare" in line
    assert "is this a jurist run directory" not in line


def test_alpaca_evals_unreadable_verdict_warning_offers_only_what_it_takes(
    tmp_path: Path, models: Path
) -> None:
    args = ["run", "--bench", "alpaca-eval", "--models-file", str(models), "--model", "strong"]
    args += ["--judge", "judge-broken", "--limit", "3", "--no-progress", "--no-judge-card", "--out", "ae"]
    result = jurist(*args, cwd=tmp_path, env=env_with())
    printed = (result.stdout + result.stderr).splitlines()  # a table's warnings go under it, on stdout
    (warning,) = [line for line in printed if "could be read" in line]
    assert "--judge-protocol" not in warning and "--rejudge-invalid" in warning
    refused = jurist(*args, "--judge-protocol", "structured", cwd=tmp_path, env=env_with())
    assert refused.returncode == 2 and "does not apply" in refused.stderr  # the option it no longer offers
    said = [line for line in printed if line.startswith(("note:", "warning:"))]
    assert len(said) == len(set(said))  # no line twice (AlpacaEval's estimated-LC note included)
