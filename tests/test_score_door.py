"""One scoring door: ``jurist run`` and ``jurist show`` (no option) print the same headline and rows for
every family on the same run directory, the family is a field of run.json (derived once for older and
imported runs), and intervals do not depend on the order in which outcomes were written."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, OfficialScoring, Question, take_options
from jurist.benchmarks.registry import register, unregister
from jurist.commands.show import show
from jurist.errors import JuristError
from jurist.families.door import ScoreRequest, Scores, score_run_dir
from jurist.families.registry import family_of_run


def run_then_show(run_quiet: Any, capsys: pytest.CaptureFixture[str], **config: Any) -> tuple[Any, Scores]:
    """Run, then ``jurist show`` the run directory with no option; asserts both printed the same tables
    and the run's rows are the door's. Returns the run's result and the door's scores."""
    capsys.readouterr()
    result = run_quiet(**config)
    printed_by_run = capsys.readouterr().out
    show([config["out"]])
    printed_by_show = capsys.readouterr().out
    assert printed_by_run.strip()
    scores = score_run_dir(config["out"])
    assert result.leaderboard == scores.rows
    assert printed_by_run == printed_by_show
    if scores.family != "placement":  # a placement's tables are titled by each (judge, model)
        assert f"{scores.title} ({scores.headline})" in " ".join(printed_by_show.split())
    run_json = json.loads((config["out"] / "run.json").read_text())
    assert run_json["score_family"] == scores.family
    return result, scores


def shuffled_copy(run: Path, into: Path, *names: str, seed: int = 3) -> Path:
    """A copy of ``run`` whose outcome files (``names``, globs) list their lines in another order."""
    shutil.copytree(run, into)
    rng = random.Random(seed)
    for name in names:
        for path in into.glob(name):
            lines = path.read_text().splitlines(keepends=True)
            rng.shuffle(lines)
            path.write_text("".join(lines))
    return into


@pytest.fixture
def server(mock_server: Any) -> Any:
    return mock_server()


def models_file(tmp_path: Path, server: Any, *aliases: str) -> Path:
    return write_models_file(tmp_path / "m.yaml", server.base_url, {a: {} for a in aliases})


# -- pairwise ------------------------------------------------------------------------------------------------


def test_pairwise_starter_run_and_show_agree_and_battle_order_does_not_matter(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    models = models_file(tmp_path, server, "better", "mixed", "worse", "judge-p70", "judge-p60-t20")
    out = tmp_path / "run"
    result, scores = run_then_show(
        run_quiet,
        capsys,
        models_file=models,
        models=["better", "mixed", "worse"],
        judges=["judge-p70", "judge-p60-t20"],
        out=out,
        samples=2,
    )
    assert result.exit_code == 0 and scores.family == "pairwise" and scores.headline == "weighted win rate"
    widths = [r["ci_high"] - r["ci_low"] for r in scores.rows if not r.get("baseline")]
    assert min(widths) > 0  # noisy judges: real intervals are compared below
    # generated answers are written as they arrive (the baseline's, shipped, in the benchmark's order)
    generated = [f"answers/{model}.jsonl" for model in ("better", "mixed", "worse")]
    shuffled = shuffled_copy(out, tmp_path / "shuffled", "battles.jsonl", *generated)
    for request in (
        ScoreRequest(),
        ScoreRequest(method="bt"),
        ScoreRequest(style_control=("length", "markdown"), n_bootstrap=20),
        ScoreRequest(length_controlled=True),
    ):
        assert score_run_dir(shuffled, request).rows == score_run_dir(out, request).rows, request
    rebuilt = shuffled_copy(out, tmp_path / "rebuilt", "judgments/*/*.jsonl")
    (rebuilt / "battles.jsonl").unlink()
    assert score_run_dir(rebuilt).rows == scores.rows  # rebuilt from the judgments, in another order


def test_a_run_with_a_chosen_method_is_shown_with_it(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    models = models_file(tmp_path, server, "better", "mixed", "judge-p70")
    args = {"models_file": models, "models": ["better", "mixed"], "judges": ["judge-p70"], "limit": 10}
    _, scores = run_then_show(run_quiet, capsys, **args, out=tmp_path / "bt", method="bt", seed=4)
    assert scores.headline.startswith("Bradley-Terry") and all("rating" in r for r in scores.rows)
    assert scores.settings["seed"] == 4
    _, lc = run_then_show(run_quiet, capsys, **args, out=tmp_path / "lc", length_controlled=True)
    # no official instruction difficulty here: the headline is the win rate, LC an estimate beside it
    assert lc.headline.startswith("win rate; LC only estimated")
    assert all("lc_estimate" in r for r in lc.rows if not r.get("baseline"))
    plain = score_run_dir(tmp_path / "lc", ScoreRequest(method="winrate"))  # a method given replaces it
    assert plain.headline == "weighted win rate" and plain.rows != lc.rows


def _toy_benchmark(name: str, official: OfficialScoring, categories: bool) -> Benchmark:
    """A benchmark with shipped baseline answers of varied length and markdown; with ``categories``, two
    categories each against its own baseline, scored apart (as Arena-Hard v2.0)."""
    questions = [
        Question(uid=f"{name}-{i:02d}", prompt=f"toy question {i} {'x' * (i % 5)}?", category=cat)
        for i in range(16)
        for cat in [("hard" if i % 2 else "creative") if categories else "default"]
    ]
    baselines = {"hard": "base-hard", "creative": "base-creative"} if categories else {}
    baseline = None if categories else "base"
    shipped: dict[str, dict[str, str]] = {}
    for i, q in enumerate(questions):
        alias = baselines.get(q.category, baseline)
        assert alias is not None
        text = f"[baseline] answer {i}" + (" **bold** point" * (i % 3)) + (" more" * (i % 7))
        shipped.setdefault(alias, {})[q.uid] = text
    return Benchmark(
        name=name,
        questions=questions,
        shipped_answers=shipped,
        baseline=baseline,
        baselines_by_category=baselines,
        score_categories=("hard", "creative") if categories else (),
        official_scoring=official,
    )


@pytest.fixture
def toys() -> Iterator[None]:
    def v2_like(options: BenchmarkOptions) -> Benchmark:
        take_options("toy-v2", options, {})
        official = OfficialScoring(style_control=("markdown", "length"), style_categories=("hard",))
        return _toy_benchmark("toy-v2", official, categories=True)

    def lc_like(options: BenchmarkOptions) -> Benchmark:
        take_options("toy-lc", options, {})
        return _toy_benchmark("toy-lc", OfficialScoring(length_controlled=True), categories=False)

    register("toy-v2", v2_like)
    register("toy-lc", lc_like)
    yield
    unregister("toy-v2")
    unregister("toy-lc")


def test_official_style_control_by_category_is_shown_as_the_run_scored_it(
    toys: None, tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Arena-Hard v2.0's shape: each category against its own baseline, style control on one of them."""
    models = models_file(tmp_path, server, "mixed", "worse", "judge-p70")
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench="toy-v2",
        models_file=models,
        models=["mixed", "worse"],
        judges=["judge-p70"],
        out=tmp_path / "run",
        n_bootstrap=20,
    )
    assert scores.detail.settings["method"] == "style-control"
    assert scores.detail.settings["style_categories"] == ["hard"]
    assert {r["category"] for r in scores.rows} == {"hard", "creative"}
    pooled = score_run_dir(tmp_path / "run", ScoreRequest(categories=()))  # show --category all
    assert all("category" not in r for r in pooled.rows)


