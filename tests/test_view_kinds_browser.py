"""Every kind of result in a real headless Chromium (tests/test_view_browser.py drives it the same way):
a HealthBench answer's rubric items with its score and the grader's replies, hostile HTML in a criterion
and a grader reply shown as text, WritingBench's criteria, a rubric summary on its own scale, the prompts
of a run on a question file (and why they are missing once the file and its copy are gone), no "verdicts
differ" against a baseline, and B defaulting to a run of the same task."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

import test_view_browser as tvb
import view_kinds_fixtures as vk
from conftest import SHARED_DATA
from jurist.store.jsonl import read_jsonl
from jurist.view.index import ViewData
from jurist.view.page import write_page
from test_view_browser import Watched, needs_browser, open_page

browser = tvb.browser  # the same Chromium and watched page as tests/test_view_browser.py
watched = tvb.watched


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("view-kinds-browser")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        with vk.kinds_runs(work) as runs:
            made: dict[str, Any] = dict(runs)
            for name in ("healthbench", "writingbench", "custom"):
                made[f"{name}.html"] = write_page(ViewData([runs[name]]), work / f"{name}.html").path
            again = work / "custom-again"
            shutil.copytree(runs["custom"], again)
            three = ViewData([runs["custom"], runs["healthbench"], again])
            made["three.html"] = write_page(three, work / "three.html").path
            lost = work / "custom-lost"
            shutil.copytree(runs["custom"], lost)
            (lost / "questions.jsonl").unlink()
            info = json.loads((lost / "run.json").read_text())
            (lost / "run.json").write_text(json.dumps(info | {"bench_path": str(work / "moved-away.jsonl")}))
            made["lost.html"] = write_page(ViewData([lost]), work / "lost.html").path
            yield made


def rubric_rows(w: Watched) -> Any:
    table = w.page.locator(".pane-A .rubric-items")
    table.wait_for()
    return table.locator("tbody tr")


@needs_browser
def test_healthbench_items_say_which_the_model_missed(kinds: dict[str, Any], watched: Watched) -> None:
    w = watched
    records = {r["uid"]: r for r in read_jsonl(kinds["healthbench"] / "judgments" / "g" / "m.jsonl")}
    open_page(w, kinds["healthbench.html"], "#/q/3")
    uid = w.page.inner_text(".qtitle .uid")
    items = records[uid]["items"]
    rows = rubric_rows(w)
    assert rows.count() == len(items) and all(item["status"] == "scored" for item in items)
    missed = [i for i in items if (i["points"] > 0) != i["met"]]
    assert w.page.locator(".pane-A .rubric-items tr.failing").count() == len(missed) > 0
    met = sum(i["points"] for i in items if i["met"])
    possible = sum(i["points"] for i in items if i["points"] > 0)
    line = w.page.inner_text(".pane-A .rubric-score")
    assert f"({met} of {possible} possible points)" in line and f"{met / possible:.3f}".rstrip("0") in line
    first = rows.nth(0)
    assert items[0]["criterion"] in first.inner_text() and str(items[0]["points"]) in first.inner_text()
    assert ("\u2713 met" if items[0]["met"] else "\u2717 not met") in first.inner_text()
    assert f"rule says {items[0]['met']}" in first.locator(".grader-reply").inner_text()
    first.locator("details.reply summary").click()
    assert '"criteria_met"' in first.locator("details.reply").inner_text()  # the grader's whole reply
    w.page.check(".pane-A .rubric-filter input")
    assert w.page.locator(".pane-A .rubric-items tbody tr:visible").count() == len(missed)
    w.shot("rubric-items", full=True)
    open_page(w, kinds["healthbench.html"], "#/q/0")  # an item the grader never read: no score
    rubric_rows(w).first.wait_for()
    assert "answer not scored: 1 of" in w.page.inner_text(".pane-A .rubric-score")
    assert w.page.locator(".pane-A .rubric-items tr.unscored").count() == 1
    assert "re-ask 1" in w.page.inner_text(".pane-A .rubric-items tr.unscored")
    w.page.click("text=Summary")
    summary = w.page.locator(".summary")
    summary.wait_for()
    assert summary.locator(".board-title").inner_text().startswith("HealthBench score (simple-evals)")
    assert "winrate" not in summary.inner_text() and "By theme (0-1)" in summary.inner_text()
    board = json.loads((kinds["healthbench"] / "leaderboard.json").read_text())[0]
    assert f"{board['score']:.3f}" in summary.inner_text()
    from jurist.report import interval_text  # the terminal's format, in the page too

    shown = interval_text(board["score"], board["ci_low"], board["ci_high"], digits=3)
    assert shown.startswith("(-") and shown in summary.inner_text()
    w.shot("rubric-summary", full=True)
    w.assert_clean()


@needs_browser
def test_html_in_a_criterion_and_a_grader_reply_is_text(kinds: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, kinds["healthbench.html"], "#/q/2")
    rows = rubric_rows(w)
    for details in w.page.locator("details").all():
        details.evaluate("(node) => { node.open = true; }")
    hostile = rows.nth(0)
    assert "<script>window.__pwned = 'script'" in hostile.locator(".criterion").inner_text()
    assert "the criterion reads:" in hostile.locator(".grader-reply").inner_text()
    assert hostile.locator(".grader-reply").inner_text().count("<img src=x onerror=") >= 1
    elements = "#main script, #main img, #main iframe, #main object, #main embed, #main svg foreignObject"
    assert w.page.locator(elements).count() == 0
    assert w.page.evaluate(
        "[...document.querySelectorAll('#main *')]"
        ".every(e => [...e.attributes].every(a => !a.name.startsWith('on')))"
    )
    w.shot("rubric-hostile", full=True)
    w.assert_clean()


@needs_browser
def test_writingbench_criteria_with_their_scores(kinds: dict[str, Any], watched: Watched) -> None:
    w = watched
    records = {r["uid"]: r for r in read_jsonl(kinds["writingbench"] / "judgments" / "critic" / "m.jsonl")}
    open_page(w, kinds["writingbench.html"], "#/q/0")
    uid = w.page.inner_text(".qtitle .uid")
    items = records[uid]["items"]
    rows = rubric_rows(w)
    assert rows.count() == len(items)
    shown = [r.locator(".item-score").inner_text() for r in rows.all()]
    assert shown == [f"{i['score']} / 10" for i in items]
    assert items[0]["name"] in rows.nth(0).inner_text()
    assert rows.nth(0).locator(".criterion-text").count() == 1  # its checklist description
    mean = sum(i["score"] for i in items) / len(items)
    assert f"answer score {round(mean, 2):g} of 10" in w.page.inner_text(".pane-A .rubric-score")
    assert w.page.locator(".pane-A .rubric-items tr.failing").count() == sum(i["score"] < 6 for i in items)
    w.shot("writingbench-items", full=True)
    w.page.click("text=Summary")
    w.page.locator(".summary .board-title").wait_for()
    assert "mean criterion score (1-10)" in w.page.inner_text(".summary .board-title")
    assert "By domain (1-10)" in w.page.inner_text(".summary")
    w.assert_clean()


@needs_browser
def test_custom_question_prompts_and_a_baseline_as_b(kinds: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, kinds["custom.html"])
    assert w.count() == f"{len(vk.QUESTIONS)} of {len(vk.QUESTIONS)} rows"
    assert "CUSTOM-Q1" in w.page.inner_text(".row >> nth=0")  # the list's titles are the prompts
    assert w.page.input_value(".filters .col-B .model-pick select") != "-1"  # B: the baseline, mixed
    w.page.check("#f-differ")
    assert w.count() == f"0 of {len(vk.QUESTIONS)} rows"  # a baseline has no verdict of its own to differ
    w.page.uncheck("#f-differ")
    w.page.click(".row >> nth=0")
    w.page.locator(".pane-B .answer").wait_for()
    assert "CUSTOM-Q1: name three rivers" in w.page.inner_text(".prompt")
    strip = w.page.inner_text(".compare-strip")
    assert "verdicts differ" not in strip and "B is a baseline" in strip
    w.shot("custom-prompts", full=True)
    open_page(w, kinds["lost.html"], "#/q/0")
    w.page.locator(".prompt-missing").wait_for()
    note = w.page.inner_text(".prompt-missing")
    assert "moved-away.jsonl" in note and "moved or deleted" in note
    w.assert_clean()


@needs_browser
def test_b_defaults_to_a_run_of_the_same_task(kinds: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, kinds["three.html"])  # runs: custom, healthbench, a copy of custom
    assert w.page.input_value(".filters .col-B .run-pick select") == "2"
    w.page.click(".row >> nth=0")
    w.page.locator(".pane-B .answer").wait_for()
    assert "same verdict" in w.page.inner_text(".compare-strip")
    w.assert_clean()
