"""What a first hour with ``jurist show`` and ``jurist import`` ran into: answer lengths, JudgeBench runs,
human battles, empty imports, no-bootstrap intervals, ill-conditioned style fits and bracketed names."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from jurist.families import ScoreOptions, print_scored, score_run
from jurist.report.formats import print_notes, render_csv, render_markdown
from jurist.store.run_dir import RunDir


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def metadata(tokens: int, headers: int = 0, lists: int = 0, bold: int = 0) -> dict[str, Any]:
    return {
        "token_len": tokens,
        "header_count": {"h1": headers},
        "list_count": {"ordered": lists},
        "bold_count": {"**": bold},
    }


def star_run(
    root: Path,
    models: dict[str, list[int]],
    *,
    baseline: str = "base",
    n: int = 30,
    judge: Any = "j",
    seed: int = 1,
    markdown: bool = True,
) -> Path:
    """A run directory by hand: answers with token_len (one list entry per question), two swapped games."""
    rng = random.Random(seed)
    battles = []
    for model, lengths in models.items():
        answers = []
        for i in range(n):
            style = (
                metadata(lengths[i], *(rng.randint(0, 5) for _ in range(3)))
                if markdown
                else metadata(lengths[i])
            )
            answers.append(
                {"kind": "answer", "uid": f"q{i}", "model": model, "answer": "x", "metadata": style}
            )
        write_lines(RunDir(root).answers(model), answers)
        if model == baseline:
            continue
        for i in range(n):
            win = rng.random() < 0.6
            for a, b in ((model, baseline), (baseline, model)):
                winner = "model_a" if (a == model) == win else "model_b"
                battles.append({"model_a": a, "model_b": b, "winner": winner, "uid": f"q{i}", "judge": judge})
    write_lines(root / "battles.jsonl", battles)
    (root / "run.json").write_text(
        json.dumps({"schema_version": 2, "baseline": baseline, "score_family": "pairwise"}), encoding="utf-8"
    )
    return root


# 9. avg_tokens ----------------------------------------------------------------------------------------------


def test_rows_carry_the_average_answer_length_in_every_method_and_output(tmp_path: Path) -> None:
    run = star_run(tmp_path / "run", {"base": [100] * 30, "long": [300 + i for i in range(30)]})
    for opts in (ScoreOptions(), ScoreOptions(method="bt"), ScoreOptions(style_control=("length",))):
        rows = {row["model"]: row for row in score_run(run, opts).rows}
        assert rows["base"]["avg_tokens"] == 100.0, opts
        assert rows["long"]["avg_tokens"] == pytest.approx(314.5), opts
    scored = score_run(run, ScoreOptions())
    assert "avg_tokens" in render_csv(scored.rows).splitlines()[0].split(",")
    assert "avg_tokens" in render_markdown(scored.rows).splitlines()[0]
    out = io.StringIO()
    print_scored(Console(file=out, width=200), scored, title="t")
    assert "avg tokens" in out.getvalue() and "314" in out.getvalue()


def test_answers_without_token_len_are_counted_with_o200k(tmp_path: Path) -> None:
    run = star_run(tmp_path / "run", {"base": [10] * 30, "m": [20] * 30})
    answers = [
        {"kind": "answer", "uid": f"q{i}", "model": "m", "answer": "hello world, hello world"}
        for i in range(30)
    ]
    write_lines(run / "answers" / "m.jsonl", answers)
    from jurist.tokens import count_tokens

    scored = score_run(run, ScoreOptions())
    rows = {row["model"]: row for row in scored.rows}
    assert rows["m"]["avg_tokens"] == float(count_tokens("hello world, hello world"))
    assert any("token_len counted for 30 answers of m" in note for note in scored.notes)


# 14. JudgeBench runs and human battles ----------------------------------------------------------------------


def test_show_rescores_a_judgebench_run_of_the_one_runner(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    from conftest import write_models_file
    from test_judgebench_run import write_pairs

    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"judge-p70": {}, "judge-p80-t10": {}})
    out = tmp_path / "run"
    result = run_quiet(
        bench="judgebench",
        bench_options={"split": str(write_pairs(tmp_path / "pairs.jsonl", 40))},
        models_file=models,
        judges=["judge-p70", "judge-p80-t10"],
        out=out,
    )
    assert result.exit_code == 0
    stored = json.loads((out / "judgebench.json").read_text())
    shown = jurist("show", str(out), "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == stored
    scored = jurist("judgebench", "score", str(out), "--format", "json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout) == stored
    one = jurist("show", str(out), "--judge", "judge-p70", "--format", "json", cwd=tmp_path)
    assert [row["judge"] for row in json.loads(one.stdout)] == ["judge-p70"]


def test_human_battles_with_a_null_judge_score_as_human(tmp_path: Path) -> None:
    run = star_run(tmp_path / "run", {"base": [10] * 30, "m": [20] * 30, "k": [15] * 30}, judge=None)
    scored = score_run(run, ScoreOptions(method="bt"))
    assert {row["judge"] for row in scored.rows} == {"human"}
    shown = jurist("show", str(run), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr


# 15. imports that find nothing ------------------------------------------------------------------------------


def test_an_import_that_finds_nothing_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty" / "some_folder").mkdir(parents=True)
    alpaca = jurist(
        "import", "alpaca-eval", str(tmp_path / "empty"), "--out", str(tmp_path / "a"), cwd=tmp_path
    )
    assert alpaca.returncode == 2
    assert len(alpaca.stderr.strip().splitlines()) == 1 and "model_outputs.json" in alpaca.stderr
    assert not (tmp_path / "a").exists()
    (tmp_path / "ah" / "model_answer").mkdir(parents=True)
    arena = jurist("import", "arena-hard", str(tmp_path / "ah"), "--out", str(tmp_path / "b"), cwd=tmp_path)
    assert arena.returncode == 2
    assert len(arena.stderr.strip().splitlines()) == 1 and "model_answer/*.jsonl" in arena.stderr
    assert not (tmp_path / "b").exists()


# 18. no bootstrap, and ill-conditioned style control --------------------------------------------------------


def test_without_bootstrap_there_are_no_intervals_and_no_bootstrap_claims(tmp_path: Path) -> None:
    run = star_run(tmp_path / "run", {"base": [100] * 30, "m": [100 + 7 * i for i in range(30)]})
    for opts in (
        ScoreOptions(n_bootstrap=0),
        ScoreOptions(method="bt", n_bootstrap=0),
        ScoreOptions(style_control=("length", "markdown"), n_bootstrap=0),
    ):
        scored = score_run(run, opts)
        for row in scored.rows:
            assert row["ci_low"] is None and row["ci_high"] is None, opts
            assert row.get("winrate_ci_low") is None, opts
        assert not any("bootstrap median" in note for note in scored.notes), opts
        out = io.StringIO()
        print_scored(Console(file=out, width=200), scored, title="t")
        assert "(-0.0" not in out.getvalue()


def test_style_control_warns_when_style_is_collinear_with_the_models(tmp_path: Path) -> None:
    # Every answer of a model has the same length: length and the model's strength are one column.
    run = star_run(
        tmp_path / "run", {"base": [100] * 30, "a": [400] * 30, "b": [200] * 30}, markdown=False, seed=3
    )
    scored = score_run(run, ScoreOptions(style_control=("length",), n_bootstrap=10))
    assert len(scored.warnings) == 1 and "collinear" in scored.warnings[0]
    out = io.StringIO()
    print_scored(Console(file=out, width=300), scored, title="t")
    assert "warning: style control" in out.getvalue()
    rng = random.Random(5)
    sound = star_run(
        tmp_path / "sound",
        {name: [rng.randint(50, 900) for _ in range(30)] for name in ("base", "a", "b")},
        seed=3,
    )
    assert score_run(sound, ScoreOptions(style_control=("length", "markdown"), n_bootstrap=10)).warnings == []


# 3. names and hints with brackets are printed as they are ---------------------------------------------------


def test_bracketed_model_names_and_hints_come_out_intact(tmp_path: Path) -> None:
    run = star_run(tmp_path / "run", {"base": [10] * 30, "gpt[4]": [20] * 30}, judge="judge[x]")
    scored = score_run(run, ScoreOptions())
    out = io.StringIO()
    print_scored(Console(file=out, width=200), scored, title="run [v2]")
    assert "gpt[4]" in out.getvalue() and "run [v2]" in out.getvalue()
    hint = io.StringIO()
    print_notes(Console(file=hint, width=200), ["install it: pip install 'jurist[litellm]'"])
    assert "pip install 'jurist[litellm]'" in hint.getvalue()
    shown = jurist("show", str(run), cwd=tmp_path)
    assert shown.returncode == 0 and "gpt[4]" in shown.stdout
