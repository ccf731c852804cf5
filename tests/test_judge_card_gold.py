"""Human annotations brought to a finished run: ``jurist judges card RUN --gold FILE``.

The gold file is built from the mock's known strengths (a stronger model's answer is better); the card's
gold agreement is recomputed from the stored judgments without a request, equals an accuracy and a
Cohen's kappa counted here by hand from those judgments (JudgeBench's two-game rule), leaves the
leaderboard and the other probes as they were, and a bad gold line is refused in one line (exit 2).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.audit import CARD_FILE, gold_card
from mock_verdicts import STRENGTH
from test_cli import jurist

MODELS = ["strong", "weak"]
JUDGES = ["judge-good", "judge-p80", "judge-p20"]
BASELINE = "reference"


def stored(run: Path, judge: str, model: str) -> list[dict[str, Any]]:
    path = run / "judgments" / judge / f"{model}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def better(model: str) -> str:
    """Which of the pair the mock makes better: the model's answer or the baseline's."""
    return model if STRENGTH[model] > STRENGTH[BASELINE] else BASELINE


def write_gold(run: Path, path: Path) -> None:
    """strong's labels as winners, weak's as labels (baseline as A); one tie and one unknown item."""
    lines = []
    for model in MODELS:
        for record in stored(run, "judge-good", model):
            if model == "strong":
                lines.append({"uid": record["uid"], "model": model, "winner": better(model), "who": "ann-1"})
            else:
                label = "A>>B" if better(model) == BASELINE else "B>A"
                lines.append({"uid": record["uid"], "model": model, "label": label})
    lines[0] = {**lines[0], "winner": "tie"}
    lines.append({"uid": "no-such-question", "model": "strong", "label": "A>B"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def counted_by_hand(run: Path, judge: str) -> tuple[float, float, int]:
    """Accuracy and Cohen's kappa of ``judge`` against the gold (less the tie), by JudgeBench's rule."""
    decisions, golds = [], []
    tie = stored(run, "judge-good", "strong")[0]["uid"]  # the gold file's tie (see write_gold)
    for model in MODELS:
        for record in stored(run, judge, model):  # each judge's file in its own completion order
            if model == "strong" and record["uid"] == tie:
                continue
            gold_side = better(model)
            points = 0
            for game in record["games"]:
                label = game["label"]
                winner = None if label in (None, "A=B") else game["a"] if label.startswith("A") else game["b"]
                points += 0 if winner is None else 1 if winner == gold_side else -1
            gold = "A>B" if gold_side == BASELINE else "B>A"
            other = "B>A" if gold == "A>B" else "A>B"
            decisions.append(gold if points > 0 else other if points < 0 else "A=B")
            golds.append(gold)
    n = len(golds)
    observed = sum(d == g for d, g in zip(decisions, golds, strict=True)) / n
    by_decision, by_gold = Counter(decisions), Counter(golds)
    expected = sum(by_decision[c] * by_gold[c] for c in ("A>B", "A=B", "B>A")) / n**2
    return observed, (observed - expected) / (1 - expected), n


@pytest.fixture
def judged(tmp_path: Path, mock_server: Any, run_quiet: Any) -> tuple[Any, Path]:
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {n: {} for n in MODELS + JUDGES})
    result = run_quiet(models_file=models, models=MODELS, judges=JUDGES, out=tmp_path / "run")
    assert result.exit_code == 0
    return server, tmp_path / "run"


def test_gold_agreement_from_a_gold_file_matches_a_count_by_hand(
    judged: tuple[Any, Path], tmp_path: Path
) -> None:
    server, run = judged
    gold = tmp_path / "gold.jsonl"
    write_gold(run, gold)
    before = json.loads((run / CARD_FILE).read_text())
    board = (run / "leaderboard.json").read_bytes()
    sent = dict(server.stats.requests_by_model)
    result = jurist("judges", "card", str(run), "--gold", str(gold), "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    card = json.loads((run / CARD_FILE).read_text())
    assert json.loads(result.stdout) == card
    assert dict(server.stats.requests_by_model) == sent  # no request
    assert (run / "leaderboard.json").read_bytes() == board
    for judge in JUDGES:
        probe = card["judges"][judge]["probes"]["gold_agreement"]
        accuracy, kappa, n = counted_by_hand(run, judge)
        assert (probe["estimate"], probe["kappa"], probe["n"]) == (round(accuracy, 4), round(kappa, 4), n)
        assert probe["against"] == (
            "imported human annotations (gold.jsonl: 48 of its lines matched; 1 tie(s) left out)"
        )
        assert probe["gold_ties_left_out"] == 1 and probe["ci_low"] <= probe["estimate"] <= probe["ci_high"]
        others = {k: v for k, v in card["judges"][judge]["probes"].items() if k != "gold_agreement"}
        assert others == before["judges"][judge]["probes"]  # the other probes are kept as they were
    good = card["judges"]["judge-good"]["probes"]["gold_agreement"]
    assert (good["estimate"], good["kappa"], good["flagged"]) == (1.0, 1.0, False)
    chance = card["judges"]["judge-p80"]["probes"]["gold_agreement"]
    assert 0.5 < chance["estimate"] < 1.0 and 0 < chance["kappa"] < 1.0
    assert card["judges"]["judge-p20"]["probes"]["gold_agreement"]["flagged"]
    gold_warnings = [line for line in card["warnings"] if ": gold agreement " in line]
    assert len(gold_warnings) == 1 and gold_warnings[0].startswith("judge-p20: gold agreement 0.")
    assert set(card["warnings"]) - set(gold_warnings) == set(before["warnings"])
    again = jurist("judges", "card", str(run), "--gold", str(gold), cwd=tmp_path)  # the table, idempotent
    assert again.returncode == 0
    kappa = card["judges"]["judge-p80"]["probes"]["gold_agreement"]["kappa"]
    assert f"judge-p80: gold agreement {chance['estimate']:.2f} [" in again.stdout
    assert f"Cohen's kappa {kappa:.2f}, n 47, against imported human annotations" in again.stdout
    assert json.loads((run / CARD_FILE).read_text()) == card


def test_a_run_without_a_card_gets_one_with_the_gold_probe_alone(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {n: {} for n in [*MODELS, "judge-good"]})
    run = tmp_path / "run"
    run_quiet(models_file=models, models=MODELS, judges=["judge-good"], out=run, judge_card=0)
    assert not (run / CARD_FILE).exists()
    gold = tmp_path / "gold.jsonl"
    write_gold(run, gold)
    result = jurist("judges", "card", str(run), "--gold", str(gold), "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    audit = json.loads((run / CARD_FILE).read_text())["judges"]["judge-good"]
    assert list(audit["probes"]) == ["gold_agreement"] and audit["probes"]["gold_agreement"]["n"] == 47
    assert audit["judge_requests"] == 96 and audit["probe_requests"] == 0
    assert "only gold agreement" in audit["notes"][0]


BAD_LINES = [
    ('{"uid": "starter-001", "model": "strong"', "gold.jsonl:2: not valid JSON"),
    ('["starter-001"]', "gold.jsonl:2: a JSON object is required"),
    ('{"model": "strong", "label": "A>B"}', "gold.jsonl:2: field 'uid'"),
    ('{"uid": "starter-001", "label": "A>B"}', "gold.jsonl:2: field 'model'"),
    ('{"uid": "starter-001", "model": "strong", "label": "better"}', "gold.jsonl:2: field 'label'"),
    ('{"uid": "starter-001", "model": "strong"}', "gold.jsonl:2: field 'label' or 'winner'"),
    ('{"uid": "starter-001", "model": "strong", "label": "A>B", "winner": "strong"}', "field 'label' or"),
    (
        '{"uid": "starter-001", "model": "strong", "label": "A>B", "sample": -1}',
        "gold.jsonl:2: field 'sample'",
    ),
    ('{"uid": "starter-002", "model": "strong", "label": "B>A"}', "gold.jsonl:2: field 'uid': the same item"),
    ('{"uid": "starter-003", "model": "strong", "winner": "weak"}', "gold.jsonl:2: field 'winner': 'weak'"),
]


@pytest.mark.parametrize(("line", "error"), BAD_LINES)
def test_a_bad_gold_line_is_refused_in_one_line(
    judged: tuple[Any, Path], tmp_path: Path, line: str, error: str
) -> None:
    _, run = judged
    card = (run / CARD_FILE).read_bytes()
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"uid": "starter-002", "model": "strong", "label": "B>A"}\n' + line + "\n")
    result = jurist("judges", "card", str(run), "--gold", str(gold), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert error in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert (run / CARD_FILE).read_bytes() == card  # nothing written


def test_a_gold_file_that_labels_nothing_in_the_run_is_refused(
    judged: tuple[Any, Path], tmp_path: Path
) -> None:
    _, run = judged
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"uid": "starter-001", "model": "mixed", "label": "A>B"}\n')
    result = jurist("judges", "card", str(run), "--gold", str(gold), cwd=tmp_path)
    assert result.returncode == 2 and "no line labels a judgment" in result.stderr


def test_a_preference_judge_counts_its_one_game_and_a_rubric_grader_is_left_alone(tmp_path: Path) -> None:
    """AlpacaEval's one game per pair: right when P(model better) is on the humans' side; a judgment
    without a probability is no verdict (wrong). A rubric grader's judgments label nothing."""
    run = tmp_path / "run"
    (run / "judgments" / "pref").mkdir(parents=True)
    (run / "judgments" / "grader").mkdir(parents=True)
    stated = {"q1": 0.9, "q2": 0.2, "q3": 0.7, "q4": None, "q5": 0.5}
    records = [
        {"kind": "preference", "judge": "pref", "model": "m", "baseline": "gpt4", "uid": uid, "sample": 0}
        | {"p_model": p}
        for uid, p in stated.items()
    ]
    (run / "judgments" / "pref" / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    grade = {"kind": "rubric", "judge": "grader", "model": "m", "baseline": "-", "uid": "q1", "items": []}
    (run / "judgments" / "grader" / "m.jsonl").write_text(json.dumps(grade) + "\n")
    humans = {"q1": "m", "q2": "gpt4", "q3": "gpt4", "q4": "m", "q5": "m"}  # right: q1, q2
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(json.dumps({"uid": u, "model": "m", "winner": w}) + "\n" for u, w in humans.items())
    )
    document = gold_card(run, gold)
    assert list(document["judges"]) == ["pref"]
    probe = document["judges"]["pref"]["probes"]["gold_agreement"]
    # decisions B>A, A>B, B>A, none (A=B), A=B against golds B>A, A>B, A>B, B>A, B>A
    observed, expected = 2 / 5, (2 * 3 + 1 * 2) / 25  # B>A: 2 decided x 3 gold; A>B: 1 x 2
    assert (probe["estimate"], probe["n"]) == (observed, 5)
    assert probe["kappa"] == round((observed - expected) / (1 - expected), 4)


def test_jurist_run_gold_reads_the_file_against_the_judgments_it_stored(
    judged: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    """``jurist run --gold``: the same card as ``judges card --gold`` on the run, and a re-run keeps it."""
    server, run = judged
    gold = tmp_path / "gold.jsonl"
    write_gold(run, gold)
    sent = server.stats.requests
    models = tmp_path / "m.yaml"
    result = run_quiet(models_file=models, models=MODELS, judges=JUDGES, out=run, gold=gold)
    assert result.exit_code == 0 and server.stats.requests == sent  # all on disk or cached
    card = json.loads((run / CARD_FILE).read_text())
    for judge in JUDGES:
        accuracy, kappa, n = counted_by_hand(run, judge)
        probe = card["judges"][judge]["probes"]["gold_agreement"]
        assert (probe["estimate"], probe["kappa"], probe["n"]) == (round(accuracy, 4), round(kappa, 4), n)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"uid": "1"}\n')
    refused = jurist(
        "run", "--models-file", str(models), "--model", "strong", "--judge", "judge-good",
        "--out", str(tmp_path / "other"), "--gold", str(bad), "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "other").exists()  # refused before anything was written
