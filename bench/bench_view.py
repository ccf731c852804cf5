"""Time the run browser on a synthetic 10,000-question x 5-model run (prints figures, asserts nothing).

Steps: write the run directly (tests/view_fixtures.py ``synthetic_run``: ~150-word answers, two games per
judgment, battles, and jurist's own leaderboard and ratings) -> write the page as ``jurist view`` does ->
open it in headless Chromium from disk and time first paint, the list shown, the whole file read, the
search text built, a category filter and a one-hit full-text search -> the same against ``--serve``.
In-page times come from ``performance.now()``; wall times include Playwright's round trips.

Run: ``.venv/bin/python bench/bench_view.py [--questions N] [--models M] [--work DIR]`` (needs Chromium
at /usr/bin/chromium or $JURIST_CHROMIUM, and ``pip install playwright``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import view_fixtures as vf  # noqa: E402
from jurist.view.index import ViewData  # noqa: E402
from jurist.view.page import write_page  # noqa: E402
from jurist.view.server import ViewServer  # noqa: E402


def _browse(url: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(vf.CHROMIUM), args=args)
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()

        def wait(expression: str) -> Any:
            end = time.monotonic() + 300
            while not (value := page.evaluate(expression)):
                if time.monotonic() > end:
                    raise TimeoutError(expression)
                time.sleep(0.005)
            return value

        try:
            return vf.measure(page, url, wait=wait)
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument(
        "--work", type=Path, default=None, help="folder for the run (default: a temporary one)"
    )
    args = parser.parse_args()
    missing = vf.chromium_missing()
    if missing:
        sys.exit(f"bench_view: {missing}")
    work = args.work or Path(tempfile.mkdtemp(prefix="jurist-bench-view-"))
    started = time.perf_counter()
    run = vf.synthetic_run(work / "run", questions=args.questions, models=args.models)
    report: dict[str, Any] = {"questions": args.questions, "models": args.models}
    report["synthetic_run_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    view = ViewData([run])
    report["index_s"] = round(time.perf_counter() - started, 1)
    written = write_page(view, work / "view.html")
    report |= {"page_write_s": round(written.seconds, 1), "page_mb": round(written.size / 1e6, 1)}
    report["static"] = _browse(written.path.as_uri())
    started = time.perf_counter()
    server = ViewServer(view)
    report["serve_start_s"] = round(time.perf_counter() - started, 1)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        server.search.wait()
        report["serve_search_text_s"] = round(time.perf_counter() - started, 1)
        report["serve"] = _browse(server.url)
    finally:
        server.stop()
        thread.join(10)
        server.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
