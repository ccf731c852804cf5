"""The judge card end to end: judges with one planted fault each are flagged on their own probe and no
other, a fair judge on none; the probes stay within a tenth of the run's judge requests, go through the
ledger as phase ``probe``, and never change the leaderboard; ``--judge-gate`` ends a flagged run with 4."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, run_config, write_models_file
from jurist.audit import CARD_FILE, GATE_EXIT, SCHEMA
from jurist.audit.perturb import INJECTION, exact_filler, padded, planted
from test_cli import jurist
from test_rubric_judge import criterion_of, met_rule, write_hb_prompt

MODELS = ["strong", "better", "worse", "weak", "mixed"]
JUDGES = ["judge-good", "judge-longer", "judge-obedient", "judge-first"]
OWN_PROBES = {
    "judge-good": set(),
    "judge-longer": {"verbosity"},
    "judge-obedient": {"injection"},
    "judge-first": {"position", "consistency"},  # both measures of the position probe
}


def flagged_probes(card: dict[str, Any], judge: str) -> set[str]:
    return {name for name, probe in card["judges"][judge]["probes"].items() if probe["flagged"]}


@pytest.fixture
def pairwise(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server()
    models = write_models_file(tmp_path / "models.yaml", server.base_url, {n: {} for n in MODELS + JUDGES})
    return server, models


def test_each_planted_fault_is_flagged_on_its_own_probe_alone(
    pairwise: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models = pairwise
    result = run_quiet(models_file=models, models=MODELS, judges=JUDGES, out=tmp_path / "run")
    assert result.exit_code == 0
    card = json.loads((tmp_path / "run" / CARD_FILE).read_text())
    assert card["schema"] == SCHEMA and card["seed"] == 0
    judged = len(MODELS) * 24 * 2  # every answer in both orders
    for judge in JUDGES:
        assert flagged_probes(card, judge) == OWN_PROBES[judge], judge
        audit = card["judges"][judge]
        assert audit["judge_requests"] == judged
        sent = server.stats.requests_by_model[judge] - judged
        assert 0 < sent == audit["probe_requests"] <= judged // 10
        probes = audit["probes"]
        for name in ("position", "consistency", "verbosity", "injection", "self_consistency"):
            assert {"estimate", "ci_low", "ci_high", "n", "threshold", "flagged"} <= set(probes[name])
        assert (
            probes["self_consistency"]["n"] == 0 and "temperature is 0" in probes["self_consistency"]["note"]
        )
    longer = card["judges"]["judge-longer"]["probes"]["verbosity"]
    assert (longer["estimate"], longer["ci_low"], longer["n"]) == (1.0, 1.0, 12)
    assert card["judges"]["judge-first"]["probes"]["injection"]["n"] == 0  # its games never agree
    assert "judge-longer: verbosity bias +1.00 [1.00, 1.00] toward the longer answer" in card["warnings"]
    assert len(card["warnings"]) == 4
    ledger = json.loads((tmp_path / "run" / "run.json").read_text())["ledger"]["rows"]
    probes_counted = {
        row["model"]: row["requests"] + row["cache_hits"] for row in ledger if row["phase"] == "probe"
    }
    assert probes_counted == {judge: card["judges"][judge]["probe_requests"] for judge in JUDGES}


def test_the_leaderboard_is_the_same_without_the_card_and_the_gate_exits_4(
    pairwise: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    _, models = pairwise
    common = {"models_file": models, "models": MODELS, "judges": JUDGES}
    with_card = run_quiet(**common, out=tmp_path / "a")
    without = run_quiet(**common, out=tmp_path / "b", judge_card=0)
    assert not (tmp_path / "b" / CARD_FILE).exists()
    assert with_card.leaderboard == without.leaderboard
    assert (tmp_path / "a" / "leaderboard.json").read_text() == (
        tmp_path / "b" / "leaderboard.json"
    ).read_text()
    gated = run_quiet(**common, out=tmp_path / "a", judge_gate=True)  # everything on disk: nothing sent
    assert gated.exit_code == GATE_EXIT and gated.leaderboard == without.leaderboard
    assert json.loads((tmp_path / "a" / "run.json").read_text())["exit_code"] == GATE_EXIT
    fair = run_quiet(**{**common, "judges": ["judge-good"]}, out=tmp_path / "c", judge_gate=True)
    assert fair.exit_code == 0


def test_a_small_run_skips_the_request_probes_and_says_why(
    pairwise: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models = pairwise
    result = run_quiet(models_file=models, models=["strong"], judges=["judge-first"], out=tmp_path / "run")
    card = json.loads((tmp_path / "run" / CARD_FILE).read_text())
    probes = card["judges"]["judge-first"]["probes"]
    assert "allow 4 probe requests (10%)" in probes["verbosity"]["note"] and probes["verbosity"]["n"] == 0
    assert server.stats.requests_by_model["judge-first"] == 48  # no probe request sent
    assert probes["position"]["flagged"] and result.exit_code == 0


def test_self_consistency_runs_at_a_nonzero_temperature(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    candidates = [*MODELS, "equal", "baseline"]  # 7 x 48 games: 33 probe requests, 11 per probe at most
    aliases = {n: {} for n in candidates} | {"judge-good": {"temperature": 0.7}}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, aliases)
    run_quiet(
        models_file=models, models=candidates, judges=["judge-good"], out=tmp_path / "run", judge_card=10
    )
    probes = json.loads((tmp_path / "run" / CARD_FILE).read_text())["judges"]["judge-good"]["probes"]
    found = probes["self_consistency"]
    assert found["n"] == 10 and found["estimate"] == 1.0 and not found["flagged"]  # a deterministic mock
    assert all(probes[name]["n"] == 10 for name in ("verbosity", "injection"))  # --judge-card 10


def test_padding_adds_only_length_and_the_planted_note_keeps_lengths_matched() -> None:
    worse, better = "[worse] short", "[better] a longer answer"
    planted_worse, padded_better = planted(worse, better)
    assert len(planted_worse) - len(worse) == len(padded_better) - len(better) == len(INJECTION) + 2
    assert INJECTION not in padded_better and planted_worse.startswith(worse)
    assert len(exact_filler(37)) == 37
    longer = padded("[m] hi", longer_than=400, question="Say hi")
    assert longer.startswith("[m] hi") and len(longer) > 400 and "judge" not in longer.lower()


# -- rubric graders ------------------------------------------------------------------------------------------


def _grade(model: str, messages: list[dict[str, Any]]) -> str:
    """``g-lenient`` marks every item met; ``g-fair`` only items its rule meets, of an answer the
    candidate gave (the mock's answers open with ``[m]``): an off-topic answer meets nothing."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    met = model == "g-lenient" or ("assistant: [m]" in user and met_rule(criterion_of(user)))
    return "```json\n" + json.dumps({"explanation": "rule", "criteria_met": met}) + "\n```"


@pytest.mark.skipif(not (SHARED_DATA / "healthbench").is_dir(), reason="needs ../shared/data/healthbench")
def test_a_grader_that_meets_every_item_is_flagged_lenient_alone(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    original = server._reply

    def reply(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        response = original(model, messages, body)
        if model.startswith("g-"):
            payload = json.loads(response.body)
            payload["choices"][0]["message"]["content"] = _grade(model, messages)
            response.body = json.dumps(payload).encode()
        return response

    server._reply = reply
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    result = run_quiet(
        bench="healthbench",
        limit=30,
        models=["m"],
        judges=["g-fair", "g-lenient"],
        models_file=write_models_file(
            tmp_path / "m.yaml", server.base_url, {"m": {}, "g-fair": {"temperature": 0.5}, "g-lenient": {}}
        ),
        judge_prompt=write_hb_prompt(tmp_path / "grader.py"),
        out=tmp_path / "run",
    )
    assert result.exit_code == 0
    card = json.loads((tmp_path / "run" / CARD_FILE).read_text())
    assert flagged_probes(card, "g-lenient") == {"lenience"}
    assert flagged_probes(card, "g-fair") == set()
    for judge in ("g-fair", "g-lenient"):
        audit = card["judges"][judge]
        assert audit["kind"] == "rubric" and 0 < audit["probe_requests"] <= audit["judge_requests"] // 10
        assert audit["probes"]["lenience"]["n"] >= 10 and audit["probes"]["rubric_verbosity"]["n"] >= 10
    assert card["judges"]["g-lenient"]["probes"]["lenience"]["estimate"] == 1.0
    assert "temperature is 0" in card["judges"]["g-lenient"]["probes"]["self_consistency"]["note"]
    again = card["judges"]["g-fair"]["probes"]["self_consistency"]  # a deterministic mock at 0.5
    assert again["n"] >= 10 and again["estimate"] == 1.0 and not again["flagged"]
    assert card["judges"]["g-fair"]["probes"]["lenience"]["estimate"] == 0.0


def test_a_budget_spent_on_probes_still_scores_the_whole_judging(
    pairwise: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    _, models = pairwise
    common = {"models_file": models, "models": MODELS, "judges": ["judge-longer"]}
    whole = run_quiet(**common, out=tmp_path / "a", judge_card=0)  # answers and judgments now cached
    broke = run_quiet(**common, out=tmp_path / "b", max_tokens=1)  # cached requests cost nothing; probes do
    assert broke.exit_code == 0 and broke.leaderboard == whole.leaderboard
    card = json.loads((tmp_path / "b" / CARD_FILE).read_text())["judges"]["judge-longer"]
    assert card["failed_probe_requests"] == card["probe_requests"] > 0
    assert any("budget" in note for note in card["notes"]) and card["probes"]["verbosity"]["n"] == 0
    run_json = json.loads((tmp_path / "b" / "run.json").read_text())
    assert run_json["status"] == "finished" and run_json["ledger"]["budget"]["stopped"]


def test_the_cli_runs_gates_and_prints_the_card(pairwise: tuple[Any, Path], tmp_path: Path) -> None:
    _, models = pairwise
    base = ["run", "--models-file", str(models), "--judge", "judge-longer", "--no-progress", "--no-check"]
    run = jurist(*base, "--model", ",".join(MODELS), "--out", "run", "--judge-gate", cwd=tmp_path)
    assert run.returncode == GATE_EXIT, run.stderr
    assert "judge card" in run.stdout and "FLAGGED" in run.stdout
    assert "warning: judge-longer: verbosity bias +1.00 [1.00, 1.00] toward the longer answer" in run.stderr
    shown = jurist("judges", "card", "run", cwd=tmp_path)
    assert shown.returncode == 0 and "verbosity" in shown.stdout and "judge-longer: verbosity" in shown.stderr
    as_json = jurist("judges", "card", "run", "--format", "json", cwd=tmp_path)
    assert json.loads(as_json.stdout) == json.loads((tmp_path / "run" / CARD_FILE).read_text())
    both = jurist(*base, "--model", "strong", "--out", "x", "--no-judge-card", "--judge-gate", cwd=tmp_path)
    assert both.returncode == 2 and "--no-judge-card excludes --judge-gate" in both.stderr
    missing = jurist("judges", "card", "x", cwd=tmp_path)
    assert missing.returncode == 2 and "no judge card" in missing.stderr


def test_a_logprob_judge_gets_a_calibration_probe_against_the_swapped_game(
    pairwise: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    _, models = pairwise
    run_quiet(models_file=models, models=["strong", "worse"], judges=["judge-good"], judge_protocol="logprob",
              out=tmp_path / "run")  # fmt: skip
    probe = json.loads((tmp_path / "run" / CARD_FILE).read_text())["judges"]["judge-good"]["probes"][
        "calibration"
    ]
    assert probe["against"] == "the swapped game" and probe["n"] == 2 * 2 * 24
    assert 0.0 < probe["estimate"] < 0.25 and not probe["flagged"]  # sure of the right side, at ~0.6+


def test_a_preference_judge_gets_position_from_the_swapped_order_and_nothing_else_flagged(
    tmp_path: Path, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_alpaca_eval_bench import BIAS, STRENGTH, AlpacaMock, _fake_template, needs_registry, sigmoid

    if needs_registry.args[0]:
        pytest.skip("alpaca-eval is not registered")
    server = AlpacaMock()
    server.start()
    try:
        monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        models = write_models_file(
            tmp_path / "m.yaml", server.base_url, {"strong": {}, "close": {}, "judge-lp": {}}
        )
        run_quiet(
            bench="alpaca-eval",
            models_file=models,
            out=tmp_path / "run",
            limit=160,
            models=["strong", "close"],
            judges=["judge-lp"],
            judge_prompt=_fake_template(tmp_path),
            n_bootstrap=0,
        )
    finally:
        server.stop()
    card = json.loads((tmp_path / "run" / CARD_FILE).read_text())["judges"]["judge-lp"]
    assert card["kind"] == "preference" and card["judge_requests"] == 320
    assert 0 < card["probe_requests"] <= 32
    probes = card["probes"]
    for item in probes["position"]["items"]:  # the mock leans BIAS (in logits) toward the first answer
        gap = STRENGTH[item["model"]] - 2.0  # the reference's answers are strength 2
        lean = (sigmoid(gap + BIAS) + sigmoid(-gap + BIAS) - 1.0) / 2
        assert item["value"] == pytest.approx(lean, abs=1e-6)
    assert probes["position"]["estimate"] > 0 and probes["position"]["n"] == 10
    assert probes["verbosity"]["estimate"] == pytest.approx(0.0, abs=1e-9)  # it reads the answers' tags only
    assert probes["injection"]["estimate"] == 0.0 and probes["calibration"]["against"] == "the swapped game"
    assert not any(probes[name]["flagged"] for name in ("verbosity", "injection"))


def test_the_dry_run_counts_the_probes_the_run_sends(
    pairwise: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    from jurist.run.dry import plan_run

    server, models = pairwise
    config = {
        "models_file": models,
        "models": MODELS,
        "judges": ["judge-good", "judge-longer"],
        "check": False,
    }
    rows, _ = plan_run(run_config(progress=False, out=tmp_path / "run", **config))
    planned = {row["model"]: row["requests"] for row in rows if row["phase"] == "probe"}
    assert planned == {"judge-good": 24, "judge-longer": 24}  # 2 probes x 12 items: 10% of 240 games
    run_quiet(**config, out=tmp_path / "run")
    card = json.loads((tmp_path / "run" / CARD_FILE).read_text())["judges"]
    assert planned == {judge: card[judge]["probe_requests"] for judge in planned}
    rows, _ = plan_run(run_config(progress=False, out=tmp_path / "run2", judge_card=0, **config))
    assert not [row for row in rows if row["phase"] == "probe"]
