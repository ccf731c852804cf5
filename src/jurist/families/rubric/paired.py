"""The rubric family's paired outcomes: each graded answer's score (points suites: Σ met / Σ possible), or
each criterion score as an entry, kept as a tenth (criteria suites: the micro average upstream reports);
the units and factor are the suite's (:class:`jurist.benchmarks.base.RubricSuite`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from jurist.families.door import RecordedRun
from jurist.families.paired import Cells, PairedCells


def paired_cells(run: RecordedRun) -> PairedCells:
    from jurist.families.points import load_points
    from jurist.families.rubric.score import group_answers, healthbench_metrics, known_suite
    from jurist.store import RunDir

    suite = known_suite(run.bench_info.get("suite"))
    by_group: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for point in load_points(RunDir(run.root)):
        by_group[(str(point.get("judge") or ""), str(point["model"]))].append(point)
    cells: dict[tuple[str, str], Cells] = {}
    for key, points in by_group.items():
        cell = cells.setdefault(key, Cells())
        for (uid, _sample), items in group_answers(points).items():
            if any(p.get("value") is None for p in items):
                continue  # an unscored item leaves the answer out, as the door's score does
            if suite.grading == "criteria":
                for p in items:  # every criterion an entry: the micro average upstream reports
                    cell.add(uid, int(p["detail"]["score"]) / 10.0)
            else:
                overall = healthbench_metrics(items).get("overall_score")
                if overall is not None:
                    cell.add(uid, overall)
    return PairedCells(cells, suite.paired_units, suite.paired_scale)
