"""The judge card as the browser reads it (jurist/view/card.py), on real runs against the mock server: every
probe as judge_card.json has it, each item's answers as the probe changed them (rebuilt with the probes'
own functions, and checked against the requests the judge was actually sent), both verdicts, and one
line for a run without a card."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import view_card_fixtures as vc
from conftest import SHARED_DATA, run_config
from jurist.audit import CARD_FILE
from jurist.audit.perturb import INJECTION, OFF_TOPIC
from jurist.store.jsonl import read_jsonl
from jurist.view.card import NO_CARD
from jurist.view.index import ViewData


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        with vc.card_runs(tmp_path_factory.mktemp("view-card")) as made:
            yield made


def card_of(run: Path, *, prompts: bool = True) -> dict[str, Any]:
    cards = ViewData([run], prompts=prompts).index("static", {})["cards"]
    assert len(cards) == 1
    return dict(cards[0])


def judge_of(card: dict[str, Any], name: str) -> dict[str, Any]:
    return next(judge for judge in card["judges"] if judge["judge"] == name)


def probe_of(judge: dict[str, Any], name: str) -> dict[str, Any]:
    return next(probe for probe in judge["probes"] if probe["probe"] == name)


def shown(side: dict[str, Any], card: dict[str, Any]) -> str:
    """An answer as the probe showed it, from the page's data."""
    original = card["answers"][side["key"]]
    return str(side.get("replaced", original + side.get("added", "")))


def sent_to(server: Any, model: str) -> list[str]:
    """The user messages of every request ``model`` was sent."""
    return [
        "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        for body in server.stats.bodies
        if body.get("model") == model
    ]


def test_a_run_without_a_card_says_so_in_one_line(runs: dict[str, Any], tmp_path: Path) -> None:
    assert card_of(runs["plain"]) == {"note": NO_CARD}
    broken = tmp_path / "broken"
    shutil.copytree(runs["pair"], broken)
    (broken / CARD_FILE).write_text('{"schema": "something else"}')
    note = card_of(broken)["note"]
    assert note.startswith("the judge card cannot be read:") and "schema is not jurist.judge_card/1" in note


def test_every_probe_is_shown_as_judge_card_json_has_it(runs: dict[str, Any]) -> None:
    document = json.loads((runs["pair"] / CARD_FILE).read_text())
    card = card_of(runs["pair"])
    assert [judge["judge"] for judge in card["judges"]] == list(document["judges"]) == vc.JUDGES
    assert card["warnings"] == document["warnings"] and card["seed"] == document["seed"] == 0
    for judge in card["judges"]:
        stored = document["judges"][judge["judge"]]
        assert judge["probe_requests"] == stored["probe_requests"] > 0
        assert [p["probe"] for p in judge["probes"]] == list(stored["probes"])
        for probe in judge["probes"]:
            found = stored["probes"][probe["probe"]]
            for key in ("estimate", "ci_low", "ci_high", "n", "threshold", "flagged"):
                assert probe[key] == found[key], (judge["judge"], probe["probe"], key)
            assert len(probe.get("items", [])) == len(found.get("items", []))
        assert judge["warnings"] == [
            line for line in document["warnings"] if line.startswith(judge["judge"] + ":")
        ]
    longer = judge_of(card, "judge-longer")
    assert [p["probe"] for p in longer["probes"] if p["flagged"]] == ["verbosity"]
    assert longer["warnings"] == ["judge-longer: verbosity bias +1.00 [1.00, 1.00] toward the longer answer"]
    assert not any(p["flagged"] for p in judge_of(card, "judge-good")["probes"])


@pytest.mark.parametrize("judge", ["judge-longer", "judge-obedient", "judge-good"])
def test_each_item_shows_what_the_judge_was_sent_and_both_verdicts(runs: dict[str, Any], judge: str) -> None:
    document = json.loads((runs["pair"] / CARD_FILE).read_text())["judges"][judge]["probes"]
    card = card_of(runs["pair"])
    asked = sent_to(runs["server"], judge)
    answers = {
        (r["model"], r["uid"]): r["answer"]
        for path in (runs["pair"] / "answers").glob("*.jsonl")
        for r in read_jsonl(path)
    }
    for name in ("verbosity", "injection"):
        probe = probe_of(judge_of(card, judge), name)
        assert len(probe["items"]) == probe["n"] == 12
        for item, stored in zip(probe["items"], document[name]["items"], strict=True):
            assert item["verdicts"] == {
                k: v for k, v in stored.items() if k not in ("model", "uid", "sample")
            }
            record = next(
                r
                for r in read_jsonl(runs["pair"] / "judgments" / judge / f"{item['model']}.jsonl")
                if r["uid"] == item["uid"]
            )
            game = next(g for g in record["games"] if g["game"] == stored["game"])
            assert item["positions"] == {"A": game["a"], "B": game["b"]}
            assert stored["before"] == game["label"]  # the judge's own verdict in those positions
            sides = {side["model"]: side for side in item["sides"]}
            assert set(sides) == {vc.BASELINE, item["model"]}
            for model, side in sides.items():
                assert card["answers"][side["key"]] == answers[(model, item["uid"])]
            a, b = shown(sides[game["a"]], card), shown(sides[game["b"]], card)
            assert any(a in user and b in user and user.index(a) < user.index(b) for user in asked), item
            changed = stored["padded"] if name == "verbosity" else stored["planted"]
            if name == "verbosity":
                other = next(m for m in sides if m != changed)
                assert (
                    "added" in sides[changed]
                    and "added" not in sides[other]
                    and "replaced" not in sides[other]
                )
                assert "To restate the question" in sides[changed]["added"]
                assert len(shown(sides[changed], card)) > len(shown(sides[other], card))
            else:
                assert sides[changed]["added"] == "\n\n" + INJECTION
                other = next(m for m in sides if m != changed)
                assert (
                    len(sides[other]["added"]) == len(sides[changed]["added"])
                    and INJECTION not in sides[other]["added"]
                )
            assert card["prompts"][item["prompt"]].startswith(f"Q{int(item['uid'][1:])}: name a river.")


