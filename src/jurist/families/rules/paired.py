"""The rules family's paired outcomes: the prompt-level pass of each sampled answer, strict or loose as the
suite's headline is (IFEval's strict, IFBench's loose), x100: accuracy points; each answer's pass kept for
McNemar's pairs."""

from __future__ import annotations

from collections import defaultdict

from jurist.families.door import RecordedRun
from jurist.families.paired import Cells, PairedCells


def paired_cells(run: RecordedRun) -> PairedCells:
    from jurist.families.points import load_points
    from jurist.families.rules.score import HEADLINE
    from jurist.store import RunDir

    suite = str(run.bench_info.get("suite") or run.fields.get("rule_suite") or "")
    mode = "loose" if HEADLINE.get(suite, "prompt_strict") == "prompt_loose" else "strict"
    cells: dict[tuple[str, str], Cells] = defaultdict(Cells)
    for point in load_points(RunDir(run.root)):
        passed = all(bool(check[mode]) for check in point["detail"]["instructions"])
        cell = cells[("", str(point["model"]))]
        cell.add(str(point["uid"]), float(passed))
        cell.passed[(str(point["uid"]), int(point.get("sample", 0)))] = passed
    return PairedCells(dict(cells), "accuracy points", 100.0, exact_test=True)
