"""The run browser in a real headless Chromium (Debian's chromium, driven by Playwright's Python API).

Pages are written from real runs (tests/view_fixtures.py), opened from disk or from ``--serve``, filtered,
searched and read; every test also checks that no dialog opened, no script of the data ran, the CSP was
never violated and no request left 127.0.0.1. Screenshots go to each test's tmp_path (and to
``$JURIST_VIEW_SHOTS`` when set). Skipped, with the reason, where Chromium or Playwright is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import view_fixtures as vf
from jurist.store.jsonl import read_jsonl
from jurist.view import codes
from jurist.view.index import ViewData
from jurist.view.page import write_page
from jurist.view.server import ViewServer

MISSING = vf.chromium_missing()
needs_browser = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
SIGN = {1: 1, 2: 1, 3: 0, 4: -1, 5: -1}
COLLECT = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def outcome(code: int) -> str:
    """The page's one-word verdict of a cell (data.js ``outcome``), for the expected counts."""
    if not codes.PAIR_BASE <= code < codes.POINT_PASS:
        return ""
    grades = divmod(code - codes.PAIR_BASE, 7)
    if 6 in grades:
        return "invalid"
    signs = [SIGN[g] for g in grades if g]
    if len(signs) == 2 and signs[0] * signs[1] < 0:
        return "split"
    total = sum(signs)
    return "" if not signs else "win" if total > 0 else "loss" if total < 0 else "tie"


def swap_disagrees(code: int) -> bool:
    """Whether the two swapped games of a cell point different ways (data.js ``swapDisagrees``)."""
    grades = divmod(code - codes.PAIR_BASE, 7)
    return all(0 < g < 6 for g in grades) and SIGN[grades[0]] != SIGN[grades[1]]


def judgment_codes(run: Path, judge: str, model: str) -> dict[str, int]:
    records = read_jsonl(run / "judgments" / judge / f"{model}.jsonl")
    return {r["uid"]: codes.pairwise_code(r, model) for r in records if r["kind"] == "pairwise"}


