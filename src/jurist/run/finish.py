"""The end of a run: the family of the run's benchmark writes its outcomes, the scoring door scores them
as ``jurist show`` would (:func:`jurist.scoring.door.score_run_dir`), the documents are written and the
scores printed (:func:`jurist.report.scores.print_scores`).

Apart from the pipeline so that a ``--tasks`` run or a sweep scores each task the same way, and the
pipeline stays about running.
"""

from __future__ import annotations

from rich.console import Console

from jurist.report.formats import table_console
from jurist.report.scores import print_scores
from jurist.run.outcomes import Outcome, RunView
from jurist.run.work import JudgeWork
from jurist.scoring import (
    FinishedRun,
    RecordedRun,
    family_of_metrics,
    run_scoring_fields,
    score_family,
    score_run_dir,
    write_documents,
)


def score_finished_run(view: RunView, work: JudgeWork, samples: int, console: Console) -> Outcome:
    """Score the run directory of ``view`` (``samples`` answers per question) and print the scores: the
    tables on stdout (``--format``: the rows instead), notes on ``console``."""
    bench, config = view.bench, view.config
    rule_checked = bench.rule_suite is not None and config.mode != "inference-only"
    if not rule_checked and not view.judges:
        return Outcome([], scored=True)  # answers only: nothing to score, nothing missing
    name = family_of_metrics(bench.metrics)
    finished = FinishedRun(
        bench,
        view.run_dir,
        view.judges,
        view.candidates,
        view.baselines,
        view.kinds,
        work.judged,
        work.indexes.built_answers(),
        samples,
        config.strong_weight,
    )
    end = score_family(name).outcomes(finished)
    # what run.json records (written when the run opened), its scoring fields as this run resolves them
    opened = RecordedRun.read(view.run_dir.root).fields
    recorded = {**opened, **run_scoring_fields(bench, config.scoring_settings())}
    scores = score_run_dir(view.run_dir.root, recorded=recorded, end=end)
    write_documents(view.run_dir.root, scores)
    print_scores(scores, config.output_format, out=table_console(), err=console)
    return Outcome(scores.rows, scored=scores.scored)
