"""``jurist compare`` and ``--gate``: real runs against the mock server (its judges follow the models'
strengths), synthetic checkpoints of known strengths for the error rate over seeds, strict policy files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import FAST_RETRY, run_config, write_models_file
from decide_synth import true_win_rate, write_checkpoint
from jurist.decide import CompareSettings, compare_sides, read_policy, read_sides
from jurist.errors import InputError, JuristError
from jurist.run.pipeline import run_pipeline
from mock_openai import MockOpenAI


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Three candidates of known strength (equal to the baseline, better, worse) judged by a judge right
    75% of the time, and the better one again under another judge, on 60 questions."""
    root = tmp_path_factory.mktemp("compare")
    questions = root / "q.jsonl"
    questions.write_text(
        "".join(json.dumps({"uid": str(i), "category": "c", "prompt": f"question {i} " + "x" * i}) + "\n"
                for i in range(60))
    )  # fmt: skip
    server = MockOpenAI()
    server.start()
    aliases = {name: {} for name in ("equal", "better", "worse", "baseline", "judge-p75", "judge-p60")}
    models = write_models_file(root / "m.yaml", server.base_url, aliases)
    for model, judge, out in [
        ("equal", "judge-p75", "equal"),
        ("better", "judge-p75", "better"),
        ("worse", "judge-p75", "worse"),
        ("better", "judge-p60", "other-judge"),
    ]:
        result = run_pipeline(
            run_config(
                bench=str(questions), models_file=models, models=[model], baseline="baseline",
                judges=[judge], out=root / out, progress=False, retry=FAST_RETRY, check=False,
                judge_card=0, cache=False,
            )
        )  # fmt: skip
        assert result.exit_code == 0
    yield {"root": root, "questions": questions, "models": models, "server": server}
    server.stop()


def test_compare_decides_better_and_worse_in_the_documented_json(runs: dict[str, Any]) -> None:
    root = runs["root"]
    shown = jurist("compare", "equal", "better", "worse", "--format", "json", cwd=root)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)["comparisons"]
    assert [(r["a"], r["b"], r["decision"]) for r in rows] == [
        ("equal", "better", "better"),
        ("equal", "worse", "worse"),
    ]
    better = rows[0]
    low, high = better["difference"]["ci"]
    # The mock's judge is right 75% of the time: "better" wins ~75% of its games, "equal" always ties.
    assert better["score_a"] == pytest.approx(50.0)
    assert low < better["difference"]["estimate"] < high and low > 0
    assert better["difference"]["estimate"] == pytest.approx(better["score_b"] - better["score_a"])
    assert better["n"] == 60 and better["p"] < 1e-3 and better["p_holm"] >= better["p"]
    assert 0 < better["mdd"] < better["difference"]["estimate"]
    table = jurist("compare", "equal", "better", "--page", "page.html", cwd=root)
    assert table.returncode == 0 and "better" in table.stdout
    page = (root / "page.html").read_text()
    assert "Content-Security-Policy" in page and "<script" not in page


def test_head_to_head_judges_each_run_directly_against_the_first(runs: dict[str, Any]) -> None:
    root = runs["root"]
    shown = jurist(
        "compare", "equal", "better", "worse", "--head-to-head", "--models-file", str(runs["models"]),
        "--out", "h2h", "--format", "json", cwd=root,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)["comparisons"]
    assert [(r["b"], r["test"], r["decision"]) for r in rows] == [
        ("better", "head-to-head bootstrap", "better"),
        ("worse", "head-to-head bootstrap", "worse"),
    ]
    assert rows[0]["n"] == 60 and (root / "h2h" / "better" / "q" / "battles.jsonl").is_file()
    served = dict(runs["server"].stats.requests_by_model)
    again = jurist(
        "compare", "equal", "better", "--head-to-head", "--models-file", str(runs["models"]), "--out", "h2h",
        cwd=root,
    )  # fmt: skip
    assert again.returncode == 0 and dict(runs["server"].stats.requests_by_model) == served  # all reused


def test_compare_refuses_another_judge_and_names_a_replacement_map(runs: dict[str, Any]) -> None:
    root = runs["root"]
    refused = jurist("compare", "better", "other-judge", cwd=root)
    assert refused.returncode == 2
    assert (
        "not comparable: the judge differs" in refused.stderr and "judge-p75 vs judge-p60" in refused.stderr
    )
    mapping = root / "replacement.json"
    mapping.write_text(
        json.dumps(
            {
                "schema": "jurist.judge_replacement/1",
                "retired_judge": "judge-p75",
                "candidate": {"judge": "judge-p60", "model": "judge-p60"},
            }
        )  # jurist judges replace's shape
    )
    noted = jurist("compare", "better", "other-judge", "--replacement", str(mapping), cwd=root)
    assert noted.returncode == 2 and "a judge replacement map exists" in noted.stderr
    assert len(noted.stderr.strip().splitlines()) == 1