def test_official_lc_is_shown_as_the_run_scored_it(
    toys: None, tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """AlpacaEval's shape: the LC score is the headline of run and show alike, rows in the same order (the
    baseline is not sorted first by show); with difficulty estimated (a toy has no official file) that
    headline is the plain win rate, the LC shown beside it as an estimate."""
    models = models_file(tmp_path, server, "worse", "mixed", "judge-p70")
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench="toy-lc",
        models_file=models,
        models=["worse", "mixed"],
        judges=["judge-p70"],
        out=tmp_path / "run",
    )
    assert scores.headline.startswith("win rate; LC only estimated")
    for row in (r for r in scores.rows if not r.get("baseline")):
        assert row["score"] == row["win_rate"] and "lc_estimate" in row


def test_alpaca_eval_run_and_show_both_headline_lc(
    tmp_path: Path, run_quiet: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's AlpacaEval case: the run printed LC, show the plain win rate (84.33 against 86.82 for
    the mock's strong model over 40 questions); both print the same headline now. Offline, without
    AlpacaEval's difficulty file, that headline is the win rate and LC an estimate beside it (issue 27)."""
    alpaca = pytest.importorskip("test_alpaca_eval_bench")
    if not (SHARED_DATA / "alpaca-eval").is_dir():
        pytest.skip("shared AlpacaEval data absent")
    alpaca.no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    server = alpaca.AlpacaMock()
    server.start()
    try:
        _, scores = run_then_show(
            run_quiet,
            capsys,
            bench="alpaca-eval",
            models_file=write_models_file(
                tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-lp": {}}
            ),
            models=["strong"],
            judges=["judge-lp"],
            judge_prompt=alpaca._fake_template(tmp_path),
            out=tmp_path / "run",
            limit=40,
        )
    finally:
        server.stop()
    (row,) = [r for r in scores.rows if r["model"] == "strong"]
    if row["difficulty_source"] == "official":
        assert scores.headline == "length-controlled win rate" and row["score"] != row["win_rate"]
    else:
        assert scores.headline.startswith("win rate; LC only estimated")
        assert row["score"] == row["win_rate"] != row["lc_estimate"]


def test_arena_hard_v2_run_and_show_both_headline_style_control(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """The issue's Arena-Hard v2.0 case: the run printed the style-controlled score, show the plain one."""
    named = pytest.importorskip("test_arena_hard_named")
    named.no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(named.data_dir(tmp_path)))
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench="arena-hard-v2.0",
        models_file=models_file(tmp_path, server, "mixed", "judge-p70"),
        models=["mixed"],
        judges=["judge-p70"],
        out=tmp_path / "run",
        limit=24,
    )
    assert scores.headline.startswith("style-controlled win rate on hard_prompt")
    assert scores.detail.settings["style_features"] == ["markdown", "length"]


