"""JudgeArena's arena results imported as a jurist run directory (``jurist import judgearena``).

The schema itself (battles files, ``elo_ratings.json``, jurist judgments as battles) is the placement
family's, :mod:`jurist.families.placement.arena_battles`; its names are re-exported here for peer-format code.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.families import (
    BATTLE_FILES,
    ELO_FILE,
    HARD_PREF,
    LABEL_GAP,
    REPORT_FIELDS,
    SOURCES,
    WINNERS,
    battle_from_dict,
    evaluated_name,
    find_battles,
    game_battle,
    is_arena_battles_file,
    judged_battles,
    read_battles,
    read_elo_report,
)

__all__ = [
    "BATTLE_FILES",
    "ELO_FILE",
    "HARD_PREF",
    "LABEL_GAP",
    "REPORT_FIELDS",
    "SOURCES",
    "WINNERS",
    "battle_from_dict",
    "evaluated_name",
    "find_battles",
    "game_battle",
    "import_judgearena",
    "is_arena_battles_file",
    "judged_battles",
    "read_battles",
    "read_elo_report",
]


def import_judgearena(results: Path, out: Path) -> dict[str, Any]:
    """A JudgeArena Elo results folder (or one battles file) as a new jurist run directory.

    Writes ``battles.jsonl`` in the same schema (human votes included when the file has them), copies
    ``elo_ratings.json`` when there is one, and a run.json saying where it came from.
    """
    from jurist.interop.common import check_new_run_dir
    from jurist.store import rewrite_jsonl_atomic, write_json_atomic

    source = results if results.is_file() else find_battles(results)
    if source is None:
        raise JuristError(f"{results}: no {' or '.join(BATTLE_FILES)} to import")
    battles = read_battles(source)
    elo = results / ELO_FILE if results.is_dir() else results.parent / ELO_FILE
    report = read_elo_report(elo) if elo.is_file() else None
    check_new_run_dir(out)
    out.mkdir(parents=True)
    rewrite_jsonl_atomic(out / "battles.jsonl", battles)
    if report is not None:
        shutil.copyfile(elo, out / ELO_FILE)
    summary = {
        "battles": len(battles),
        "llm_judge_battles": sum(b["source"] == "llm-judge" for b in battles),
        "human_battles": sum(b["source"] == "human" for b in battles),
        "elo_report": report is not None,
    }
    run_json = {
        "schema_version": 2,
        "status": "imported",
        "imported_from": str(results),
        "format": "judgearena",
        "score_family": "placement",
        "import_summary": summary,
        "updated": time.time(),
    }
    if report is not None:
        run_json["scoring"] = {"bootstrap": report["n_bootstraps"], "seed": report["seed"]}
    write_json_atomic(out / "run.json", run_json)
    return summary
