"""Arena-Hard-Local by name: upstream's judge config read at run time, its verdict reading and its v0.1
scoring reproduced row by row against upstream's formulas (written here from r4dm/arena-hard-local's
gen_judgment.py ``get_score``, show_result.py ``get_battles_from_judgment``, ``compute_mle_elo``,
``get_bootstrap_result`` and ``predict_win_rate``), a run with a mock judge, and ``jurist show`` on
Arena-Hard's own ``arena_hard_battles.jsonl``."""

from __future__ import annotations

import functools
import http.server
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy.optimize import minimize

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import load_benchmark
from jurist.errors import JuristError
from jurist.families.pairwise.winrate import win_rate_leaderboard
from jurist.judging.pairwise import battles_from_judgment
from jurist.judging.protocols import arena_hard_local_protocol, protocol_for
from jurist.judging.upstream_local import load_local_settings, read_verdict
from jurist.store.jsonl import read_jsonl

LOCAL = SHARED_DATA / "arena-hard-local"
URLOPEN = urllib.request.urlopen
BASELINE = "Phi-3-medium-128k-instruct"
LABELS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
pytestmark = pytest.mark.skipif(not LOCAL.is_dir(), reason="shared Arena-Hard-Local data not present")


@pytest.fixture(autouse=True)
def _shared_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared data as the data dir, and no network: everything must be found there."""
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def config() -> dict[str, Any]:
    return dict(yaml.safe_load((LOCAL / "judge_config.yaml").read_text(encoding="utf-8")))


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def baseline_answers() -> dict[str, str]:
    answers = rows(LOCAL / "model_answer" / f"{BASELINE}.jsonl")
    return {r["question_id"]: r["choices"][0]["turns"][0]["content"] for r in answers}


# -- upstream's formulas -----------------------------------------------------------------------------------


def upstream_get_score(judgment: str, pattern: str) -> tuple[str | None, bool]:
    """gen_judgment.py ``get_score``: (score, try_again)."""
    matches = [m for m in re.compile(pattern).findall(judgment) if m != ""]
    if len(set(matches)) == 0:
        return None, True
    if len(set(matches)) == 1:
        return matches[0].strip("\n").upper(), False
    return None, False


def upstream_outcome(score: str | None, game: int) -> tuple[str | None, int]:
    """show_result.py: brackets removed, then (winner, weight) of game 1 (baseline in A) or game 2."""
    label = None if score is None else score.replace("[", "").replace("]", "")
    table = {"A=B": ("tie", 1), "A>B": ("model_a", 1), "A>>B": ("model_a", 3)}
    table |= {"B>A": ("model_b", 1), "B>>A": ("model_b", 3)}
    winner, weight = table.get(label or "", (None, 0))
    if game == 2 and winner in ("model_a", "model_b"):
        winner = "model_b" if winner == "model_a" else "model_a"
    return winner, weight


def upstream_battles(judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``get_battles_from_judgment``: each game's battle repeated ``weight`` times, model_a the baseline."""
    out = []
    for row in judgments:
        for game, played in enumerate(row["games"], start=1):
            winner, weight = upstream_outcome(played["score"], game)
            battle = {"question_id": row["question_id"], "model_a": BASELINE, "model_b": row["model"]}
            out.extend([{**battle, "winner": winner}] * weight)
    return out


def upstream_elo(battles: list[dict[str, Any]]) -> dict[str, float]:
    """``compute_mle_elo``: battles doubled, a tie one win each way, logistic regression without penalty or
    intercept on +-ln 10 columns (a row between a model and itself keeps -ln 10), anchored at the baseline."""
    models = list(dict.fromkeys([b["model_a"] for b in battles] + [b["model_b"] for b in battles]))
    index = {m: k for k, m in enumerate(models)}
    doubled = battles + battles
    x = np.zeros((len(doubled), len(models)))
    y = np.zeros(len(doubled))
    for i, b in enumerate(doubled):
        x[i, index[b["model_a"]]] = math.log(10)
        x[i, index[b["model_b"]]] = -math.log(10)
        y[i] = b["winner"] == "model_a" or (b["winner"] == "tie" and i < len(battles))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        p = 1.0 / (1.0 + np.exp(-z))
        return float(np.sum(np.logaddexp(0.0, z) - y * z)), x.T @ (p - y)

    w = minimize(loss, np.zeros(len(models)), jac=True, method="L-BFGS-B", options={"gtol": 1e-10}).x
    elo = 400.0 * w + 1000.0
    return {m: float(elo[index[m]] - elo[index[BASELINE]] + 1000.0) for m in models}


