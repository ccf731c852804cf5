"""A run's plan: what :func:`resolve` makes of a RunConfig before any request, as plain frozen data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, run_config, write_models_file
from jurist.config import ModelSpec
from jurist.engine.local.embedded import EMBEDDED_ALIAS
from jurist.errors import JuristError
from jurist.run.config import BudgetSettings
from jurist.run.plan import RunPlan, resolve

URL = "http://127.0.0.1:9/v1"  # never contacted: resolving sends nothing


def models_file(tmp_path: Path, *aliases: str, **extra: dict[str, Any]) -> Path:
    entries: dict[str, dict[str, Any]] = {alias: {} for alias in aliases}
    entries.update(extra)
    return write_models_file(tmp_path / "models.yaml", URL, entries)


def question_file(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"uid": f"q{i}", "prompt": f"prompt {i}"}) + "\n" for i in range(n)))
    return path


def test_the_default_run_is_the_embedded_model_against_the_starter_reference(tmp_path: Path) -> None:
    plan = resolve(run_config(out=tmp_path / "run", limit=5))
    assert plan.bench.name == "starter" and len(plan.bench.questions) == 5
    assert plan.candidates == (EMBEDDED_ALIAS,) and plan.judges == (EMBEDDED_ALIAS,)
    assert plan.baselines == ("reference",) and plan.shipped("reference") and not plan.shipped(EMBEDDED_ALIAS)
    assert set(plan.kinds) == {EMBEDDED_ALIAS} and plan.kinds[EMBEDDED_ALIAS].protocol_name
    assert plan.specs[EMBEDDED_ALIAS].serve is not None  # jurist serves it itself
    assert (plan.samples, plan.mode) == (1, "all")
    assert plan.run_dir.root == tmp_path / "run" and not plan.run_dir.root.exists()  # nothing written
    assert plan.scoring["metrics"] == ["winrate"] and plan.scoring["bootstrap"] == 100
    assert plan.family == "pairwise" and plan.run_fields()["score_family"] == "pairwise"
    assert plan.budget.prices == {} and plan.budget.earlier is None and not plan.budget.bounded
    assert plan.preset.reference is None  # the starter names no reference judge


def test_the_plan_is_frozen_plain_data(tmp_path: Path) -> None:
    plan = resolve(run_config(out=tmp_path / "run", limit=2))
    assert dataclasses.is_dataclass(plan)
    names = [field.name for field in dataclasses.fields(plan)]
    assert names == [
        "config", "bench", "run_dir", "specs", "candidates", "baselines", "judges", "kinds", "samples",
        "mode", "preset", "budget", "family", "scoring", "shard",
    ]  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.samples = 3  # type: ignore[misc]
    assert all(isinstance(getattr(plan, name), tuple) for name in ("candidates", "baselines", "judges"))
    again = dataclasses.replace(plan, samples=4)  # a variant is a new plan, the first one unchanged
    assert again.samples == 4 and plan.samples == 1 and isinstance(again, RunPlan)


def test_inference_only_plans_no_judge_and_samples_come_from_the_command(tmp_path: Path) -> None:
    models = models_file(tmp_path, "strong", "base")
    questions = question_file(tmp_path / "q.jsonl", 4)
    config = run_config(
        bench=str(questions),
        models_file=models,
        models=["strong", "strong"],
        baseline="base",
        samples=3,
        mode="inference-only",
        out=tmp_path / "run",
    )
    plan = resolve(config)
    assert plan.candidates == ("strong",)  # each alias once
    assert plan.judges == () and plan.kinds == {}
    assert plan.baselines == ("base",) and plan.samples == 3 and plan.mode == "inference-only"
    assert {"strong", "base", EMBEDDED_ALIAS} <= set(plan.specs)


def test_judge_only_needs_the_answers_on_disk(tmp_path: Path) -> None:
    models = models_file(tmp_path, "strong", "judge-good")
    questions = question_file(tmp_path / "q.jsonl", 3)
    config = run_config(
        bench=str(questions),
        models_file=models,
        models=["strong"],
        judges=["judge-good"],
        baseline="strong-base",
        mode="judge-only",
        out=tmp_path / "run",
    )
    with pytest.raises(JuristError, match=r"--judge-only: no answers for 'strong' at "):
        resolve(config)
    answers = tmp_path / "run" / "answers"
    answers.mkdir(parents=True)
    for alias in ("strong", "strong-base"):
        (answers / f"{alias}.jsonl").write_text(
            "".join(json.dumps({"uid": f"q{i}", "answer": f"{alias} {i}"}) + "\n" for i in range(3))
        )
    plan = resolve(config)
    assert plan.candidates == ("strong",) and plan.baselines == ("strong-base",)
    assert plan.judges == ("judge-good",) and plan.kinds["judge-good"].protocol_name


def test_a_benchmark_with_its_own_pairs_plans_its_candidates(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    record = {
        "question": "q?",
        "response_A": "a",
        "response_B": "b",
        "label": "A>B",
        "source": "livecodebench",
    }
    record["response_model"] = "synthetic"
    pairs.write_text("".join(json.dumps({**record, "pair_id": f"p{i}"}) + "\n" for i in range(4)))
    models = models_file(tmp_path, "judge-good")
    common: dict[str, Any] = {"bench": "judgebench", "bench_options": {"split": str(pairs)}}
    plan = resolve(run_config(**common, models_file=models, judges=["judge-good"], out=tmp_path / "run"))
    assert plan.candidates == tuple(plan.bench.candidates) and plan.candidates
    assert all(plan.shipped(alias) for alias in plan.candidates + plan.baselines)
    assert plan.judges == ("judge-good",) and plan.scoring["metrics"] == ["judge-accuracy"]
    with pytest.raises(JuristError, match="--model does not apply to judgebench"):
        resolve(run_config(**common, models_file=models, models=["x"], out=tmp_path / "run"))


def test_a_rule_checked_benchmark_has_no_judge_and_no_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    models = models_file(tmp_path, "strong")
    plan = resolve(
        run_config(bench="ifeval", models_file=models, models=["strong"], limit=3, out=tmp_path / "r")
    )
    assert plan.bench.rule_suite == "ifeval" and len(plan.bench.questions) == 3
    assert (plan.candidates, plan.baselines, plan.judges) == (("strong",), (), ())


def test_placed_specs_replace_the_models_file_entry(tmp_path: Path) -> None:
    models = models_file(tmp_path, "step_100")
    placed = ModelSpec(alias="step_100", model="step_100", max_tokens=7)
    config = run_config(models_file=models, models=["step_100"], mode="inference-only", out=tmp_path / "r")
    assert resolve(config).specs["step_100"].max_tokens == 64
    assert resolve(config, placed={"step_100": placed}).specs["step_100"] == placed


def test_prices_and_the_budget_are_resolved_with_the_plan(tmp_path: Path) -> None:
    price = {"price": {"input": 1.0, "output": 2.0}}
    models = models_file(tmp_path, "judge-good", strong=price)
    config = run_config(models_file=models, models=["strong"], judges=["judge-good"], out=tmp_path / "r")
    plan = resolve(config)
    assert set(plan.budget.prices) == {"strong"} and plan.budget.max_cost is None
    with pytest.raises(JuristError, match="--max-cost needs a price for every model the run uses; none for"):
        resolve(dataclasses.replace(config, budget=BudgetSettings(max_cost=1.0)))
    bounded = resolve(dataclasses.replace(config, budget=BudgetSettings(max_tokens=1000)))
    assert bounded.budget.bounded and bounded.budget.max_tokens == 1000


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"models": ["nobody"]}, r"model 'nobody' is not defined \(models file "),
        ({"models": ["strong"], "judges": ["judge-good"], "baseline": "strong"}, "is also a candidate"),
        ({"answers_file": "answers", "samples": 2}, "--answers gives one answer per prompt"),
    ],
)
def test_what_cannot_run_is_refused_in_one_line(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    models = models_file(tmp_path, "strong", "judge-good")
    if changes.get("answers_file"):
        answers = tmp_path / "answers.jsonl"
        answers.write_text(json.dumps({"key": "starter-001", "response": "x"}) + "\n")
        changes = {**changes, "answers_file": answers}
    with pytest.raises(JuristError, match=message) as raised:
        resolve(run_config(models_file=models, out=tmp_path / "run", **changes))
    # One line; an undefined name adds the four lines of the models-file entry it needs (issue 27).
    assert str(raised.value).count("\n") == (4 if "not defined" in message else 0)
    assert not (tmp_path / "run").exists()