def test_gate_exits_4_exactly_when_the_regression_crosses_the_threshold(runs: dict[str, Any]) -> None:
    root = runs["root"]
    policy = root / "gate.yaml"
    policy.write_text(
        "reference: equal\nrules:\n  - task: q\n    max_drop: 10\n  - task: q\n    min_score: 20\n"
    )
    passed = jurist("compare", "equal", "better", "--gate", str(policy), cwd=root)
    assert passed.returncode == 0, passed.stderr
    assert passed.stderr.count("gate PASS") == 2 and "gate passed" in passed.stderr
    failed = jurist("compare", "equal", "worse", "--gate", str(policy), cwd=root)
    assert failed.returncode == 4
    assert (
        "gate FAIL worse: q: drop <= 10" in failed.stderr
        and "gate PASS worse: q: score >= 20" in failed.stderr
    )
    # The same policy after a run: the run saves everything, then the gate decides the exit code.
    for model, expected in (("worse", 4), ("better", 0)):
        done = jurist(
            "run", "--bench", str(runs["questions"]), "--models-file", str(runs["models"]), "--model", model,
            "--baseline", "baseline", "--judge", "judge-p75", "--out", model, "--no-check", "--no-judge-card",
            "--no-progress", "--no-cache", "--gate", str(policy), cwd=root,
        )  # fmt: skip
        assert done.returncode == expected, done.stderr
        saved = json.loads((root / model / "gate.json").read_text())
        assert saved["passed"] is (expected == 0) and len(saved["rules"]) == 2


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "rules:\n  - task: q\n    max_dorp: 1\n",
            "line 3: rules[0]: unknown field 'max_dorp' (did you mean 'max_drop'?)",
        ),
        ("rules:\n  - task: q\n    min_score: high\n", "line 3: rules[0].min_score: 'high' is not a number"),
        ("rules:\n  - task: q\n", "line 2: rules[0]: give exactly one of min_score, max_drop"),
        ("level: 0.95\nlevel: 0.9\nrules: []\n", "line 2: 'level' is given twice"),
        (
            "rules:\n  - task: q\n    max_drop: 1\n    test: maybe\n",
            "line 4: rules[0].test: 'maybe' is not one of",
        ),
    ],
)
def test_a_bad_policy_is_one_line_naming_file_line_and_field(tmp_path: Path, text: str, where: str) -> None:
    policy = tmp_path / "gate.yaml"
    policy.write_text(text)
    with pytest.raises(InputError) as caught:
        read_policy(policy)
    assert str(caught.value).startswith(f"{policy}: ") and where in str(caught.value)


def test_compare_says_better_only_for_true_differences_beyond_delta_at_the_stated_rate(
    tmp_path: Path,
) -> None:
    """Synthetic checkpoints of known strengths over 60 seeds: a checkpoint truly equal to the reference,
    or better by less than delta, is called "better" at most at the stated rate (5%, one side: 2.5%),
    one better by far more is found almost always, and "worse" is never said of a better one."""
    delta, seeds, n = 2.0, 60, 300
    called: dict[str, int] = {"same": 0, "small": 0, "large": 0, "large-worse": 0}
    for seed in range(seeds):
        difficulty = np.random.default_rng(1000 + seed).normal(0.0, 1.0, n)
        folder = tmp_path / str(seed)
        base = write_checkpoint(folder / "a", "ckpt-a", 0.0, difficulty, seed)
        strengths = {"same": 0.0, "small": 0.05, "large": 0.6}
        sides = [str(base)]
        for name, strength in strengths.items():
            sides.append(
                str(write_checkpoint(folder / name, f"ckpt-{name}", strength, difficulty, seed + 77))
            )
        truth = {
            name: true_win_rate(s, difficulty) - true_win_rate(0.0, difficulty)
            for name, s in strengths.items()
        }
        assert truth["small"] < delta < truth["large"] - 2 * delta
        rows = compare_sides(read_sides(sides), CompareSettings(delta=delta, n_bootstrap=400, seed=seed))
        decisions = {Path(row["b"]).name: row["decision"] for row in rows}
        called["same"] += decisions["same"] == "better"
        called["small"] += decisions["small"] == "better"
        called["large"] += decisions["large"] == "better"
        called["large-worse"] += decisions["large"] == "worse"
    assert called["same"] <= 0.05 * seeds and called["small"] <= 0.05 * seeds
    assert called["large"] >= 0.9 * seeds and called["large-worse"] == 0


def test_a_sweep_directory_stands_for_its_checkpoints_in_step_order(tmp_path: Path) -> None:
    difficulty = np.random.default_rng(3).normal(0.0, 1.0, 120)
    sweep = tmp_path / "sweep"
    for step, strength in ((100, 0.0), (200, 1.0), (300, 1.0)):
        write_checkpoint(sweep / f"step_{step}" / "synth", f"step_{step}", strength, difficulty, step)
    checkpoints = [{"name": f"step_{s}", "step": s, "status": "complete"} for s in (300, 100, 200)]
    (sweep / "sweep.json").write_text(json.dumps({"checkpoints": checkpoints}))
    sides = read_sides([str(sweep)])
    assert [Path(side.name).name for side in sides] == ["step_100", "step_200", "step_300"]
    rows = compare_sides(sides, CompareSettings(n_bootstrap=400), against="previous")
    assert [row["decision"] for row in rows] == ["better", "undecided"]