def win_rate(elo: float) -> float:
    """``predict_win_rate`` against the baseline (rated 1000), in percent."""
    return 100.0 / (1.0 + 10 ** ((1000.0 - elo) / 400.0))


def synthetic_judgments(models: dict[str, float], seed: int) -> list[dict[str, Any]]:
    """Judgments in upstream's v0.1 format on the real question ids: each game's judge reply drawn per
    model strength, now and then an odd one (no label, two labels, lower case, single brackets, A<B)."""
    rng = random.Random(seed)
    ids = [r["question_id"] for r in rows(LOCAL / "question_ru.jsonl")]
    pattern = config()["regex_pattern"]
    out = []
    for model, strength in models.items():
        for uid in ids:
            games = []
            for game in (1, 2):
                weights = (strength**2, strength, 0.3, 1.0 - strength, (1.0 - strength) ** 2)
                label = rng.choices(("B>>A", "B>A", "A=B", "A>B", "A>>B"), weights)[0]  # model in B
                if game == 2:  # the model in A
                    label = {"B>>A": "A>>B", "B>A": "A>B", "A=B": "A=B", "A>B": "B>A", "A>>B": "B>>A"}[label]
                odd = rng.random()
                reply = f"My final verdict is [[{label}]]"
                if odd < 0.03:
                    reply = "Both are fine."
                elif odd < 0.05:
                    reply = f"[[A>B]] no, [[{label}]]" if label != "A>B" else "[[A>B]] or [[B>A]]"
                elif odd < 0.08:
                    reply = f"verdict: [{label.lower()}]"
                elif odd < 0.09:
                    reply = "[[A<B]]"
                score, _ = upstream_get_score("\n" + reply, pattern)
                games.append({"judgment": "\n" + reply, "score": score})
            out.append({"question_id": uid, "model": model, "games": games})
    return out


# -- the judge config and the protocol ---------------------------------------------------------------------


def test_the_judge_is_upstreams_config_read_at_run_time() -> None:
    """Prompt, template, regex and sampling come from the pinned judge_config.yaml (none of its text is in
    jurist's sources), and the user message is upstream's template filled, byte for byte, on real rows."""
    upstream = config()
    settings = load_local_settings()
    assert settings.system_prompt == upstream["system_prompt"]
    assert settings.verdict_pattern == upstream["regex_pattern"] == r"\[(\[?[AB<>=ab]+\]?)\]"
    assert (settings.temperature, settings.max_tokens) == (0.0, 512)
    assert (settings.baseline_model, settings.judge_model) == (BASELINE, "Qwen2-72B-Instruct-AWQ")
    source = Path(__file__).resolve().parents[1] / "src"
    phrase = "same linguistic language"
    assert phrase in settings.system_prompt
    assert not [p for p in source.rglob("*") if p.is_file() and phrase in p.read_text(errors="ignore")]
    protocol = arena_hard_local_protocol()
    assert protocol.system_prompt == upstream["system_prompt"]
    questions = {r["question_id"]: r["turns"][0]["content"] for r in rows(LOCAL / "question_ru.jsonl")}
    answers = baseline_answers()
    ids = list(questions)[:100]
    for uid, other in zip(ids, ids[1:], strict=False):
        expected = upstream["prompt_template"][0].format(
            question_1=questions[uid], answer_1=answers[uid], answer_2=answers[other]
        )
        assert protocol.user_message(questions[uid], answers[uid], answers[other]) == expected


