"""A judge kind from outside jurist reaches the browser's page data as its registry says to show it.

The view never tells judge kinds apart by name (:mod:`jurist.view.layouts`): a kind registered with
``layout="games"`` is listed and graded game by game like pairwise verdicts; the same run viewed where the
kind declares no layout, or where no registry knows it (its plugin not installed), shows each judgment as
its own fields, never left out; an installed plugin's ``LAYOUT`` is read from its module, and one that is
no layout is one line naming the plugin, while the view still shows the run and says why.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question
from jurist.benchmarks.registry import register as register_benchmark
from jurist.benchmarks.registry import unregister as unregister_benchmark
from jurist.engine import ModelClient
from jurist.errors import JuristError
from jurist.judging import CacheMode, JudgeItem, judge_kind_layout, kinds
from jurist.judging.kinds import JudgeKindSetup
from jurist.judging.pairwise import PairwiseJudge
from jurist.judging.pairwise import judge_kind as pairwise_kind
from jurist.plugins import forget_plugins
from jurist.store.jsonl import read_jsonl
from jurist.view import codes
from jurist.view.index import ViewData
from jurist.view.layouts import Layouts

KIND = "duel"
N_QUESTIONS = 6


class DuelKind(PairwiseJudge):
    """A judge kind of a plugin's own: two swapped games, stored under its own kind name."""

    name = KIND

    async def judge(
        self,
        client: ModelClient,
        item: JudgeItem,
        *,
        cache: CacheMode,
        earlier: dict[int, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        record = await super().judge(client, item, cache=cache, earlier=earlier)
        return record | {"kind": KIND}


def duel_kind(setup: JudgeKindSetup) -> DuelKind:
    built = pairwise_kind(setup)
    return DuelKind(built.protocol, setup.spec, strong_weight=setup.strong_weight)


@pytest.fixture
def duel_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> Path:
    """A real run of a benchmark judged by the registered kind ``duel``, registered only while it runs:
    each test registers the kind as the place viewing the run has it."""

    def duel_bench(options: BenchmarkOptions) -> Benchmark:
        questions = [Question(uid=f"d{i}", prompt=f"duel question {i}?") for i in range(N_QUESTIONS)]
        return Benchmark(
            name="duel-bench",
            questions=questions,
            shipped_answers={"duel-ref": {q.uid: f"reference answer {q.uid}" for q in questions}},
            baseline="duel-ref",
            judge_kind=KIND,
            judge_protocol="jurist-pairwise",
        )

    kinds.register(KIND, duel_kind, layout="games")
    register_benchmark("duel-bench", duel_bench)
    try:
        server = mock_server()
        models = write_models_file(tmp_path / "models.yaml", server.base_url, {"strong": {}, "judge-p70": {}})
        run = {"bench": "duel-bench", "models_file": models, "models": ["strong"], "judges": ["judge-p70"]}
        result = run_quiet(**run, out=tmp_path / "run", judge_card=0)
    finally:
        kinds.unregister(KIND)
        unregister_benchmark("duel-bench")
    assert result.exit_code == 0
    return tmp_path / "run"


def cells(view: ViewData) -> dict[str, int]:
    """uid -> the code of the one (model, judge) cell the run has for ``strong``."""
    index = view.index("static", {})
    n_models, n_judges = len(view.models), len(view.judges)
    at = view.models.index("strong") * n_judges + view.judges.index("judge-p70")
    return {
        row.uid: ord(index["cells"][i * n_models * n_judges + at]) - codes.CODE_OFFSET
        for i, row in enumerate(view.rows)
    }


def judged(view: ViewData) -> dict[str, dict[str, Any]]:
    """uid -> the one judgment the row's payload shows."""
    found = {}
    for i, row in enumerate(view.rows):
        run = view.payload(i)["runs"][0]
        (entry,) = [j for j in run["judged"] if j["model"] == "strong"]
        found[row.uid] = entry
    return found


def test_a_registered_kind_in_games_is_graded_game_by_game(duel_run: Path) -> None:
    stored = {r["uid"]: r for r in read_jsonl(duel_run / "judgments" / "judge-p70" / "strong.jsonl")}
    assert len(stored) == N_QUESTIONS and {r["kind"] for r in stored.values()} == {KIND}
    kinds.register(KIND, duel_kind, layout="games")  # the run is viewed where the kind is registered
    try:
        view = ViewData([duel_run], prompts=False)  # the benchmark is gone with its plugin
        shown, codes_of = judged(view), cells(view)
    finally:
        kinds.unregister(KIND)
    assert set(shown) == set(stored) == set(codes_of)
    for uid, entry in shown.items():
        assert entry["kind"] == KIND and entry["layout"] == "games" and entry["record"] == stored[uid]
        assert "score" not in entry
        grades = [codes.game_grade(game, "strong") for game in stored[uid]["games"]]
        assert all(grade != codes.NONE for grade in grades)
        assert codes_of[uid] == codes.PAIR_BASE + 7 * grades[0] + grades[1]


@pytest.mark.parametrize("registered", [True, False])
def test_a_kind_with_no_layout_shows_its_judgments_as_their_fields(duel_run: Path, registered: bool) -> None:
    """Registered without a layout, or in no registry at all: each judgment is kept and shown raw."""
    if registered:
        kinds.register(KIND, duel_kind)
    try:
        view = ViewData([duel_run], prompts=False)  # the benchmark is gone with its plugin
        shown, codes_of = judged(view), cells(view)
    finally:
        kinds.unregister(KIND)
    assert len(shown) == N_QUESTIONS and set(codes_of.values()) == {codes.OTHER}
    assert all(e["kind"] == KIND and e["layout"] == "fields" and e["record"]["games"] for e in shown.values())
    assert not view.runs[0].notes


def test_the_builtin_kinds_layouts() -> None:
    assert {name: judge_kind_layout(name) for name in ("pairwise", "preference", "rubric")} == {
        "pairwise": "games",
        "preference": "fields",
        "rubric": "items",
    }
    assert judge_kind_layout("no-such-kind") == kinds.DEFAULT_LAYOUT == "fields"


GRADER = """
OUTCOME = "point"
LAYOUT = "items"

def judge_kind(setup):
    raise RuntimeError("not built in this test")
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed distribution (a dist-info as pip writes it) with three judge kinds: one declaring
    rubric items, one declaring nothing, one declaring a layout that is none."""
    site = tmp_path / "site"
    site.mkdir()
    modules = {
        "grader_kind": GRADER,
        "plain_kind": 'OUTCOME = "battle"\n',
        "odd_kind": 'OUTCOME = "battle"\nLAYOUT = "sideways"\n',
    }
    for module, text in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    info = site / "layout_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: layout-plugins\nVersion: 1.0\n")
    entries = "".join(f"{name.replace('_', '-')} = {name}\n" for name in modules)
    (info / "entry_points.txt").write_text(f"[{kinds.ENTRY_POINTS}]\n{entries}", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    forget_plugins()
    yield
    forget_plugins()


def test_an_installed_kind_declares_its_layout_in_its_module(installed: None) -> None:
    assert judge_kind_layout("grader-kind") == "items"
    assert judge_kind_layout("plain-kind") == "fields"
    with pytest.raises(JuristError) as odd:
        judge_kind_layout("odd-kind")
    message = str(odd.value)
    assert "\n" not in message and "layout-plugins 1.0" in message and "'sideways'" in message
    notes: list[str] = []
    layouts = Layouts(notes)
    shown = [layouts.of(name) for name in ("odd-kind", "odd-kind", "grader-kind")]
    assert shown == ["fields", "fields", "items"]
    (note,) = notes  # said once, however many of its records the run holds
    assert note.startswith("judgments of kind 'odd-kind' are shown as their own fields: plugin ")
