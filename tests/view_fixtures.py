"""Run directories for the run browser's tests and benchmark, and the browser they are opened in.

Real runs go through ``run_pipeline`` against the mock server (tests/mock_openai.py): a pairwise run of a
small benchmark whose answers hold markdown, code and hostile HTML, whose judges agree, disagree, quote
answers or give no verdict, and where one question's answers all fail; a rule-checked run (IFEval checkers
on a question file). A synthetic run of any size (10,000 questions x 5 models for the scale figure) is
written directly in the same record shapes, with battles, leaderboard and ratings scored by jurist itself.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import run_config
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, take_options
from jurist.benchmarks.registry import register, unregister
from jurist.engine.pacing.retry import RetryPolicy
from jurist.judging.pairwise import battles_from_judgment
from jurist.run.pipeline import run_pipeline
from jurist.store.jsonl import JsonlAppender
from mock_openai import MockOpenAI

CHROMIUM = Path(os.environ.get("JURIST_CHROMIUM", "/usr/bin/chromium"))
TOY = "viewtoy"
EVIL = (
    "<script>window.__pwned = 'script'; alert('script')</script>\n\n"
    "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">\n\n"
    "[a javascript link](javascript:window.__pwned='link') and <a href=\"javascript:alert('a')\">raw</a>\n\n"
    "<iframe src=\"javascript:alert('frame')\"></iframe> <svg onload=\"alert('svg')\"></svg>\n\n"
    "**bold <b onmouseover=\"alert('b')\">hover</b>** ![pixel](http://example.com/pixel.png)\n\n"
    "```html\n<script>alert('fenced')</script>\n```\n\n"
    "</script><script>window.__pwned = 'breakout'; alert('breakout')</script><!--"
)
MARKDOWN = (
    "## Plan\n\n1. Read the **input** carefully\n2. Sort with `sorted()` and a *key*\n   - ties keep order\n"
    "3. Return the first k\n\n```python\ndef top(items, k=3):\n    # the k largest\n"
    '    return sorted(items, reverse=True)[:k]  # "fast enough"\n```\n\n'
    "| case | result |\n|---|---|\n| empty | [] |\n| [3, 1, 2] | [3, 2, 1] |\n\n"
    "> See the [sorting guide](https://docs.python.org/3/howto/sorting.html) for more.\n"
)
LONG = "\n\n".join(
    f"Point {k}: a thread shares its process's memory; a process has its own." for k in range(60)
)
PROMPTS = [
    ("code", "Write a Python function that returns the k largest numbers of a list."),
    ("code", "Explain the difference between a process and a thread in two sentences."),
    ("code", "Give a SQL query that counts orders per customer in a table named orders."),
    ("writing", "Write a haiku about a lighthouse keeper at dawn."),
    ("writing", "Draft a two-line apology for a late delivery of office chairs."),
    ("writing", "Summarise this page for a child: " + EVIL),
    ("math", "What is 17 times 23? Show the steps."),
    ("math", "Is 221 a prime number? FAILME"),
    ("math", "How many edges does a cube have, and why?"),
    ("math", "Find the next number: 1, 1, 2, 3, 5, 8, ..."),
]
CANDIDATES = ["strong", "mixed", "xss"]
JUDGES = ["judge-good", "judge-p70", "judge-quoter", "judge-broken"]


def toy_benchmark(options: BenchmarkOptions) -> Benchmark:
    """Ten questions in three categories with a shipped reference baseline (see :data:`PROMPTS`)."""
    take_options(TOY, options, {})
    questions = [Question(uid=f"v{k:02d}", prompt=p, category=c) for k, (c, p) in enumerate(PROMPTS)]
    reference = {q.uid: f"A careful reference answer to: {q.prompt[:40]}" for q in questions}
    return Benchmark(
        name=TOY,
        questions=questions,
        shipped_answers={"reference": reference},
        baseline="reference",
        judge_protocol="jurist-pairwise",
    )


@contextmanager
def toy_registered() -> Iterator[None]:
    """The toy benchmark by name, for runs and for the browser, which loads prompts by benchmark name."""
    register(TOY, toy_benchmark)
    try:
        yield
    finally:
        unregister(TOY)


def mock_with_rich_answers() -> MockOpenAI:
    """The mock server, with ``strong`` answering in markdown and ``xss`` answering hostile HTML.

    Answers keep the mock's ``[model]`` tag first, so the mock judges still decide by model strength.
    """
    server = MockOpenAI(faults={"FAILME": ["400"] * len(CANDIDATES)})
    original = server._reply

    def reply(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        response = original(model, messages, body)
        extra = {"strong": MARKDOWN, "xss": EVIL}.get(model)
        asked = next((m["content"] for m in messages if m["role"] == "user"), "")
        if model == "strong" and "impartial judge" not in str(messages[0]["content"]) and "thread" in asked:
            extra = MARKDOWN + LONG  # one long answer, shown collapsed
        if extra is None:
            return response
        assert isinstance(response.body, bytes)  # the mock builds every reply from bytes
        payload = json.loads(response.body)
        payload["choices"][0]["message"]["content"] += "\n\n" + extra
        response.body = json.dumps(payload).encode()
        return response

    server._reply = reply  # type: ignore[method-assign]
    server.start()
    return server


def write_models(path: Path, base_url: str, aliases: list[str]) -> Path:
    entry = {"api_type": "openai", "endpoints": [{"api_base": base_url, "api_key": None}], "parallel": 8}
    data = {
        alias: {"model": alias, **entry, "max_tokens": 64, "temperature": 0.0, "timeout": 5}
        for alias in aliases
    }
    path.write_text(json.dumps(data))
    return path


def _run(**kwargs: Any) -> None:
    retry = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
    run_pipeline(run_config(progress=False, check=False, cache=False, retry=retry, **kwargs))


def pairwise_run(
    out: Path, models_file: Path, *, models: list[str] | None = None, judges: list[str] | None = None
) -> Path:
    """A finished pairwise run of the toy benchmark (one question's answers all fail: exit code 1)."""
    _run(bench=TOY, models_file=models_file, models=models or CANDIDATES, judges=judges or JUDGES, out=out)
    return out


def rule_run(out: Path, work: Path, models_file: Path) -> Path:
    """An IFEval-checked run, two samples per question: no commas, and lower case on even questions."""
    questions = work / "rule_questions.jsonl"
    rows = []
    for k in range(6):
        ids = ["punctuation:no_comma"] + (["change_case:english_lowercase"] if k % 2 == 0 else [])
        rows.append(
            {
                "key": k,
                "prompt": f"question {k}: answer without commas and in lowercase",
                "instruction_id_list": ids,
                "kwargs": [{}] * len(ids),
            }
        )
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _run(
        bench="ifeval",
        bench_options={"file": str(questions)},
        models_file=models_file,
        models=["plain", "strong"],
        samples=2,
        out=out,
    )
    return out


def add_unknown_records(run: Path, judge: str, model: str, uid: str) -> None:
    """Records of kinds the page was not written for: a rubric-like point and an invented kind."""
    folder = run / "judgments" / judge
    with JsonlAppender(folder / f"{model}.jsonl") as out:
        out.append(
            {
                "kind": "point",
                "key": f"rubric-{uid}",
                "uid": uid,
                "sample": 0,
                "model": model,
                "judge": judge,
                "metric": "rubric",
                "value": 0.5,
                "detail": {
                    "items": [
                        {
                            "criterion": "states the steps",
                            "points": 5,
                            "met": True,
                            "reason": "it lists them",
                        },
                        {
                            "criterion": "gives the right number",
                            "points": 5,
                            "met": False,
                            "reason": "off by one",
                        },
                    ]
                },
            }
        )
        out.append(
            {
                "kind": "essay-grade",
                "key": f"essay-{uid}",
                "uid": uid,
                "sample": 0,
                "model": model,
                "judge": judge,
                "grade": "B+",
                "comment": "a mysterious new kind",
            }
        )


@contextmanager
def made_runs(work: Path) -> Iterator[dict[str, Path]]:
    """The test runs, made in ``work``: ``pair`` (unknown record kinds added to v06), ``pair2`` (other
    models, one judge), ``rules``; the toy benchmark stays registered while they are used."""
    server = mock_with_rich_answers()
    try:
        models = write_models(work / "m.json", server.base_url, CANDIDATES + JUDGES + ["plain", "better"])
        with toy_registered():
            pair = pairwise_run(work / "pair", models)
            add_unknown_records(pair, "judge-good", "mixed", "v06")
            second = pairwise_run(work / "pair2", models, models=["strong", "better"], judges=["judge-good"])
            rules = rule_run(work / "rules", work, models)
            yield {"pair": pair, "pair2": second, "rules": rules, "work": work}
    finally:
        server.stop()


# -- a synthetic run of any size ------------------------------------------------------------------------
WORDS = (
    "model answer judge verdict question data train test loss gradient token prompt score rank tie win "
    "river mountain cloud python rust server client cache queue thread lock file disk memory graph tree"
).split()
LABELS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")


def _text(rng: random.Random, words: int) -> str:
    out = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(out).capitalize() + "."


def synthetic_run(root: Path, *, questions: int, models: int, judges: int = 1, seed: int = 0) -> Path:
    """A finished pairwise run written directly: ``questions`` x ``models`` answers (~150 words each), one
    judgment per judge and model with two games, battles, and jurist's own leaderboard and ratings."""
    from jurist.families import ScoreOptions, score_run, write_outputs

    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    names = [f"model-{k}" for k in range(models)]
    judge_names = [f"judge-{k}" for k in range(judges)]
    categories = ["coding", "math", "writing", "reasoning", "chat"]
    question_file = root / "question.jsonl"
    uids = [f"s{k:06d}" for k in range(questions)]
    cats = [categories[k % len(categories)] for k in range(questions)]
    with open(question_file, "w", encoding="utf-8") as fh:
        for uid, cat in zip(uids, cats, strict=True):
            fh.write(
                json.dumps({"uid": uid, "category": cat, "prompt": _text(rng, rng.randint(15, 60))}) + "\n"
            )
    (root / "answers").mkdir(exist_ok=True)
    for model in ["baseline", *names]:
        with open(root / "answers" / f"{model}.jsonl", "w", encoding="utf-8") as fh:
            for uid, cat in zip(uids, cats, strict=True):
                usage = {
                    "prompt_tokens": rng.randint(20, 200),
                    "completion_tokens": rng.randint(50, 400),
                    "latency_s": round(rng.random() * 3, 3),
                    "attempts": 1,
                }
                text = _text(rng, rng.randint(60, 220))
                record = {
                    "kind": "answer",
                    "uid": uid,
                    "sample": 0,
                    "model": model,
                    "category": cat,
                    "answer": text,
                    "tstamp": 0.0,
                    "usage": usage,
                    "finish_reason": "stop",
                    "metadata": {"token_len": len(text) // 4},  # as jurist records it: no tokenizer needed
                }
                fh.write(json.dumps(record) + "\n")
    with open(root / "battles.jsonl", "w", encoding="utf-8") as battles:
        for judge in judge_names:
            (root / "judgments" / judge).mkdir(parents=True, exist_ok=True)
            for strength, model in enumerate(names):
                with open(root / "judgments" / judge / f"{model}.jsonl", "w", encoding="utf-8") as fh:
                    for uid, cat in zip(uids, cats, strict=True):
                        record = _synthetic_judgment(rng, judge, model, uid, cat, strength - models / 2)
                        fh.write(json.dumps(record) + "\n")
                        for battle in battles_from_judgment(record):
                            battles.write(json.dumps(battle) + "\n")
    info = {
        "schema_version": 2,
        "status": "finished",
        "bench": str(question_file),
        "bench_name": root.name,
        "bench_options": {},
        "n_questions": questions,
        "samples": 1,
        "models": names,
        "baseline": "baseline",
        "baselines": ["baseline"],
        "judges": judge_names,
        "judge_kind": "pairwise",
        "scoring": {"bootstrap": 20, "seed": 0, "ci_level": 0.9},
    }
    (root / "run.json").write_text(json.dumps(info, indent=2))
    write_outputs(root, score_run(root, ScoreOptions(n_bootstrap=20)))
    return root


def _synthetic_judgment(
    rng: random.Random, judge: str, model: str, uid: str, cat: str, edge: float
) -> dict[str, Any]:
    def label() -> str | None:
        if rng.random() < 0.01:
            return None
        return LABELS[max(0, min(4, int(round(2 + edge * 0.6 + rng.gauss(0, 1.1)))))]

    games = []
    for game, (a, b) in enumerate([("baseline", model), (model, "baseline")], start=1):
        chosen = label()
        if chosen is not None and game == 2:  # labels above are from the model's side as B; mirror for A
            chosen = LABELS[4 - LABELS.index(chosen)]
        raw = _text(rng, rng.randint(40, 120)) + (
            f" My final verdict is [[{chosen}]]." if chosen else " I cannot decide."
        )
        games.append(
            {
                "game": game,
                "a": a,
                "b": b,
                "label": chosen,
                "raw": raw,
                "usage": {"prompt_tokens": 900, "completion_tokens": 150, "latency_s": 1.2},
            }
        )
    return {
        "kind": "pairwise",
        "key": f"{judge}|{model}|{uid}",
        "uid": uid,
        "sample": 0,
        "category": cat,
        "judge": judge,
        "model": model,
        "baseline": "baseline",
        "protocol": "synthetic",
        "prompt_hash": "",
        "answer_hash": "",
        "baseline_hash": "",
        "games": games,
        "invalid": any(g["label"] is None for g in games),
        "tstamp": 0.0,
    }


def measure(page: Any, url: str, *, wait: Callable[[str], Any]) -> dict[str, Any]:
    """Open a synthetic run's page and time it in the browser: first paint, list shown, whole file read,
    search text built, a category filter and a one-hit search (in-page times, and wall times that include
    the driver's round trips). ``wait`` polls a JavaScript expression until it is true."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.locator(".row").first.wait_for(timeout=120_000)
    rows_wall = time.perf_counter() - started
    page.wait_for_load_state("domcontentloaded", timeout=300_000)
    figures: dict[str, Any] = {"rows": page.evaluate("window.__jurist.rows")}
    paint = wait("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
    figures |= {"first_paint_ms": round(paint or -1), "rows_visible_wall_ms": round(1000 * rows_wall)}
    figures["list_shown_ms"] = round(page.evaluate("window.__jurist.perf.marks.listShown"))
    figures["file_read_ms"] = round(
        page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    )
    if url.startswith("file:"):
        wait("window.__jurist.perf.hayMs !== null")
        figures["search_text_built_ms"] = round(page.evaluate("window.__jurist.perf.hayMs"))
    count = "document.getElementById('count').textContent"
    rows = int(figures["rows"])
    in_category = sum(1 for k in range(rows) if k % 5 == 1)  # synthetic_run's second category
    timing = time.perf_counter()
    page.select_option(".filters .cat-pick select", "1")
    wait(f"{count}.startsWith('{in_category} of')")
    figures["category_filter_wall_ms"] = round(1000 * (time.perf_counter() - timing))
    figures["category_filter_ms"] = round(page.evaluate("window.__jurist.perf.filterMs.at(-1)"), 1)
    figures["category_rows"] = int(page.inner_text("#count").split()[0])
    page.select_option(".filters .cat-pick select", "-1")
    wait(f"{count}.startsWith('{rows} of')")
    timing = time.perf_counter()
    page.fill("#search", f"s{min(4321, rows - 1):06d}")  # one uid: the whole text is searched, one hit
    page.press("#search", "Enter")
    wait(f"{count}.startsWith('1 of')")
    figures["search_wall_ms"] = round(1000 * (time.perf_counter() - timing))
    figures["search_ms"] = round(page.evaluate("window.__jurist.perf.searchMs.at(-1)"), 1)
    figures["search_and_filter_ms"] = round(page.evaluate("window.__jurist.perf.lastQueryMs"), 1)
    figures["search_hits"] = int(page.inner_text("#count").split()[0])
    heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
    figures["js_heap_mb"] = round(heap / 1e6)
    return figures


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; see docs/browser.md)"
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium, or set JURIST_CHROMIUM)"
    return None
