"""A scoring family from a pip-installed package: an entry point of group ``jurist.families`` names a class
implementing the Family protocol; the registry loads it only when a run names a family that is not built
in (or when every family is listed), and ``jurist show`` scores, prints and keeps that run's numbers
through it like any built-in family's."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import pytest
from rich.console import Console

from jurist.commands.show import show
from jurist.errors import JuristError
from jurist.families import (
    FinishedRun,
    Headline,
    RecordedRun,
    RunEnd,
    ScoreRequest,
    Scores,
    SummaryBoard,
    family_names,
    family_of_metrics,
    family_of_run,
    print_scores,
    register,
    score_family,
    score_run_dir,
    unregister,
    write_documents,
)
from jurist.families import registry as family_registry
from jurist.plugins import Plugin


class CoinFamily:
    """A toy family: each model's share of heads in ``coins.jsonl`` (one ``{"model", "heads"}`` a line)."""

    name: ClassVar[str] = "coin"
    metrics: ClassVar[tuple[str, ...]] = ("heads-share",)

    def outcomes(self, run: FinishedRun) -> RunEnd:
        return RunEnd()

    def score(self, run: RecordedRun, request: ScoreRequest, end: RunEnd | None) -> Scores:
        tosses: dict[str, list[bool]] = {}
        for line in (run.root / "coins.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            tosses.setdefault(str(record["model"]), []).append(bool(record["heads"]))
        rows = [
            {"model": model, "heads": 100.0 * sum(flips) / len(flips), "n": len(flips)}
            for model, flips in sorted(tosses.items())
        ]
        return Scores(self.name, rows, "heads (%)", f"jurist: {run.name}", {})

    def documents(self, scores: Scores) -> dict[str, Any]:
        return {"leaderboard.json": scores.rows}

    def print_scores(
        self, scores: Scores, fmt: str, title: str, out: Console, err: Console, detail: bool
    ) -> None:
        out.print(title)
        for row in scores.rows:
            out.print(f"{row['model']}: {row['heads']:.1f}")

    def summary(self, rows: Sequence[Mapping[str, Any]], method: Any) -> SummaryBoard:
        return SummaryBoard("Heads (%)", [0.0, 100.0], layout="table")

    def headline(self, row: Mapping[str, Any]) -> Headline | None:
        return Headline("heads", row["heads"], None, None)

    def paired_cells(self, run: RecordedRun) -> None:
        return None


class BrokenEntryPoint(metadata.EntryPoint):
    def load(self) -> Any:
        raise ImportError("No module named 'coin_scoring'")


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry as a new process has it: no entry point read, nothing added."""
    monkeypatch.setattr(family_registry, "_added", {})
    monkeypatch.setattr(family_registry, "_entry_points_read", False)
    yield


def _installed(monkeypatch: pytest.MonkeyPatch, *points: metadata.EntryPoint) -> list[str]:
    """Entry points as if a package ``coin-scoring 0.1`` declaring ``points`` were installed (what
    :func:`jurist.plugins.plugins` reads from its metadata); the groups asked for, in order."""
    asked: list[str] = []

    def installed(group: str) -> dict[str, Plugin]:
        asked.append(group)
        return {p.name: Plugin(p, "coin-scoring", "0.1") for p in points if p.group == group}

    monkeypatch.setattr(family_registry, "plugins", installed)
    return asked


def _coin_run(root: Path) -> Path:
    root.mkdir()
    (root / "run.json").write_text(json.dumps({"score_family": "coin", "bench_name": "coins"}))
    flips = [("a", True), ("a", True), ("a", False), ("a", True), ("b", False), ("b", True)]
    lines = [json.dumps({"model": model, "heads": heads}) for model, heads in flips]
    (root / "coins.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_a_family_from_an_entry_point_scores_prints_and_keeps_a_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_registry: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    point = metadata.EntryPoint("coin", f"{__name__}:CoinFamily", "jurist.families")
    asked = _installed(monkeypatch, point)
    run = _coin_run(tmp_path / "coins")
    assert family_of_run(tmp_path, {"score_family": "pairwise"}) == "pairwise"
    assert asked == []  # a built-in family never reads the installed packages
    assert family_of_run(run, {"score_family": "coin"}) == "coin" and asked == ["jurist.families"]
    scores = score_run_dir(run)
    assert scores.family == "coin" and scores.headline == "heads (%)"
    assert [(row["model"], row["heads"], row["n"]) for row in scores.rows] == [("a", 75.0, 4), ("b", 50.0, 2)]
    assert [path.name for path in write_documents(run, scores)] == ["leaderboard.json"]
    assert json.loads((run / "leaderboard.json").read_text()) == scores.rows
    out = Console(record=True, width=100)
    print_scores(scores, out=out, err=Console(file=None, stderr=True))
    printed = out.export_text()  # export_text() empties the record
    assert "jurist: coins (heads (%))" in printed and "a: 75.0" in printed
    capsys.readouterr()
    show([run])  # the command, as a user types it
    assert "a: 75.0" in capsys.readouterr().out
    assert score_family("coin").summary(scores.rows, None) == SummaryBoard("Heads (%)", [0.0, 100.0], "table")
    assert family_of_metrics(["heads-share"]) == "coin"  # a plugin benchmark's metric: its family's
    assert family_names()[-1] == "coin" and asked == ["jurist.families"]  # read once


def test_a_broken_entry_point_or_an_unknown_family_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    broken = BrokenEntryPoint("coin", "coin_scoring:CoinFamily", "jurist.families")
    _installed(monkeypatch, broken)
    said = r"plugin entry point coin = coin_scoring:CoinFamily \[jurist.families\] of coin-scoring 0.1: load"
    with pytest.raises(JuristError, match=said):
        family_of_run(tmp_path, {"score_family": "coin"})
    monkeypatch.setattr(family_registry, "_entry_points_read", False)
    _installed(monkeypatch)
    with pytest.raises(JuristError, match=r"run.json: score_family 'dice' is not one of pairwise, ") as err:
        family_of_run(tmp_path, {"score_family": "dice"})
    assert "\n" not in str(err.value)


def test_register_adds_a_family_in_process_and_refuses_a_built_in_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    _installed(monkeypatch)
    register(CoinFamily)
    try:
        assert score_run_dir(_coin_run(tmp_path / "coins")).rows[0]["heads"] == 75.0
    finally:
        unregister("coin")

    class Impostor(CoinFamily):
        name: ClassVar[str] = "rubric"

    with pytest.raises(JuristError, match="family 'rubric' is built in"):
        register(Impostor)