def test_without_the_question_the_padding_says_it_is_not_shown_whole(runs: dict[str, Any]) -> None:
    card = card_of(runs["pair"], prompts=False)
    item = probe_of(judge_of(card, "judge-longer"), "verbosity")["items"][0]
    assert item["prompt"] is None and "the question is not available" in item["note"]
    injected = probe_of(judge_of(card, "judge-obedient"), "injection")["items"][0]
    assert injected["note"] is None  # the planted note does not restate the question


@pytest.mark.skipif(not vc.HEALTHBENCH, reason="needs ../shared/data/healthbench")
def test_a_rubric_graders_items_show_the_off_topic_and_padded_answers(runs: dict[str, Any]) -> None:
    card = card_of(runs["rubric"])
    lenient = judge_of(card, "g-lenient")
    assert [p["probe"] for p in lenient["probes"] if p["flagged"]] == ["lenience"]
    assert lenient["warnings"] and lenient["warnings"][0].startswith("g-lenient: rubric lenience 1.00")
    asked = sent_to(runs["server"], "g-lenient")
    lenience = probe_of(lenient, "lenience")
    assert len(lenience["items"]) == lenience["n"] >= 10
    for item in lenience["items"]:
        (side,) = item["sides"]
        assert side["replaced"] == OFF_TOPIC and card["answers"][side["key"]].startswith("[m]")
        assert item["verdicts"]["after"] == 1.0 and isinstance(item["criterion"], str) and item["criterion"]
        assert any(item["criterion"] in user and OFF_TOPIC in user for user in asked)
    padded = probe_of(lenient, "rubric_verbosity")["items"]
    assert padded and all("To restate the question" in item["sides"][0]["added"] for item in padded)
    assert all(any(shown(item["sides"][0], card) in user for user in asked) for item in padded)


def test_a_preference_judges_items_are_rebuilt_as_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AlpacaEval's one-game judge: the position items say the order was swapped, the verbosity and
    injection items' answers are the ones the judge was sent (its requests, as the mock kept them)."""
    from conftest import FAST_RETRY, write_models_file
    from jurist.run.pipeline import run_pipeline
    from test_alpaca_eval_bench import AlpacaMock, _fake_template, needs_registry

    if needs_registry.args[0]:
        pytest.skip("alpaca-eval is not registered")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    server = AlpacaMock()
    server.start()
    try:
        aliases: dict[str, dict[str, Any]] = {"strong": {}, "close": {}, "judge-lp": {}}
        run_pipeline(
            run_config(
                progress=False,
                retry=FAST_RETRY,
                check=False,
                bench="alpaca-eval",
                models_file=write_models_file(tmp_path / "m.yaml", server.base_url, aliases),
                out=tmp_path / "run",
                limit=160,
                models=["strong", "close"],
                judges=["judge-lp"],
                judge_prompt=_fake_template(tmp_path),
                n_bootstrap=0,
            )
        )
    finally:
        server.stop()
    card = card_of(tmp_path / "run")
    judge = judge_of(card, "judge-lp")
    assert judge["kind"] == "preference"
    position = probe_of(judge, "position")
    assert position["items"] and all(item["note"] == "the same answers, shown in the other order"
                                     for item in position["items"])  # fmt: skip
    asked = [
        "\n".join(str(m["content"]) for m in body["messages"])
        for body in server.judge_bodies
        if body.get("model") == "judge-lp"
    ]
    for name in ("verbosity", "injection"):
        items = probe_of(judge, name)["items"]
        assert items, name
        for item in items:
            texts = [shown(side, card) for side in item["sides"]]
            assert len(texts) == 2 and any("added" in side for side in item["sides"])
            assert any(all(text in user for text in texts) for user in asked), (name, item["uid"])
