"""``--shard I/N`` / ``--shards N`` and ``jurist merge``: a run cut into parts that separate processes run
(as Slurm array tasks and Kubernetes indexed pods would), one killed with kill -9 and re-run, one run
twice, joined into a run that scores exactly as one process running it all."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.errors import JuristError
from jurist.run.shards import (
    ShardChoice,
    parse_shard,
    partition,
    question_cost,
    shard_choice,
    shard_from_environment,
)
from jurist.store import Question

MODELS = ["strong", "mixed", "judge-good", "judge-broken", "base"]


def jurist(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args],
        cwd=cwd, capture_output=True, text=True, timeout=180, env={**os.environ, **(env or {})},
    )  # fmt: skip


def questions(n: int) -> list[Question]:
    # a few long prompts among short ones, clustered at the start (as a category of long prompts would be)
    return [Question(f"q{i:02d}", "long " * 2000 if i < 3 else f"prompt {i}", f"c{i % 3}") for i in range(n)]


def test_the_partition_is_every_question_once_and_depends_on_nothing_but_the_questions() -> None:
    qs = questions(40)
    owners = partition(qs, 4)
    assert sorted(owners) == sorted(q.uid for q in qs) and set(owners.values()) == {0, 1, 2, 3}
    assert partition(list(reversed(qs)), 4) == owners  # not the order they come in
    assert partition(qs, 4) == owners


def test_the_partition_balances_expected_cost_not_counts() -> None:
    qs = questions(40)
    owners = partition(qs, 4)
    loads = [sum(question_cost(q) for q in qs if owners[q.uid] == i) for i in range(4)]
    long_owners = {owners[q.uid] for q in qs[:3]}
    assert len(long_owners) == 3  # the three long prompts go to three different shards
    # a count split (10 each) would put all three long prompts in shard 0: cost ratio of about 6
    assert max(loads) / min(loads) < 1.5


def test_shard_choices_from_flags_and_schedulers() -> None:
    assert parse_shard("2/4") == ShardChoice(2, 4)
    for bad in ("4/4", "-1/4", "1", "a/b", "0/0"):
        with pytest.raises(JuristError, match="--shard"):
            parse_shard(bad)
    slurm = {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_COUNT": "4"}
    source = "SLURM_ARRAY_TASK_ID=5 - SLURM_ARRAY_TASK_MIN=3"
    assert shard_from_environment(4, slurm) == ShardChoice(2, 4, source)
    with pytest.raises(JuristError, match="SLURM_ARRAY_TASK_COUNT"):
        shard_from_environment(8, slurm)
    assert shard_from_environment(3, {"JOB_COMPLETION_INDEX": "1"}).index == 1
    with pytest.raises(JuristError, match="outside"):
        shard_from_environment(3, {"JOB_COMPLETION_INDEX": "3"})
    with pytest.raises(JuristError, match="no shard index"):
        shard_from_environment(3, {})
    with pytest.raises(JuristError, match="give one"):
        shard_choice("0/2", 2)


@pytest.fixture
def sharded(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server(delay=0.05)
    write_models_file(tmp_path / "models.yaml", server.base_url, {a: {} for a in MODELS})
    lines = [
        {"uid": f"q{i:02d}", "prompt": f"prompt {i} " + "x" * (40 * i), "category": f"c{i % 2}"}
        for i in range(16)
    ]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return server, tmp_path


RUN = [
    "run", "--bench", "q.jsonl", "--models-file", "models.yaml", "--model", "strong", "--model", "mixed",
    "--judge", "judge-good", "--baseline", "base", "--no-progress", "--no-cache", "--no-judge-card",
]  # fmt: skip


def leaderboard(path: Path, cwd: Path) -> list[dict[str, Any]]:
    shown = jurist("show", str(path), "--format", "json", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    rows: list[dict[str, Any]] = json.loads(shown.stdout)
    return rows


def test_shards_as_separate_processes_merge_into_the_single_run(sharded: tuple[Any, Path]) -> None:
    server, cwd = sharded
    single = jurist(*RUN, "--out", "single", cwd=cwd)
    assert single.returncode == 0, single.stderr
    alone = server.stats.requests
    server.stats.requests = 0
    slurm = {"SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"}
    for index in (0, 2, 3):
        part = jurist(*RUN, "--shards", "4", cwd=cwd, env={**slurm, "SLURM_ARRAY_TASK_ID": str(index)})
        assert part.returncode == 0, part.stderr
        assert part.stderr.splitlines()[0].startswith(f"shard {index}/4 (SLURM_ARRAY_TASK_ID={index}): ")
    # shard 1 is killed with kill -9 half-way through, then run again: it resumes
    args = [sys.executable, "-m", "jurist", *RUN, "--shards", "4"]
    env = {**os.environ, **slurm, "SLURM_ARRAY_TASK_ID": "1"}
    killed = subprocess.Popen(args, cwd=cwd, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    answers = cwd / "runs" / "q" / "shards" / "1-of-4" / "answers" / "strong.jsonl"
    deadline = time.monotonic() + 120
    while killed.poll() is None and time.monotonic() < deadline:
        if answers.is_file() and answers.read_bytes().count(b"\n") >= 1:
            break
        time.sleep(0.02)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    again = jurist(*RUN, "--shards", "4", cwd=cwd, env={**slurm, "SLURM_ARRAY_TASK_ID": "1"})
    assert again.returncode == 0, again.stderr
    shards = sorted(str(p) for p in (cwd / "runs" / "q" / "shards").iterdir())
    merged = jurist("merge", *shards, "--out", "merged", cwd=cwd)
    assert merged.returncode == 0, merged.stderr
    assert "into merged" in merged.stderr and "missing" not in merged.stderr
    assert leaderboard(cwd / "merged", cwd) == leaderboard(cwd / "single", cwd)
    # every request of the single run was sent once by the shards, but what the killed shard lost: at most
    # its own share (a quarter), however far it got before the kill landed (a loaded host polls late)
    assert alone <= server.stats.requests <= alone + alone // 4
    run_json = json.loads((cwd / "merged" / "run.json").read_text())
    assert run_json["n_questions"] == 16 and run_json["merge"]["complete"] is True
    assert [s["index"] for s in run_json["merged_from"]] == [0, 1, 2, 3]
    answered = [json.loads(line)["uid"] for line in (cwd / "merged" / "answers" / "strong.jsonl").open()]
    assert sorted(answered) == sorted(set(answered)) and len(answered) == 16  # each item once


def test_an_overlapping_shard_is_kept_once_and_its_cost_reported(sharded: tuple[Any, Path]) -> None:
    _, cwd = sharded
    for index in range(2):
        assert jurist(*RUN, "--shard", f"{index}/2", cwd=cwd).returncode == 0
    again = jurist(*RUN, "--shard", "1/2", "--out", "again", cwd=cwd)  # the same shard run twice
    assert again.returncode == 0, again.stderr
    shards = [str(p) for p in sorted((cwd / "runs" / "q" / "shards").iterdir())] + ["again"]
    merged = jurist("merge", *shards, "--out", "merged", cwd=cwd)
    assert merged.returncode == 0, merged.stderr
    assert "done by more than one shard and kept once" in merged.stderr
    assert jurist(*RUN, "--out", "single", cwd=cwd).returncode == 0
    assert leaderboard(cwd / "merged", cwd) == leaderboard(cwd / "single", cwd)
    report = json.loads((cwd / "merged" / "run.json").read_text())["merge"]
    # shard 1's answers of two models and their baseline, and two games per judgment, each sent twice
    assert report["duplicates"] > 0 and report["duplicate_requests"] >= report["duplicates"]


def test_a_missing_shard_is_named_and_a_merge_is_repeated_when_it_comes(sharded: tuple[Any, Path]) -> None:
    _, cwd = sharded
    for index in (0, 2):
        assert jurist(*RUN, "--shard", f"{index}/3", cwd=cwd).returncode == 0
    shards = cwd / "runs" / "q" / "shards"
    partial = jurist("merge", str(shards / "0-of-3"), str(shards / "2-of-3"), "--out", "merged", cwd=cwd)
    assert partial.returncode == 1
    assert "question(s) of shard 1 (its shard was not given)" in partial.stderr
    assert jurist(*RUN, "--shard", "1/3", cwd=cwd).returncode == 0
    whole = jurist("merge", *(str(p) for p in sorted(shards.iterdir())), "--out", "merged", cwd=cwd)
    assert whole.returncode == 0 and "missing" not in whole.stderr


def test_shards_of_different_plans_are_refused_naming_the_field(sharded: tuple[Any, Path]) -> None:
    _, cwd = sharded
    assert jurist(*RUN, "--shard", "0/2", cwd=cwd).returncode == 0
    other = [("judge-broken" if arg == "judge-good" else arg) for arg in RUN]  # the other judge
    jurist(*other, "--shard", "1/2", "--out", "other", cwd=cwd)  # a broken judge: its run exits 1
    assert (cwd / "other" / "shard.json").is_file()
    refused = jurist("merge", str(cwd / "runs" / "q" / "shards" / "0-of-2"), "other", "--out", "m", cwd=cwd)
    assert refused.returncode == 2 and "ran different plans: judges is" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (cwd / "m").exists()
    not_a_shard = jurist("merge", "other", "runs", "--out", "m", cwd=cwd)
    assert not_a_shard.returncode == 2 and "not a shard" in not_a_shard.stderr


def test_judging_runs_as_its_own_sharded_phase_over_merged_answers(sharded: tuple[Any, Path]) -> None:
    """Answers in 2 shards, merged; judged in 3 shards, each over a copy of the merged answers; merged
    again: the leaderboard of one process doing it all."""
    _, cwd = sharded
    for index in range(2):
        assert jurist(*RUN, "--inference-only", "--shard", f"{index}/2", cwd=cwd).returncode == 0
    answers = jurist(
        "merge", *(str(p) for p in sorted((cwd / "runs/q/shards").iterdir())), "--out", "ans", cwd=cwd
    )
    assert answers.returncode == 0 and "nothing to score" in answers.stderr
    for index in range(3):
        (cwd / "judging" / str(index)).mkdir(parents=True)
        shutil.copytree(cwd / "ans" / "answers", cwd / "judging" / str(index) / "answers")
        out = str(cwd / "judging" / str(index))
        judged = jurist(*RUN, "--judge-only", "--shard", f"{index}/3", "--out", out, cwd=cwd)
        assert judged.returncode == 0, judged.stderr
    merged = jurist("merge", *(str(p) for p in sorted((cwd / "judging").iterdir())), "--out", "m", cwd=cwd)
    assert merged.returncode == 0 and "more than one shard" not in merged.stderr  # copies are not duplicates
    assert jurist(*RUN, "--out", "single", cwd=cwd).returncode == 0
    assert leaderboard(cwd / "m", cwd) == leaderboard(cwd / "single", cwd)
