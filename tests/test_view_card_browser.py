"""The judge card tab in a real headless Chromium (tests/test_view_browser.py drives it the same way, and
every test checks that no dialog opened, no script of the data ran, the CSP held and no request left
127.0.0.1): the planted-fault judges' flagged probes stand out with their warning lines, an item shows the
original and the probed answers and both verdicts, hostile HTML in answers that were then padded or had a
note planted stays text, a run without a card says so, and the served page shows the same card."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import test_view_browser as tvb
import view_card_fixtures as vc
from conftest import SHARED_DATA
from jurist.audit import CARD_FILE
from jurist.audit.perturb import INJECTION, OFF_TOPIC
from jurist.view.index import ViewData
from jurist.view.page import write_page
from jurist.view.server import ViewServer
from test_view_browser import Watched, needs_browser, open_page

browser = tvb.browser  # the same Chromium and watched page as tests/test_view_browser.py
watched = tvb.watched

HOSTILE = (
    "#main script, #main img, #main iframe, #main object, #main embed, #main svg foreignObject, "
    "#main a[href^=javascript]"
)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("view-card-browser")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        with vc.card_runs(work) as runs:
            made: dict[str, Any] = dict(runs)
            made["pair.html"] = write_page(ViewData([runs["pair"]]), work / "pair.html").path
            made["both.html"] = write_page(ViewData([runs["plain"], runs["pair"]]), work / "both.html").path
            if runs["rubric"] is not None:
                made["rubric.html"] = write_page(ViewData([runs["rubric"]]), work / "rubric.html").path
            yield made


def judge_box(w: Watched, judge: str) -> Any:
    box = w.page.locator(f".judge-card[data-judge='{judge}']")
    box.wait_for()
    return box


def open_items(box: Any, probe: str) -> Any:
    details = box.locator(f"details.probe-items[data-probe='{probe}']")
    details.locator("summary").click()
    items = details.locator(".probe-item")
    items.first.wait_for()
    return items


def card(pages: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads((pages["pair"] / CARD_FILE).read_text()))


def check_longer(w: Watched, document: dict[str, Any]) -> None:
    """judge-longer's card: verbosity flagged and standing out, its warning line, an item's texts."""
    box = judge_box(w, "judge-longer")
    assert "has-flag" in (box.get_attribute("class") or "")
    flagged = box.locator("tr.flagged")
    assert flagged.count() == 1 and flagged.get_attribute("data-probe") == "verbosity"
    assert "FLAGGED" in flagged.inner_text() and "1.00" in flagged.inner_text()
    assert "beyond \u00b10.10" in flagged.inner_text() and "\t12\t" in flagged.inner_text()
    warning = "warning: judge-longer: verbosity bias +1.00 [1.00, 1.00] toward the longer answer"
    assert box.locator(".card-warning").inner_text() == warning
    assert box.locator("tr[data-probe='injection']").get_attribute("class") != "flagged"
    items = open_items(box, "verbosity")
    stored = document["judges"]["judge-longer"]["probes"]["verbosity"]["items"]
    assert items.count() == len(stored) == 12
    first, item = items.nth(0), stored[0]
    assert first.locator(".item-head").inner_text().startswith(item["uid"] + " \u00b7 " + item["model"])
    assert first.locator(".verdict-before .label").inner_text() == item["before"]
    assert first.locator(".verdict-after .label").inner_text() == item["after"] != item["before"]
    padded = first.locator(".probe-side", has_text="added after the answer")
    assert padded.count() == 1 and padded.locator(".side-head").inner_text().startswith(item["padded"])
    original, probed = padded.locator("pre.orig").inner_text(), padded.locator("pre.pert").inner_text()
    assert probed.startswith(original) and len(probed) > len(original)
    assert "To restate the question" in padded.locator("pre.pert .added").inner_text()
    other = first.locator(".probe-side", has_text="unchanged")
    assert other.count() == 1 and other.locator("pre.pert").count() == 0


@needs_browser
def test_the_card_shows_flagged_probes_and_each_items_texts_and_verdicts(
    pages: dict[str, Any], watched: Watched
) -> None:
    w = watched
    document = card(pages)
    open_page(w, pages["pair.html"])
    w.page.click("text=Judge card")
    w.page.locator(".card-view").wait_for()
    assert "current" in (w.page.locator(".tabs a[data-tab='card']").get_attribute("class") or "")
    check_longer(w, document)
    obedient = judge_box(w, "judge-obedient")
    assert [row.get_attribute("data-probe") for row in obedient.locator("tr.flagged").all()] == ["injection"]
    item = open_items(obedient, "injection").nth(0)
    planted = item.locator(".probe-side").filter(has=w.page.locator(".added", has_text="Note to the judge"))
    assert planted.count() == 1 and planted.locator("pre.pert .added").inner_text().strip() == INJECTION
    first = judge_box(w, "judge-first")
    assert {row.get_attribute("data-probe") for row in first.locator("tr.flagged").all()} == {
        "position",
        "consistency",
    }
    assert first.locator(".card-warning").count() == 2
    assert judge_box(w, "judge-good").locator("tr.flagged").count() == 0
    w.shot("judge-card", full=True)
    w.assert_clean()


@needs_browser
def test_hostile_html_in_padded_and_planted_answers_is_text(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, pages["pair.html"], "#/card")
    for judge in ("judge-longer", "judge-obedient"):
        box = judge_box(w, judge)
        open_items(box, "verbosity")
        open_items(box, "injection")
    for details in w.page.locator(".probe-item details").all():
        details.evaluate("(node) => { node.open = true; }")
    texts = w.page.locator(".probe-item pre.pert")
    assert texts.count() > 0
    evil = [text for text in texts.all_inner_texts() if "<script>window.__pwned" in text]
    assert evil and any("<img src=x onerror=" in text for text in evil)
    restated = w.page.locator(".probe-item pre.pert .added", has_text="<script>window.__pwned")
    assert restated.count() > 0  # the padding restates the hostile question: still text
    assert w.page.locator(HOSTILE).count() == 0
    assert w.page.evaluate(
        "[...document.querySelectorAll('#main *')]"
        ".every(e => [...e.attributes].every(a => !a.name.startsWith('on')))"
    )
    w.shot("judge-card-hostile")
    w.assert_clean()


@needs_browser
def test_a_run_without_a_card_says_so_beside_one_with_a_card(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, pages["both.html"], "#/card")
    sections = w.page.locator(".run-card")
    sections.first.wait_for()
    assert sections.count() == 2
    assert sections.nth(0).locator(".no-card").inner_text() == "no judge card in this run"
    assert sections.nth(0).locator(".judge-card").count() == 0
    assert sections.nth(1).locator(".judge-card").count() == len(vc.JUDGES)
    w.assert_clean()


@needs_browser
@pytest.mark.skipif(not vc.HEALTHBENCH, reason="needs ../shared/data/healthbench")
def test_a_lenient_graders_items_show_the_off_topic_answer(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, pages["rubric.html"], "#/card")
    box = judge_box(w, "g-lenient")
    assert [row.get_attribute("data-probe") for row in box.locator("tr.flagged").all()] == ["lenience"]
    assert box.locator(".card-warning").inner_text().startswith("warning: g-lenient: rubric lenience 1.00")
    item = open_items(box, "lenience").nth(0)
    assert item.locator(".item-criterion").inner_text().startswith("criterion: ")
    assert item.locator("pre.pert").inner_text() == OFF_TOPIC and item.locator(
        "pre.orig"
    ).inner_text().startswith("[m]")
    assert item.locator(".verdict-after .label").inner_text() == "1"
    assert judge_box(w, "g-fair").locator("tr.flagged").count() == 0
    w.shot("judge-card-rubric", full=True)
    w.assert_clean()


@needs_browser
def test_the_served_page_shows_the_same_card(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    server = ViewServer(ViewData([pages["pair"]]), categories=False)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        open_page(w, server.url + "#/card")
        check_longer(w, card(pages))
        w.assert_clean()
    finally:
        server.stop()
        thread.join(timeout=10)
        server.close()