def test_the_browser_is_there_where_it_is_required() -> None:
    """With chromium installed (./dev test installs it as root) JURIST_REQUIRE_BROWSER=1 is set: a browser
    that cannot run fails the suite instead of skipping."""
    if MISSING is not None and os.environ.get("JURIST_REQUIRE_BROWSER") != "1":
        pytest.skip(MISSING)
    assert MISSING is None, MISSING


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("view-browser")
    with vf.made_runs(work) as runs:
        made: dict[str, Any] = dict(runs)
        made["pair.html"] = write_page(ViewData([runs["pair"]]), work / "pair.html").path
        made["two.html"] = write_page(ViewData([runs["pair"], runs["pair2"]]), work / "two.html").path
        made["rules.html"] = write_page(ViewData([runs["rules"]]), work / "rules.html").path
        made["view"] = ViewData([runs["pair"], runs["pair2"]])  # for the served page
        yield made


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # root needs it
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(vf.CHROMIUM), args=args)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page and everything it did that a safe page must not do."""

    page: Any
    shots: Path
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str, *, full: bool = False) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full)
        extra = os.environ.get("JURIST_VIEW_SHOTS")
        if extra:
            Path(extra).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(extra) / path.name)
        return path

    def wait(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll ``expression`` (the page's CSP forbids the string evaluation wait_for_function uses)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.page.evaluate(expression)
            if value:
                return value
            time.sleep(0.01)
        raise AssertionError(f"timed out waiting for {expression}")

    def count(self) -> str:
        self.wait(
            "document.getElementById('count') && / of /.test(document.getElementById('count').textContent)"
        )
        return str(self.page.inner_text("#count"))

    def assert_clean(self) -> None:
        assert self.dialogs == [], self.dialogs
        assert self.errors == [], self.errors
        assert self.page.evaluate("window.__pwned === undefined")
        assert self.page.evaluate("window.__violations") == []
        off = [u for u in self.requests if not u.startswith(("file://", "http://127.0.0.1:", "data:"))]
        assert off == [], off


@pytest.fixture
def watched(browser: Any, tmp_path: Path) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    state = Watched(page, tmp_path)
    page.add_init_script(COLLECT)

    def on_dialog(dialog: Any) -> None:
        state.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda request: state.requests.append(request.url))
    page.on("pageerror", lambda error: state.errors.append(str(error)))
    yield state
    context.close()


def open_page(w: Watched, path: Path | str, fragment: str = "") -> None:
    url = path if isinstance(path, str) else path.as_uri()
    w.page.goto(url + fragment)
    w.page.locator(".row, .question, .summary").first.wait_for(timeout=30000)


def pick(w: Watched, selector: str, value: str) -> None:
    w.page.select_option(selector, value)


@needs_browser
def test_list_filters_search_and_question(pages: dict[str, Any], watched: Watched) -> None:
    w, pair = watched, pages["pair"]
    open_page(w, pages["pair.html"])
    assert w.count() == "10 of 10 rows"
    assert w.page.locator(".row").count() == 10
    w.shot("list")
    pick(w, ".filters .cat-pick select", "2")  # math
    assert w.count() == "4 of 10 rows"
    pick(w, ".filters .cat-pick select", "-1")
    pick(w, ".filters .status-pick select", "failed")
    assert w.count() == "1 of 10 rows" and "FAILME" in w.page.inner_text(".row")
    pick(w, ".filters .col-A .judge-pick select", "3")  # judge-broken: no verdict, ever
    pick(w, ".filters .status-pick select", "invalid")
    assert w.count() == "9 of 10 rows"
    pick(w, ".filters .status-pick select", "")
    pick(w, ".filters .col-A .judge-pick select", "1")  # judge-p70: right 70% of the time, per game
    p70 = judgment_codes(pair, "judge-p70", "strong")
    swapped = sum(swap_disagrees(code) for code in p70.values())
    w.page.check("#f-swap")
    assert w.count() == f"{swapped} of 10 rows"
    w.page.uncheck("#f-swap")
    by_judge = [judgment_codes(pair, judge, "strong") for judge in vf.JUDGES]
    disagree = 0
    for uid in p70:
        seen = {outcome(j[uid]) for j in by_judge} - {"", "invalid"}
        disagree += len(seen) > 1
    w.page.check("#f-judges")
    assert w.count() == f"{disagree} of 10 rows"
    w.page.uncheck("#f-judges")
    pick(w, ".filters .col-A .judge-pick select", "0")  # judge-good; B is mixed under judge-good
    mixed = judgment_codes(pair, "judge-good", "mixed")
    differ = sum(outcome(c) != "win" for c in mixed.values())  # strong always wins
    w.page.check("#f-differ")
    assert w.count() == f"{differ} of 10 rows"
    w.page.uncheck("#f-differ")
    pick(w, ".filters .verdict-pick select", "g1")  # a game where strong is much better
    assert w.count() == "9 of 10 rows"
    pick(w, ".filters .verdict-pick select", "")
    w.page.fill("#search", "LIGHTHOUSE keeper")
    w.page.press("#search", "Enter")
    assert w.count() == "1 of 10 rows" and "lighthouse" in w.page.inner_text(".row")
    w.page.fill("#search", "final verdict is")  # only judges write this
    w.page.press("#search", "Enter")
    assert w.count() == "9 of 10 rows"
    w.page.fill("#search", "")
    w.page.press("#search", "Enter")
    assert w.count() == "10 of 10 rows"
    w.page.click(".row >> nth=0")
    w.page.locator(".question").wait_for()
    assert "k largest numbers" in w.page.inner_text(".prompt")
    strong = w.page.locator(".pane-A .answer")
    assert strong.locator("h4", has_text="Plan").count() == 1 and strong.locator("table").count() == 1
    assert (
        strong.locator("pre .tok-k", has_text="def").count() == 1 and strong.locator("ol > li").count() == 3
    )
    assert strong.locator("ol > li ul > li", has_text="ties keep order").count() == 1
    assert w.page.locator(".pane-A .game").count() == 8 and w.page.locator(".pane-B .game").count() == 8
    assert "tokens" in w.page.inner_text(".pane-A .usage >> nth=0")
    expected = [outcome(j["v00"]) for j in by_judge]
    counted = [o for o in expected if o not in ("", "invalid")]
    majority = max(counted, key=counted.count)
    assert w.page.locator(".judges-compare tr.disagree").count() == sum(o != majority for o in counted)
    assert "same verdict" in w.page.inner_text(".compare-strip") or "differ" in w.page.inner_text(
        ".compare-strip"
    )
    w.shot("question", full=True)
    w.page.click("#next")
    w.wait("location.hash === '#/q/1'")
    w.page.locator(".qtitle", has_text="v01").wait_for()
    long = w.page.locator(".pane-A .collapsible").first  # the long answer starts collapsed
    assert long.locator(".md.clipped").count() == 1
    long.locator(".toggle").click()
    assert long.locator(".md.clipped").count() == 0 and "Point 59" in long.inner_text()
    w.page.goto(pages["pair.html"].as_uri() + "#/q/6")
    w.page.locator(".question").wait_for()
    pick(w, ".qcolumns .col-A .model-pick select", "1")  # mixed: its judge-good file holds new kinds
    w.page.locator(".pane-A .kind-essay-grade").wait_for()
    assert "mysterious new kind" in w.page.inner_text(".pane-A .kind-essay-grade")
    rubric = w.page.locator(".pane-A .kind-point")
    assert "states the steps" in rubric.inner_text() and rubric.locator("tr.failing").count() == 1
    w.page.click("text=Summary")
    w.page.locator(".summary").wait_for()
    assert w.page.locator("svg.ci").count() >= 16 and "judge-p70" in w.page.inner_text(".summary")
    assert "By category" in w.page.inner_text(".summary")
    w.shot("summary", full=True)
    w.assert_clean()


@needs_browser
def test_hostile_answers_and_judge_text_render_as_text(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, pages["pair.html"], "#/q/5")
    pick(w, ".qcolumns .col-A .model-pick select", "2")  # xss
    w.page.locator(".pane-A .answer").wait_for()
    for button in w.page.locator(".toggle").all():
        button.click()
    for details in w.page.locator("details").all():
        details.evaluate("(node) => { node.open = true; }")
    text = w.page.inner_text("#main")
    assert "<script>window.__pwned = 'script'" in w.page.inner_text(".prompt")
    for shown in ("<img src=x onerror=", "<iframe src=", "<svg onload=", "</script><script>window.__pwned"):
        assert shown in w.page.inner_text(".pane-A .answer"), shown
    assert (
        "My final verdict is" in text and text.count("<script>window.__pwned") >= 3
    )  # judge-quoter quoted it
    elements = "#main script, #main img, #main iframe, #main object, #main embed, #main svg foreignObject"
    assert w.page.locator(elements).count() == 0
    assert w.page.evaluate(
        "[...document.querySelectorAll('#main *')]"
        ".every(e => [...e.attributes].every(a => !a.name.startsWith('on')))"
    )
    assert w.page.evaluate(
        "[...document.querySelectorAll('#main a[href]')].every(a => a.getAttribute('href').startsWith('#'))"
    )
    assert w.page.evaluate("[...document.scripts].filter(s => s.type !== 'application/json').length") == 1
    w.page.click(".pane-A .md-link >> nth=0")  # a javascript: link in the answer: inert
    w.page.wait_for_timeout(200)
    assert w.page.url.endswith("#/q/5")
    w.shot("hostile", full=True)
    w.assert_clean()


@needs_browser
def test_rule_checks_per_instruction(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, pages["rules.html"])
    assert w.count() == "12 of 12 rows"  # six questions, two samples each
    w.page.click(".row >> nth=0")
    w.page.click(".qtitle .sample-link")  # to the question's other sample
    w.page.locator(".qtitle", has_text="0 #1").wait_for()
    checks = w.page.locator(".pane-A .kind-point table")
    checks.wait_for()
    body = checks.inner_text()
    assert "punctuation:no_comma" in body and "change_case:english_lowercase" in body
    point = next(p for p in read_jsonl(pages["rules"] / "points" / "plain.jsonl") if p["uid"] == "0")
    marks = ["\u2713" if check["strict"] else "\u2717" for check in point["detail"]["instructions"]]
    cells = checks.locator("tbody tr").all()
    assert [row.locator("td >> nth=1").inner_text() for row in cells] == marks  # the strict column
    w.page.click("text=Summary")
    summary = w.page.locator(".summary")
    summary.wait_for()
    assert "Per instruction" in summary.inner_text() and summary.locator("svg.ci").count() >= 8
    w.shot("rules-summary", full=True)
    w.assert_clean()


@needs_browser
def test_two_runs_show_the_verdicts_that_changed(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    open_page(w, pages["two.html"])
    pick(w, ".filters .col-A .model-pick select", "1")  # run pair: mixed
    pick(w, ".filters .col-B .run-pick select", "1")
    w.page.locator(".filters .col-B .model-pick select").wait_for()
    pick(w, ".filters .col-B .model-pick select", str(pages["view"].models.index("better")))
    w.page.check("#f-differ")
    before = judgment_codes(pages["pair"], "judge-good", "mixed")
    after = judgment_codes(pages["pair2"], "judge-good", "better")
    changed = [u for u in set(before) | set(after) if outcome(before.get(u, 0)) != outcome(after.get(u, 0))]
    assert w.count() == f"{len(changed)} of 10 rows" and changed
    w.page.click(".row >> nth=0")
    w.page.locator(".pane-B .answer").wait_for()
    assert "verdicts differ" in w.page.inner_text(".compare-strip")
    assert "pair2" in w.page.inner_text(".pane-B .pane-head") and "[better]" in w.page.inner_text(
        ".pane-B .answer"
    )
    w.shot("two-runs", full=True)
    w.assert_clean()


@needs_browser
def test_served_page_loads_rows_and_searches_on_demand(pages: dict[str, Any], watched: Watched) -> None:
    w = watched
    with vf.toy_registered():
        server = ViewServer(pages["view"], categories=False)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        open_page(w, server.url)
        assert w.count() == "10 of 10 rows"
        w.page.fill("#search", "lighthouse")
        w.page.press("#search", "Enter")
        assert w.count() == "1 of 10 rows"
        w.page.click(".row >> nth=0")
        w.page.locator(".pane-A .answer").wait_for()
        assert "lighthouse keeper" in w.page.inner_text(".prompt")
        w.page.goto(server.url + "#/q/5")
        pick(w, ".qcolumns .col-A .model-pick select", "2")
        w.page.locator(".pane-A .answer", has_text="onerror").wait_for()
        assert any("/api/row/" in url for url in w.requests) and any(
            "/api/search" in url for url in w.requests
        )
        w.assert_clean()
    finally:
        server.stop()
        thread.join(timeout=10)
        server.close()


@pytest.mark.slow
@needs_browser
def test_ten_thousand_questions_by_five_models(tmp_path: Path, watched: Watched) -> None:
    """The scale figure: a 10,000-question x 5-model run, timed in the browser (reported, not asserted)."""
    run = vf.synthetic_run(tmp_path / "big", questions=10_000, models=5)
    started = time.perf_counter()
    written = write_page(ViewData([run]), tmp_path / "big.html")
    figures = vf.measure(watched.page, written.path.as_uri(), wait=watched.wait)
    figures |= {"page_mb": round(written.size / 1e6, 1), "write_s": round(time.perf_counter() - started, 1)}
    print("\nview scale figures:", json.dumps(figures))
    (tmp_path / "figures.json").write_text(json.dumps(figures, indent=2))
    assert figures["rows"] == 10_000 and figures["search_hits"] == 1 and figures["category_rows"] == 2000
    assert watched.page.locator(".row").count() < 100  # only the rows on screen are in the DOM
    watched.shot("scale")
    watched.assert_clean()