# -- the other families --------------------------------------------------------------------------------------


def test_rules_run_and_show_agree_and_point_order_does_not_matter(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "key": k,
            "prompt": f"question {k}{', indeed' if k % 3 == 0 else ''}: answer without commas",
            "instruction_id_list": ["punctuation:no_comma"],
            "kwargs": [{}],
        }
        for k in range(30)
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench="ifeval",
        bench_options={"file": str(questions)},
        models_file=models_file(tmp_path, server, "m"),
        models=["m"],
        out=out,
        samples=2,
    )
    assert scores.family == "rules" and scores.headline == "prompt strict accuracy"
    (row,) = scores.rows
    assert row["prompt_strict"] == pytest.approx(100 * 20 / 30)
    assert row["prompt_strict_ci_low"] < row["prompt_strict"] < row["prompt_strict_ci_high"]
    shuffled = shuffled_copy(out, tmp_path / "shuffled", "points/*.jsonl")
    assert score_run_dir(shuffled).rows == scores.rows


def test_rubric_run_and_show_agree_and_point_order_does_not_matter(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    from test_rubric_judge import hb_reply, install_reply, write_hb_prompt

    if not (SHARED_DATA / "healthbench").is_dir():
        pytest.skip("shared HealthBench data absent")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    install_reply(server, lambda m: hb_reply(m))
    out = tmp_path / "run"
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench="healthbench",
        limit=6,
        models_file=models_file(tmp_path, server, "m", "g"),
        models=["m"],
        judges=["g"],
        judge_prompt=write_hb_prompt(tmp_path / "grader.py"),
        out=out,
        samples=2,
    )
    assert scores.family == "rubric" and scores.headline == "HealthBench score (simple-evals)"
    assert scores.rows[0]["ci_low"] is not None
    shuffled = shuffled_copy(out, tmp_path / "shuffled", "points/*.jsonl")
    assert score_run_dir(shuffled).rows == scores.rows


