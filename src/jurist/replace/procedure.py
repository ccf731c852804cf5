"""``jurist judges replace``: qualify a candidate judge against a retired reference judge's own verdicts
and fit the map that carries its scores onto the published leaderboard (docs/judge-replacement.md).

The panel (:mod:`~jurist.replace.panel`) is re-judged as one resumable run (:mod:`~jurist.replace.study`),
the statistics are :mod:`jurist.ratings.replacement`'s, the thresholds and the document
:mod:`~jurist.replace.analysis`'s; ``DIR/replacement.json`` is what ``jurist run --anchor`` and
``jurist show --anchor`` read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.errors import JuristError
from jurist.replace.analysis import replacement_document
from jurist.replace.panel import Panel, load_panel
from jurist.replace.study import (
    RUN_FOLDER,
    StudyRequest,
    candidate_scores,
    choose_models,
    dry_study,
    run_study,
    study_benchmark,
)

REPLACEMENT_FILE = "replacement.json"
RETIRED_VERDICTS = "retired_verdicts.jsonl"
"""The retired judge's verdicts on the whole panel as a judge-card gold file (``--gold``)."""


def write_retired_verdicts(panel: Panel, baseline: str, path: Path) -> bool:
    """The panel's stored verdicts as gold lines (uid, model, baseline, winner); False when it has none."""
    from jurist.store import rewrite_jsonl_atomic

    lines: list[dict[str, str]] = []
    for model in panel.models:
        for uid, score in sorted(panel.retired.get(model, {}).items()):
            winner = model if score > 0.5 else baseline if score < 0.5 else "tie"
            lines.append({"uid": uid, "model": model, "baseline": baseline, "winner": winner})
    if not lines:
        return False
    rewrite_jsonl_atomic(path, lines)
    return True


def _judge_model(run_root: Path, judge: str) -> str:
    """The model the candidate judge was served as (run.json's judge preset), else its alias."""
    import json

    try:
        fields = json.loads((run_root / "run.json").read_text(encoding="utf-8"))
        return str(fields["judge_preset"]["judges"][judge]["model"])
    except (OSError, ValueError, KeyError, TypeError):
        return judge


def replace_judge(
    request: StudyRequest, panel_dir: Path | None, *, dry_run: bool, console: Console
) -> tuple[int, dict[str, Any] | None]:
    """Run the study (or only its estimate); (exit code, replacement.json's document or None)."""
    from jurist.store import write_json_atomic

    panel = load_panel(request.bench, panel_dir)
    models = choose_models(panel, request.models)
    bench = study_benchmark(panel, models, request.items, request.seed)
    if dry_run:
        return dry_study(request, panel, bench, console), None
    code = run_study(request, panel, bench, console)
    run_root = request.out / RUN_FOLDER
    scores = candidate_scores(run_root, request.judge)
    if not scores:
        raise JuristError(f"{run_root}: the candidate judge gave no readable verdict; nothing to compare")
    try:
        document = replacement_document(
            panel,
            bench,
            models,
            scores,
            judge=request.judge,
            judge_model=_judge_model(run_root, request.judge),
            seed=request.seed,
            n_bootstrap=request.n_bootstrap,
        )
    except ValueError as exc:
        raise JuristError(f"{run_root}: {exc}") from None
    if bench.baseline is not None and write_retired_verdicts(
        panel, bench.baseline, request.out / RETIRED_VERDICTS
    ):
        document["retired_verdicts"] = RETIRED_VERDICTS
    write_json_atomic(request.out / REPLACEMENT_FILE, document)
    return code, document
