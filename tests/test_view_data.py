"""The run browser's data layer, page and server, without a browser: real run directories in, index,
payloads, HTML and HTTP answers out (tests/test_view_browser.py opens the same pages in Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import view_fixtures as vf
from jurist.commands.view import register
from jurist.store.jsonl import read_jsonl
from jurist.view import codes
from jurist.view.collect import RULES
from jurist.view.index import ViewData
from jurist.view.page import SCRIPTS, asset, inline_json, write_page
from jurist.view.server import ViewServer


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    with vf.made_runs(tmp_path_factory.mktemp("view-runs")) as made:
        yield made


@pytest.fixture
def toy() -> Iterator[None]:
    with vf.toy_registered():
        yield


def cell(view: ViewData, index: dict[str, Any], uid: str, model: str, judge: str, run: int = 0) -> int:
    row = next(k for k, r in enumerate(view.rows) if r.uid == uid)
    n_runs, n_models, n_judges = index["dims"]
    at = ((row * n_runs + run) * n_models + view.models.index(model)) * n_judges + view.judges.index(judge)
    return ord(index["cells"][at]) - codes.CODE_OFFSET


def test_index_codes_say_what_the_judgments_say(runs: dict[str, Path], toy: None) -> None:
    view = ViewData([runs["pair"]])
    index = view.index("static", {})
    assert [r.uid for r in view.rows] == [f"v{k:02d}" for k in range(10)]  # the benchmark's order
    assert view.models == ["strong", "mixed", "xss", "reference"] and view.judges == vf.JUDGES
    assert index["cats"] == ["code", "writing", "math"]
    assert index["rows"]["title"][3] == "Write a haiku about a lighthouse keeper at dawn."
    much_better = codes.PAIR_BASE + 7 * 1 + 1
    assert cell(view, index, "v00", "strong", "judge-good") == much_better
    assert cell(view, index, "v00", "strong", "judge-broken") == codes.PAIR_BASE + 7 * 6 + 6  # no verdicts
    assert cell(view, index, "v07", "strong", "judge-good") == codes.NONE  # its answer failed: nothing judged
    row7 = next(k for k, r in enumerate(view.rows) if r.uid == "v07")
    answers = index["ans"][row7 * 4 : row7 * 4 + 4]
    assert [ord(c) - codes.CODE_OFFSET for c in answers] == [codes.ANSWER_FAILED] * 3 + [codes.ANSWER_OK]
    # each game graded from the model's side, checked against the stored labels
    for record in read_jsonl(runs["pair"] / "judgments" / "judge-p70" / "mixed.jsonl"):
        grades = [codes.game_grade(game, "mixed") for game in record["games"]]
        assert (
            cell(view, index, record["uid"], "mixed", "judge-p70")
            == codes.PAIR_BASE + 7 * grades[0] + grades[1]
        )
    # a verdict stays the cell's code beside records of other kinds
    assert cell(view, index, "v06", "mixed", "judge-good") in range(codes.PAIR_BASE, codes.POINT_PASS)


def test_payload_keeps_every_record_raw_and_unknown_kinds_too(runs: dict[str, Path], toy: None) -> None:
    view = ViewData([runs["pair"]])
    assert view.payload(5)["prompt"].startswith("Summarise this page for a child: <script>")
    payload = view.payload(next(k for k, r in enumerate(view.rows) if r.uid == "v06"))
    (run,) = payload["runs"]
    assert set(run["answers"]) == {"strong", "mixed", "xss", "reference"}
    assert run["answers"]["xss"]["answer"].endswith(vf.EVIL)
    kinds = sorted(j["kind"] for j in run["judged"] if (j["judge"], j["model"]) == ("judge-good", "mixed"))
    assert kinds == ["essay-grade", "pairwise", "point"]
    essay = next(j["record"] for j in run["judged"] if j["kind"] == "essay-grade")
    assert essay["grade"] == "B+" and essay["comment"] == "a mysterious new kind"
    failed = view.payload(next(k for k, r in enumerate(view.rows) if r.uid == "v07"))["runs"][0]
    assert {f["model"] for f in failed["failures"]} == set(vf.CANDIDATES) and "strong" not in failed[
        "answers"
    ]


def test_rule_points_are_shown_per_instruction(runs: dict[str, Path]) -> None:
    view = ViewData([runs["rules"]])
    assert RULES in view.judges and view.models == ["plain", "strong"]
    payload = view.payload(0)
    assert payload["prompt"] == "question 0: answer without commas and in lowercase"
    assert payload["meta"]["instruction_id_list"] == ["punctuation:no_comma", "change_case:english_lowercase"]
    point = next(j for j in payload["runs"][0]["judged"] if j["model"] == "plain")
    assert point["judge"] == RULES and point["kind"] == "point"
    ids = [check["id"] for check in point["record"]["detail"]["instructions"]]
    assert ids == payload["meta"]["instruction_id_list"]
    summary = write_page(view, runs["work"] / "rules.html")
    assert summary.rows == 12 and [(r.uid, r.sample) for r in view.rows[:2]] == [("0", 0), ("0", 1)]


def test_a_run_of_a_missing_benchmark_still_shows(runs: dict[str, Path], tmp_path: Path) -> None:
    """Prompts a run cannot load (its benchmark is gone) are said to be missing, not an error."""
    copy = tmp_path / "gone"
    shutil.copytree(runs["pair"], copy)
    info = json.loads((copy / "run.json").read_text())
    info["bench"] = "no-such-benchmark"
    (copy / "run.json").write_text(json.dumps(info))
    view = ViewData([copy])
    assert len(view.rows) == len(ViewData([runs["pair"]]).rows) > 0
    assert any("prompts are not shown" in note for note in view.runs[0].notes)
    assert view.payload(0)["prompt"] is None


def test_reading_never_changes_the_run_directory(runs: dict[str, Path], tmp_path: Path, toy: None) -> None:
    copy = tmp_path / "torn"
    shutil.copytree(runs["pair"], copy)
    answers = copy / "answers" / "strong.jsonl"
    answers.write_bytes(answers.read_bytes() + b'{"kind": "answer", "uid": "v0')  # a run still writing
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    view = ViewData([copy])
    write_page(view, tmp_path / "page.html")
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


def test_inline_json_cannot_close_its_script_block() -> None:
    data = {"a": "</script><script>alert(1)</script><!-- & \u2028", "b": ["<", ">"]}
    text = inline_json(data)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == data


def test_page_is_self_contained_with_a_strict_policy(
    runs: dict[str, Path], tmp_path: Path, toy: None
) -> None:
    out = write_page(ViewData([runs["pair"]]), tmp_path / "view.html").path
    page = out.read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    rules = dict(part.strip().split(" ", 1) for part in policy.group(1).replace("&#x27;", "'").split(";"))
    assert (
        rules["default-src"] == "'none'" and rules["connect-src"] == "'none'" and rules["img-src"] == "'none'"
    )
    assert rules["script-src"].startswith("'sha256-") and " " not in rules["script-src"]
    assert page.count("<script>") == 1 and "<script src" not in page and "<link" not in page
    assert "alert(" not in page.split('id="jurist-index"')[0]  # hostile text appears only escaped, in data
    assert "</script><script>window.__pwned" not in page
    assert "\\u003cscript\\u003ewindow.__pwned" in page  # it is there, escaped


def test_page_code_never_turns_text_into_html() -> None:
    """The DOM is built with text nodes only; nothing in the page code parses HTML or evaluates strings."""
    code = "\n".join(asset(name) for name in SCRIPTS)
    for forbidden in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "setAttribute('on",
        "srcdoc",
    ):
        assert forbidden not in code, forbidden
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", code)  # no CDN, no remote anything
    assert "href = '#/" in code and ".href = link" not in code  # links in text are inert


@pytest.fixture
def served(runs: dict[str, Path], toy: None) -> Iterator[ViewServer]:
    server = ViewServer(ViewData([runs["pair"], runs["pair2"]]), categories=False)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    yield server
    server.stop()
    thread.join(timeout=10)
    server.close()


def fetch(url: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - 127.0.0.1 only
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_server_answers_rows_and_search_on_localhost_only(served: ViewServer) -> None:
    assert served.url.startswith("http://127.0.0.1:") and served.httpd.server_address[0] == "127.0.0.1"
    status, headers, body = fetch(served.url)
    assert status == 200 and "connect-src 'self'" in headers["Content-Security-Policy"]
    assert b'class="jurist-chunk"' not in body and b'"mode":"serve"' in body
    status, _, body = fetch(served.url + "api/row/3")
    payload = json.loads(body)
    assert status == 200 and payload["uid"] == "v03" and len(payload["runs"]) == 2
    assert served.search.wait(30)
    status, _, body = fetch(served.url + "api/search?q=LIGHTHOUSE%20keeper")
    assert json.loads(body)["rows"] == [3]
    _, _, body = fetch(served.url + "api/search?q=" + urllib.parse.quote("<script>window.__pwned"))
    assert json.loads(body)["rows"] == [0, 1, 2, 3, 4, 5, 6, 8, 9]  # xss's answers, as the text they are
    assert fetch(served.url + "api/row/999")[0] == 404
    assert fetch(served.url + "api/row/..%2F..%2Fetc%2Fpasswd")[0] == 404
    assert fetch(served.url + "run.json")[0] == 404
    assert fetch(served.url, host=f"evil.example:{served.port}")[0] == 421  # a rebound DNS name


def test_command_writes_the_page_and_checks_its_arguments(
    runs: dict[str, Path], tmp_path: Path, toy: None
) -> None:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:
        """A group, so the command is reached by its name as in jurist's CLI."""

    runner = CliRunner()
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["view", str(runs["pair"]), str(runs["pair2"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    index = json.loads(re.search(r'id="jurist-index">(.*?)</script>', out.read_text()).group(1))  # type: ignore[union-attr]
    assert [run["name"] for run in index["runs"]] == ["pair", "pair2"] and index["dims"][0] == 2
    assert index["summary"]["runs"][0]["sanity"][0]["judge"] in vf.JUDGES
    assert runner.invoke(app, ["view", str(tmp_path / "nope")]).exit_code != 0
    (tmp_path / "a-file").write_text("")
    blocked = runner.invoke(app, ["view", str(runs["pair"]), "--out", str(tmp_path / "a-file" / "page.html")])
    assert "cannot write the page" in str(blocked.exception) and "--out" in str(blocked.exception)
    both = runner.invoke(app, ["view", str(runs["pair"]), "--serve", "--out", str(out)])
    assert both.exit_code != 0 and "exclude each other" in str(both.exception)