def test_placement_run_and_show_agree(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena_synth import build_arena, write_jsonl

    arena = write_jsonl(build_arena(n_models=12, n_battles=4_000, n_rare=2, seed=5), tmp_path / "arena.jsonl")
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench=str(arena),
        bench_options={"n": "30", "seed": "3"},
        models_file=models_file(tmp_path, server, "better", "judge-p80"),
        models=["better"],
        judges=["judge-p80"],
        out=tmp_path / "run",
        n_bootstrap=20,
    )
    assert scores.family == "placement" and scores.scored
    (row,) = scores.rows
    assert row["model"] == "better" and row["ci_low"] < row["rating"] < row["ci_high"]


def test_judge_accuracy_run_and_show_agree(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_judgebench_run import write_pairs

    pairs = write_pairs(tmp_path / "pairs.jsonl", 40)
    _, scores = run_then_show(
        run_quiet,
        capsys,
        bench="judgebench",
        bench_options={"split": str(pairs)},
        models_file=models_file(tmp_path, server, "judge-p70", "judge-p80-t10"),
        judges=["judge-p70", "judge-p80-t10"],
        out=tmp_path / "run",
        limit=30,
        limit_sample="stratified",
    )
    assert scores.family == "judge-accuracy" and scores.title == "JudgeBench (pairs, 30 pairs)"
    assert {r["judge"] for r in scores.rows} == {"judge-p70", "judge-p80-t10"}


# -- the family field: run.json names it; a peer tool's output is told by its schema ------------------------


def test_a_run_json_without_a_family_is_refused_in_one_line(tmp_path: Path) -> None:
    old = {"schema_version": 2, "bench": "starter", "judges": ["judge-good"]}
    (tmp_path / "run.json").write_text(json.dumps(old))
    with pytest.raises(JuristError, match=r"run.json: no score_family") as refused:
        family_of_run(tmp_path, old)
    assert "\n" not in str(refused.value)
    with pytest.raises(JuristError, match="score_family 'elo' is not one of pairwise"):
        family_of_run(tmp_path, {"score_family": "elo"})
    assert family_of_run(tmp_path, {"score_family": "rules", "judge_kind": "rubric"}) == "rules"


def test_a_peer_tools_output_without_run_json_is_told_by_its_schema(tmp_path: Path) -> None:
    battles = tmp_path / "battles.jsonl"  # no run.json: a peer tool's file, told by its schema
    battles.write_text(
        json.dumps(
            {"model_a": "a", "model_b": "b", "winner": "tie", "source": "human"} | {"judge_model": None}
        )
        + "\n"
    )
    assert family_of_run(battles, None) == "placement" and family_of_run(tmp_path, None) == "placement"
    assert family_of_run(tmp_path / "nothing", None) == "pairwise"


def test_a_separated_bt_fit_is_flagged_alike_by_run_and_show(
    tmp_path: Path, server: Any, run_quiet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27: "strong" wins every game against the reference, so its BT rating has no finite estimate;
    run and show print the same flagged interval and warning, and the scores files carry them as data."""
    models = models_file(tmp_path, server, "strong", "mixed", "judge-good")
    out = tmp_path / "run"
    args = {"models_file": models, "models": ["strong", "mixed"], "judges": ["judge-good"], "limit": 8}
    _, scores = run_then_show(run_quiet, capsys, **args, out=out, method="bt")
    rows = {row["model"]: row for row in scores.rows}
    assert rows["strong"]["separation"] == "won all" and rows["strong"]["ci_unreliable"] is True
    assert "separation" not in rows["mixed"] and "ci_unreliable" not in rows["mixed"]  # it won and lost
    (warning,) = [w for w in scores.warnings if "strong" in w]
    assert "won every game outright" in warning and "no finite estimate" in warning
    assert warning in json.loads((out / "ratings.json").read_text())["warnings"]
    assert json.loads((out / "leaderboard.json").read_text()) == scores.rows
    show([out])
    printed = " ".join(capsys.readouterr().out.split())
    assert "strong" in printed and ")*" in printed and f"warning: {' '.join(warning.split())}" in printed
    assert "(±0: the anchor)" in printed and "(-0.0 / +0.0)" not in printed
