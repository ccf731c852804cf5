"""The pairwise family's paired outcomes: P(model beats the baseline) per game times its weight, per
question, whose ratio over all questions is the weighted win rate (x100: win-rate points)."""

from __future__ import annotations

from collections import defaultdict

from jurist.families.door import RecordedRun
from jurist.families.paired import Cells, PairedCells


def paired_cells(run: RecordedRun) -> PairedCells:
    from jurist.families.pairwise.battles import load_battles
    from jurist.families.pairwise.options import ScoreOptions
    from jurist.families.pairwise.run import resolve_baselines
    from jurist.ratings import OUTCOME
    from jurist.store import RunDir

    battles, _ = load_battles(RunDir(run.root))
    baselines = set(resolve_baselines(ScoreOptions(), run.fields, battles))
    cells: dict[tuple[str, str], Cells] = defaultdict(Cells)
    for battle in battles:
        a, b = battle["model_a"], battle["model_b"]
        if b in baselines and a not in baselines:
            model, p_model = a, OUTCOME[battle["winner"]]
        elif a in baselines and b not in baselines:
            model, p_model = b, 1.0 - OUTCOME[battle["winner"]]
        else:
            continue
        key = (str(battle.get("judge") or ""), str(model))
        cells[key].add(str(battle["uid"]), p_model, float(battle.get("weight", 1)))
    return PairedCells(dict(cells), "win-rate points", 100.0, head_to_head=True)