def test_runs_of_another_benchmark_version_are_refused(tmp_path: Path) -> None:
    difficulty = np.zeros(30)
    a = write_checkpoint(tmp_path / "a", "a", 0.0, difficulty, 1)
    b = write_checkpoint(tmp_path / "b", "b", 0.0, difficulty, 2)
    fields = json.loads((b / "run.json").read_text())
    fields["bench_info"]["version"] = "2"
    (b / "run.json").write_text(json.dumps(fields))
    with pytest.raises(JuristError, match="the benchmark differs \\(version\\)"):
        compare_sides(read_sides([str(a), str(b)]), CompareSettings())


def _rules_run(root: Path, model: str, passes: list[bool]) -> Path:
    """A rule-checked run directory by hand: one IFEval point per question, passing as ``passes`` says."""
    (root / "points").mkdir(parents=True)
    points = [
        {"kind": "point", "uid": f"k{i}", "sample": 0, "model": model, "judge": None, "metric": "ifeval",
         "value": float(ok), "category": "c",
         "detail": {"instructions": [{"id": "x", "strict": ok, "loose": ok}], "truncated": False,
                    "empty": False}}
        for i, ok in enumerate(passes)
    ]  # fmt: skip
    (root / "points" / f"{model}.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    fields = {"bench": "ifeval", "bench_name": "ifeval", "bench_info": {"suite": "ifeval", "version": "1"},
              "models": [model], "judges": [], "rule_suite": "ifeval", "score_family": "rules",
              "n_questions": len(passes), "samples": 1}  # fmt: skip
    (root / "run.json").write_text(json.dumps(fields))
    return root


def test_rule_checked_runs_get_mcnemar_and_the_door_s_own_scores(tmp_path: Path) -> None:
    from jurist.families import score_run_dir
    from jurist.ratings.binomial import binomial_p_value

    rng = np.random.default_rng(4)
    a_pass = rng.random(200) < 0.6
    b_pass = a_pass | (rng.random(200) < 0.25)  # b fixes a quarter of a's failures
    a = _rules_run(tmp_path / "a", "a", [bool(x) for x in a_pass])
    b = _rules_run(tmp_path / "b", "b", [bool(x) for x in b_pass])
    (row,) = compare_sides(read_sides([str(a), str(b)]), CompareSettings(n_bootstrap=500))
    only_b = int((b_pass & ~a_pass).sum())
    assert row["test"] == "McNemar exact" and row["discordant"] == [0, only_b]
    assert row["p"] == pytest.approx(binomial_p_value(only_b, only_b, 0.5)) and row["decision"] == "better"
    door = {r["model"]: r["prompt_strict"] for r in score_run_dir(a).rows + score_run_dir(b).rows}
    assert row["score_a"] == pytest.approx(door["a"]) and row["score_b"] == pytest.approx(door["b"])


def _rubric_run(root: Path, model: str, met: list[tuple[bool, bool]]) -> Path:
    """A HealthBench-shaped rubric run by hand: two 5-point items per answer, met as ``met`` says."""
    (root / "points").mkdir(parents=True)
    points = [
        {"kind": "point", "uid": f"h{i}", "sample": 0, "model": model, "judge": "grader",
         "metric": "healthbench", "value": float(ok), "category": "c",
         "detail": {"item": k, "points": 5, "tags": [], "example_tags": []}}
        for i, pair in enumerate(met) for k, ok in enumerate(pair)
    ]  # fmt: skip
    (root / "points" / f"{model}.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    fields = {"bench": "healthbench", "bench_name": "healthbench", "bench_info": {"suite": "healthbench"},
              "models": [model], "judges": ["grader"], "judge_kind": "rubric", "score_family": "rubric",
              "n_questions": len(met), "samples": 1}  # fmt: skip
    (root / "run.json").write_text(json.dumps(fields))
    return root


def test_rubric_runs_are_compared_on_the_paired_answer_scores(tmp_path: Path) -> None:
    from jurist.families import score_run_dir

    rng = np.random.default_rng(8)
    first = rng.random((150, 2)) < 0.5
    second = first | (rng.random((150, 2)) < 0.3)
    a = _rubric_run(tmp_path / "a", "a", [(bool(x), bool(y)) for x, y in first])
    b = _rubric_run(tmp_path / "b", "b", [(bool(x), bool(y)) for x, y in second])
    (row,) = compare_sides(read_sides([str(a), str(b)]), CompareSettings(n_bootstrap=500))
    assert row["family"] == "rubric" and row["judge"] == "grader" and row["decision"] == "better"
    assert row["difference"]["estimate"] == pytest.approx(100 * (second.mean() - first.mean()))
    door = {r["model"]: r["score"] for r in score_run_dir(a).rows + score_run_dir(b).rows}
    assert row["score_a"] == pytest.approx(100 * door["a"]) and row["score_b"] == pytest.approx(
        100 * door["b"]
    )