def test_an_altered_config_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "arena-hard-local"
    folder.mkdir()
    (folder / "judge_config.yaml").write_text(
        (LOCAL / "judge_config.yaml")
        .read_text(encoding="utf-8")
        .replace("max_tokens: 512", "max_tokens: 4096")
    )
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError) as caught:
        load_local_settings()
    assert "is not that of r4dm/arena-hard-local@f9be4e9 config/judge_config.yaml" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_reader_is_upstreams_row_by_row() -> None:
    """Every reply, built on the baseline's real answers and every spelling upstream meets, reads as
    get_score + show_result read it: the label (or none) and whether upstream would ask again."""
    pattern = config()["regex_pattern"]
    protocol = arena_hard_local_protocol()
    endings = [f"[[{label}]]" for label in LABELS] + [f"[{label.lower()}]" for label in LABELS]
    endings += ["", "[[A>B]] then [[B>A]]", "[[A>B]] and [A>B]", "[[A>B]] ... [[A>B]]", "[[A<B]]", "[[AB]]"]
    endings += ["[[a=b]] [[A=B]]", "[[B>>A]\n]", "[ [A>B] ]", "[[=]]"]
    checked = 0
    for n, answer in enumerate(baseline_answers().values()):
        reply = f"{answer[:300]}\nMy final verdict is {endings[n % len(endings)]}"
        label, how = read_verdict(reply, pattern)
        score, try_again = upstream_get_score(reply, pattern)
        winner, weight = upstream_outcome(score, 1)
        assert (label is not None) == (weight > 0)
        if label is not None:
            assert upstream_outcome(label, 1) == (winner, weight)
        assert protocol.asks_again(label, how) == try_again
        checked += 1
    assert checked == 500


def test_a_game_without_a_verdict_drops_alone() -> None:
    record = {
        "uid": "q", "judge": "j", "model": "m", "baseline": BASELINE, "invalid": True,
        "games": [
            {"game": 1, "a": BASELINE, "b": "m", "label": None},
            {"game": 2, "a": "m", "b": BASELINE, "label": "A>>B"},
        ],
    }  # fmt: skip
    assert battles_from_judgment(record) == []  # Arena-Hard v2.0: the question goes
    kept = battles_from_judgment({**record, "invalid_drops": "game"})
    assert [(b["model_a"], b["winner"], b["weight"]) for b in kept] == [("m", "model_a", 3)]


# -- scoring -----------------------------------------------------------------------------------------------


