"""The end of an arena ``jurist run``: its judgments as battles beside the human anchors, the fit, the files.

Above both the statistics (:mod:`jurist.scoring.placement`) and the tables
(:mod:`jurist.report.placement_table`), so neither needs the other's layer; the pipeline calls it where a
win-rate benchmark calls :func:`jurist.run.outcomes.score_outcomes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console

from jurist.errors import JuristError
from jurist.interop.judgearena import evaluated_name, judged_battles
from jurist.report.placement_table import print_calibration, print_reports
from jurist.run.outcomes import Judged, RunView
from jurist.scoring.placement import (
    CALIBRATION_FILE,
    PlacementSettings,
    calibration_fits,
    fit_reports,
    summary_rows,
    write_reports,
)
from jurist.store.jsonl import rewrite_jsonl_atomic, write_json_atomic


def score_arena_run(
    run: RunView, judged: Iterable[Judged], console: Console
) -> tuple[list[dict[str, Any]], bool]:
    """Write battles.jsonl and elo_ratings.json of an arena run and print the placement; returns the
    leaderboard rows and whether anything was placed. A calibration run fits temperatures instead."""
    bench, root = run.bench, run.run_dir.root
    human = getattr(bench, "human", None)
    if human is None:
        raise JuristError(f"{bench.name}: an arena benchmark must carry its human anchor battles")
    info = dict(bench.info)
    placement = info.get("placement") or {}
    if "arena-calibration" in bench.metrics:
        pairs = list(judged)
        fits = calibration_fits(pairs, bench.baselines()[0])
        document = {"arena": info.get("arena"), "selection": info.get("selection"), "judges": fits}
        write_json_atomic(root / CALIBRATION_FILE, document)
        print_calibration(console, document)
        return [{"judge": j, **fit} for j, fit in fits.items()], any(
            f["temperature"] is not None for f in fits.values()
        )
    names = {alias: evaluated_name(alias, human.models) for alias in run.candidates}
    battles, invalid = judged_battles(judged, names, placement.get("temperature"), info.get("arena"))
    battles.extend(human.records())
    rewrite_jsonl_atomic(run.run_dir.battles, battles)
    settings = PlacementSettings(
        n_bootstrap=run.config.n_bootstrap,
        seed=run.config.seed,
        anchor=placement.get("anchor"),
        anchor_rating=float(placement.get("anchor_rating", 1000.0)),
        arena=info.get("arena"),
    )
    reports, notes = (
        fit_reports(battles, settings) if any(b["source"] == "llm-judge" for b in battles) else ([], [])
    )
    write_reports(root, reports)
    rows = summary_rows(reports)
    for row in rows:
        alias = next((a for a, n in names.items() if n == row["model"]), row["model"])
        row["invalid"] = invalid.get((row["judge"], alias), 0)
    write_json_atomic(run.run_dir.leaderboard, rows)
    for (judge, model), n in sorted(invalid.items()):
        notes.append(f"{n} verdict(s) of {judge} on {model} could not be read and were left out")
    print_reports(console, reports, notes, title=f"jurist: {bench.name}")
    return rows, bool(reports)
