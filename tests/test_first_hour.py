"""What a new user hit in the first hour (the [first-hour] issue): one regression test per item."""

from __future__ import annotations

import ast
import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib

from conftest import write_models_file
from jurist.engine.client import Engine
from jurist.store.jsonl import read_jsonl

ROOT = Path(__file__).resolve().parents[1]
# Import names whose distribution is named differently on PyPI.
DISTRIBUTION = {"yaml": "pyyaml", "dotenv": "python-dotenv"}


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_every_import_at_module_level_is_a_declared_dependency() -> None:
    """Item 1: `pip install .` must give a working jurist (CI also installs from pyproject alone)."""
    declared = {
        re.split(r"[<>=!\[ ;]", dep, maxsplit=1)[0].lower()
        for dep in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    stdlib = set(sys.stdlib_module_names)
    undeclared = set()
    for path in (ROOT / "src" / "jurist").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only: heavy optional imports live inside functions
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in stdlib or top == "jurist" or top == "__future__":
                    continue
                if DISTRIBUTION.get(top, top).lower() not in declared:
                    undeclared.add(f"{path.relative_to(ROOT)}: {top}")
    assert not undeclared


@pytest.mark.parametrize(
    "args",
    [["run", "--bogus"], ["run", "--limit", "abc"], [], ["nosuch"], ["show"], ["run", "-B", "novalue"]],
)
def test_usage_errors_print_a_usage_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    """Item 2."""
    result = jurist(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 5


def test_install_hints_and_names_keep_their_brackets(tmp_path: Path) -> None:
    """Item 3: rich markup must not eat `[litellm]` or a model named `gpt[4]`."""
    (tmp_path / "m.yaml").write_text("judge:\n  model: x\n  api_type: nosuch\n")
    result = jurist("run", "--models-file", "m.yaml", "--judge", "gpt[4]", "--no-check", cwd=tmp_path)
    assert result.returncode == 2 and "api_type" in result.stderr
    missing = jurist("run", "--model", "gpt[4]", "--no-check", cwd=tmp_path)
    assert missing.returncode == 2 and "'gpt[4]'" in missing.stderr


def test_help_shows_no_bool_noise(tmp_path: Path) -> None:
    """Item 4."""
    for command in (["run", "--help"], ["show", "--help"], ["--help"]):
        result = jurist(*command, cwd=tmp_path)
        assert result.returncode == 0 and "<bool>" not in result.stdout


@pytest.fixture
def mock_models(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server()
    aliases = ["strong", "mixed", "judge-good", "judge-broken", "base"]
    return server, write_models_file(tmp_path / "models.yaml", server.base_url, {a: {} for a in aliases})


def question_file(tmp_path: Path, n: int = 4) -> Path:
    path = tmp_path / "question.jsonl"
    path.write_text("".join(json.dumps({"uid": f"q{i}", "prompt": f"prompt {i}"}) + "\n" for i in range(n)))
    return path


def test_baseline_can_be_a_file_of_answers(
    tmp_path: Path, mock_models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 7: --baseline takes answers someone already has, in jurist's or Arena-Hard's shape."""
    server, models = mock_models
    answers = tmp_path / "their-model.jsonl"
    answers.write_text(
        "".join(
            json.dumps(
                {
                    "uid": f"q{i}",
                    "model": "their-model",
                    "messages": [
                        {"role": "user", "content": "p"},
                        {"role": "assistant", "content": {"answer": f"[weak] answer {i}"}},
                    ],
                }
            )
            + "\n"
            for i in range(4)
        )
    )
    result = run_quiet(
        bench=str(question_file(tmp_path)), models_file=models, models=["strong"], judges=["judge-good"],
        baseline=str(answers), out=tmp_path / "run",
    )  # fmt: skip
    assert result.exit_code == 0 and server.stats.requests_by_model.get("base") is None
    rows = {r["model"]: r for r in result.leaderboard}
    assert rows["their-model"]["baseline"] and rows["strong"]["n"] == 4
    assert server.stats.requests_by_model["strong"] == 4


def test_a_run_with_fewer_models_keeps_scoring_the_rest(
    tmp_path: Path, mock_models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 10: summaries come from everything valid in the directory."""
    _, models = mock_models
    common = {"models_file": models, "judges": ["judge-good"], "out": tmp_path / "run", "limit": 4}
    both = run_quiet(**common, models=["strong", "mixed"])
    one = run_quiet(**common, models=["strong"])
    assert one.requests == 0
    assert {r["model"] for r in one.leaderboard} == {r["model"] for r in both.leaderboard}
    board = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert {r["model"] for r in board} >= {"strong", "mixed"}
    # A changed answer makes the earlier judgment stale: it is no longer counted.
    path = tmp_path / "run" / "answers" / "mixed.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    record["answer"] = "a different answer"
    path.write_text("\n".join([*lines, json.dumps(record)]) + "\n")
    again = run_quiet(**common, models=["strong"])
    mixed = next(r for r in again.leaderboard if r["model"] == "mixed")
    assert mixed["n"] == 3


@pytest.mark.parametrize("cache", [True, False])
def test_a_successful_game_is_kept_when_its_partner_fails(
    tmp_path: Path, mock_server: Any, run_quiet: Any, cache: bool
) -> None:
    """Item 11: only the failed game is sent again; the other is kept in the run directory
    (partial_games.jsonl), so this holds with the request cache off too."""
    server = mock_server(faults={"[strong] prompt 2": ["400"]})  # one judge game of q2, not the answer
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}, "base": {}}
    )
    args = {"bench": str(question_file(tmp_path)), "models_file": models, "models": ["strong"]}
    args |= {"judges": ["judge-good"], "baseline": "base", "out": tmp_path / "run", "cache": cache}
    run_quiet(**args, mode="inference-only")
    first = run_quiet(**args)
    assert first.exit_code == 1 and first.failures == 1
    kept = read_jsonl(tmp_path / "run" / "partial_games.jsonl")
    assert len(kept) == 1 and kept[0]["uid"] == "q2" and kept[0]["result"]["label"]  # one game of q2
    before = server.stats.requests
    second = run_quiet(**args)
    assert second.exit_code == 0 and server.stats.requests - before == 1
    q2 = next(
        j
        for j in read_jsonl(tmp_path / "run" / "judgments" / "judge-good" / "strong.jsonl")
        if j["uid"] == "q2"
    )
    assert q2["games"][kept[0]["game"] - 1]["raw"] == kept[0]["result"]["raw"]  # the kept game, reused
    assert next(r for r in second.leaderboard if r["model"] == "strong")["n"] == 4


def test_judge_only_needs_no_models_file_entry_for_answered_models_and_unused_keys_do_not_block(
    tmp_path: Path, mock_models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 12."""
    server, models = mock_models
    common = {"bench": str(question_file(tmp_path)), "baseline": "base", "out": tmp_path / "run"}
    run_quiet(**common, models_file=models, models=["strong"], mode="inference-only")
    judge_only = write_models_file(tmp_path / "judge-only.yaml", server.base_url, {"judge-good": {}})
    with judge_only.open("a") as fh:  # an entry this run does not use, whose key variable is unset
        fh.write(
            "unrelated:\n  model: x\n"
            "  endpoints: [{api_base: 'http://127.0.0.1:9/v1', api_key: '${SURELY_UNSET}'}]\n"
        )
    result = run_quiet(
        **common, models_file=judge_only, models=["strong"], judges=["judge-good"], mode="judge-only"
    )
    assert result.exit_code == 0 and {r["model"] for r in result.leaderboard} == {"strong", "base"}


def test_an_unset_key_of_a_used_alias_is_reported_with_all_others(tmp_path: Path) -> None:
    """Item 12: every problem of the aliases a run uses, at once."""
    (tmp_path / "m.yaml").write_text(
        "a:\n  model: a\n  endpoints: [{api_base: 'http://127.0.0.1:9/v1', api_key: '${UNSET_A}'}]\n"
        "b:\n  model: b\n  endpoints: [{api_base: 'http://127.0.0.1:9/v1', api_key: '${UNSET_B}'}]\n"
    )
    result = jurist("run", "--models-file", "m.yaml", "--model", "a", "--judge", "b", cwd=tmp_path)
    assert result.returncode == 2 and "UNSET_A" in result.stderr and "UNSET_B" in result.stderr


def test_still_failing_requests_are_listed_per_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    """Item 16: failures.jsonl keeps every attempt; run.json says what is still failing now."""
    server = mock_server(faults={"prompt 1": ["400", "400"]})  # fails in two runs, then succeeds
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}})
    args = {"bench": str(question_file(tmp_path)), "models_file": models, "models": ["strong"]}
    args |= {"out": tmp_path / "run", "mode": "inference-only"}
    assert run_quiet(**args).failures == 1
    assert run_quiet(**args).failures == 1
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [f["uid"] for f in run_json["still_failing"]] == ["q1"]
    assert len(read_jsonl(tmp_path / "run" / "failures.jsonl")) == 2  # one line per attempt, with its run_id
    assert run_quiet(**args).failures == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["still_failing"] == []


def test_endpoints_are_chosen_when_the_request_gets_its_slot(mock_server: Any) -> None:
    """Item 17: a slow endpoint must not take half the requests while a fast one idles."""
    from conftest import FAST_RETRY
    from jurist.config import Endpoint, ModelSpec

    slow, fast = mock_server(delay=0.2), mock_server()
    spec = ModelSpec(
        alias="m", model="m", endpoints=[Endpoint(api_base=slow.base_url), Endpoint(api_base=fast.base_url)],
        parallel=4, max_tokens=8, temperature=0.0, timeout=5,
    )  # fmt: skip
    engine = Engine({"m": spec}, max_concurrency=4, policy=FAST_RETRY)

    async def main() -> None:
        try:
            jobs = [engine.client("m").complete([{"role": "user", "content": f"x{i}"}]) for i in range(200)]
            await asyncio.gather(*jobs)
        finally:
            await engine.aclose()

    asyncio.run(main())
    assert slow.stats.requests + fast.stats.requests == 200
    assert slow.stats.requests < 40, (slow.stats.requests, fast.stats.requests)


def test_a_custom_judge_prompt_is_kept_in_the_run_directory(
    tmp_path: Path, mock_models: tuple[Any, Path], run_quiet: Any
) -> None:
    """Item 19."""
    _, models = mock_models
    prompt = tmp_path / "judge.txt"
    prompt.write_text("[system]\nBe fair.\n[user]\n{question}\nA: {answer_a}\nB: {answer_b}\nVerdict?\n")
    out = tmp_path / "run"
    run_quiet(
        models_file=models, models=["strong"], judges=["judge-good"], out=out, limit=2, judge_prompt=prompt
    )
    kept = json.loads((out / "run.json").read_text())["judge_prompt_kept"]
    assert (out / kept).read_text() == prompt.read_text()