def jurist_records(judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The judgments as the arena-hard-local protocol records them (labels read by jurist's reader)."""
    pattern = config()["regex_pattern"]
    out = []
    for row in judgments:
        games = []
        for number, played in enumerate(row["games"], start=1):
            a, b = (BASELINE, row["model"]) if number == 1 else (row["model"], BASELINE)
            games.append(
                {"game": number, "a": a, "b": b, "label": read_verdict(played["judgment"], pattern)[0]}
            )
        invalid = any(g["label"] is None for g in games)
        out.append(
            {"uid": row["question_id"], "judge": "j", "model": row["model"], "baseline": BASELINE,
             "games": games, "invalid": invalid, "invalid_drops": "game"}
        )  # fmt: skip
    return out


def test_scores_are_upstreams_bradley_terry_win_rates() -> None:
    """The same judgments through jurist (reader, battles, weighted win rate) and through upstream's
    formulas (get_score, get_battles_from_judgment, compute_mle_elo, predict_win_rate) give the same
    score for every model, invalid and odd games included."""
    judgments = synthetic_judgments({"strong": 0.8, "even": 0.5, "weak": 0.2}, seed=3)
    elo = upstream_elo(upstream_battles(judgments))
    battles = [b for r in jurist_records(judgments) for b in battles_from_judgment(r)]
    board = win_rate_leaderboard(battles, {BASELINE}, n_bootstrap=0)
    scores = {r["model"]: r["score"] for r in board if not r.get("baseline")}
    assert set(scores) == {"strong", "even", "weak"}
    for model, score in scores.items():
        assert score == pytest.approx(win_rate(elo[model]), abs=1e-3)
    assert scores["strong"] > 60 > 40 > scores["weak"]


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_show_reads_arena_hards_battles_file_as_show_result_scores_it(tmp_path: Path) -> None:
    """An arena_hard_battles.jsonl (the baseline's own judgments included, as upstream writes them): every
    score is upstream's Bradley-Terry win rate, and every interval the percentiles of upstream's own
    bootstrap (np.random.seed(42), the whole table resampled, a fit per round)."""
    judgments = synthetic_judgments({"strong": 0.75, "weak": 0.3, BASELINE: 0.5}, seed=5)
    battles = upstream_battles(judgments)
    path = tmp_path / "arena_hard_battles.jsonl"
    path.write_text("".join(json.dumps(b) + "\n" for b in battles))
    shown = jurist("show", str(path), "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    rows_out = {r["model"]: r for r in (document["rows"] if isinstance(document, dict) else document)}
    point = upstream_elo(battles)
    np.random.seed(42)
    rounds = [
        upstream_elo([battles[i] for i in np.random.choice(len(battles), len(battles))]) for _ in range(100)
    ]
    for model in ("strong", "weak"):
        assert rows_out[model]["score"] == pytest.approx(win_rate(point[model]), abs=1e-3)
        low, high = np.percentile([r[model] for r in rounds], [2.5, 97.5])
        assert rows_out[model]["ci_low"] == pytest.approx(win_rate(low), abs=0.02)
        assert rows_out[model]["ci_high"] == pytest.approx(win_rate(high), abs=0.02)
    assert rows_out[BASELINE]["score"] == 50.0
    assert "met itself move no score" in shown.stderr
    mine = jurist("show", str(path), "--resample", "questions", "--format", "json", cwd=tmp_path)
    assert mine.returncode == 0, mine.stderr
    assert "not upstream's resampling of rows" in mine.stderr


# -- the benchmark -----------------------------------------------------------------------------------------


def test_by_name_russian_and_english(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ru = load_benchmark("arena-hard-local")
    assert (ru.name, len(ru.questions), ru.baseline, ru.judge_protocol) == (
        "arena-hard-local",
        500,
        BASELINE,
        "arena-hard-local",
    )
    assert ru.shipped_answers[BASELINE] == baseline_answers()
    reference = ru.info["reference_judge"]
    assert (reference["model"], reference["temperature"], reference["max_tokens"]) == (
        "Qwen2-72B-Instruct-AWQ",
        0.0,
        512,
    )
    en = load_benchmark("arena-hard-local", {"lang": "en"})
    english = rows(LOCAL / "question_en.jsonl")
    assert [q.prompt for q in en.questions] == [r["turns"][0]["content"] for r in english]
    assert [q.uid for q in en.questions] == [q.uid for q in ru.questions]
    assert en.shipped_answers == {} and en.baseline == BASELINE
    with pytest.raises(JuristError, match="has ru and en questions"):
        load_benchmark("arena-hard-local", {"lang": "de"})
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError) as caught:
        load_benchmark("arena-hard-local", {"lang": "en"})
    message = str(caught.value)
    assert "\n" not in message and "needs arena-hard-local/question_en.jsonl" in message


def test_a_run_by_name_sends_upstreams_judge_request(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    """The judge gets upstream's system prompt and filled template, temperature 0 and max_tokens 512 (its
    entry leaves them unset); the run scores as v0.1 does and names upstream's judge as the reference."""
    server = mock_server()
    unset = {"temperature": None, "max_tokens": None}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": unset})
    out = tmp_path / "run"
    result = run_quiet(
        bench="arena-hard-local", models_file=models, models=["strong"], judges=["judge-good"], out=out,
        limit=4, n_bootstrap=0,
    )  # fmt: skip
    assert result.exit_code == 0
    (row,) = [r for r in result.leaderboard if r["model"] == "strong"]
    assert row["score"] == 100.0 and row["n"] == 4
    upstream = config()
    questions = {r["question_id"]: r["turns"][0]["content"] for r in rows(LOCAL / "question_ru.jsonl")}
    answers = baseline_answers()
    strong = {r["uid"]: r["answer"] for r in read_jsonl(out / "answers" / "strong.jsonl")}
    bodies = [b for b in server.stats.bodies if b["model"] == "judge-good"]
    assert len(bodies) == 8 and {(b["temperature"], b["max_tokens"]) for b in bodies} == {(0.0, 512)}
    sent = {b["messages"][1]["content"] for b in bodies}
    for uid in strong:
        fill = upstream["prompt_template"][0].format
        assert fill(question_1=questions[uid], answer_1=answers[uid], answer_2=strong[uid]) in sent
        assert fill(question_1=questions[uid], answer_1=strong[uid], answer_2=answers[uid]) in sent
    assert {b["messages"][0]["content"] for b in bodies} == {upstream["system_prompt"]}
    judgments = read_jsonl(out / "judgments" / "judge-good" / "strong.jsonl")
    assert {(j["protocol"], j.get("invalid_drops")) for j in judgments} == {("arena-hard-local", "game")}
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["judge_preset"]["reference"]["model"] == "Qwen2-72B-Instruct-AWQ"


def test_judge_protocol_names_it_anywhere(tmp_path: Path) -> None:
    """``--judge-protocol arena-hard-local`` is a protocol like the others (and a --judge-prompt keeps its
    reading)."""
    from jurist.config import ModelSpec

    spec = ModelSpec.model_validate({"model": "j", "endpoints": [{"api_base": "http://127.0.0.1:9/v1"}]})
    chosen = protocol_for("arena-hard-local", spec)
    assert chosen.name == "arena-hard-local" and chosen.read("[[b>a]]", None, ())[0] == "B>A"
    prompt = tmp_path / "p.txt"
    prompt.write_text("[system]\nJudge.\n[user]\n{question}\n{answer_a}\n{answer_b}\n")
    custom = protocol_for("arena-hard-local", spec, prompt)
    assert custom.name == "arena-hard-local+custom" and custom.read("[A>B] [B>A]", None, ())[0] is None
    assert chosen.fingerprint(spec) != protocol_for("simple", spec).fingerprint(spec)


def test_an_arena_hard_local_judgment_file_imports_with_its_bracketed_scores(tmp_path: Path) -> None:
    """Arena-Hard-Local stores ``score`` as matched (``[A>B]``): imported as its show_result reads it, and a
    2024-format question (``question_id``) keeps its valid game when the other has no verdict (v0.1)."""
    from jurist.interop.arena_hard import arena_judgment

    record = {
        "question_id": "q1", "model": "m", "judge": "j",
        "games": [{"judgment": "[[A>>B]]", "score": "[A>>B]"}, {"judgment": "no verdict", "score": None}],
    }  # fmt: skip
    judgment, statuses = arena_judgment(
        record, tmp_path / "m.jsonl", 1, judge="j", bench="arena-hard-v0.1", categories={}
    )
    assert statuses == ["ok", "null"] and judgment["games"][0]["label"] == "A>>B"
    (battle,) = battles_from_judgment(judgment)
    assert (battle["model_b"], battle["winner"], battle["weight"]) == ("m", "model_a", 3)


def test_with_internet_the_files_come_from_upstreams_commit_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No data dir: the config, questions and baseline answers are downloaded from upstream's layout at the
    pinned commit (a raw-file server on 127.0.0.1 here), checked and cached; the next load sends nothing."""
    from jurist.benchmarks import arena_hard_local
    from jurist.judging import upstream_local

    root = tmp_path / "served" / upstream_local.COMMIT
    files = {
        "config/judge_config.yaml": LOCAL / "judge_config.yaml",
        "data/arena-hard-v0.1/question.jsonl": LOCAL / "question_ru.jsonl",
        f"data/arena-hard-v0.1/model_answer/{BASELINE}.jsonl": LOCAL / "model_answer" / f"{BASELINE}.jsonl",
    }
    for relative, source in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source, root / relative)
    hits: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            super().do_GET()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root.parent))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setattr(urllib.request, "urlopen", URLOPEN)
        monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path / "empty"))
        monkeypatch.setattr(upstream_local, "RAW_BASE", base)
        monkeypatch.setattr(arena_hard_local, "_RAW", f"{base}/{upstream_local.COMMIT}")
        bench = load_benchmark("arena-hard-local")
        assert sorted(hits) == sorted(f"/{upstream_local.COMMIT}/{relative}" for relative in files)
        assert len(bench.questions) == 500 and bench.shipped_answers[BASELINE] == baseline_answers()
        assert load_local_settings().max_tokens == 512
        load_benchmark("arena-hard-local")
        assert len(hits) == 3  # the cache answers the second time
    finally:
        server.shutdown()
        server.server_close()
