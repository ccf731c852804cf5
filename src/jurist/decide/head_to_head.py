"""``jurist compare A B --head-to-head``: judge b's answers directly against a's, with the benchmark's own
pairwise protocol and a's judge, instead of each against the baseline — more power for close
checkpoints, whose answers the baseline cannot tell apart.

The two runs' stored answers are reused (nothing is generated): a's answers file is the baseline of a new
run directory, b's are copied into it as its candidate's, judged (``--judge-only``) by a's judges under
a's protocol. The
result is b's win rate against a; the difference stated is that win rate minus 50, with the question
bootstrap's interval, and its decision as in :mod:`jurist.decide.compare`.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from jurist.decide.compare import CompareSettings, check_same, model_cells
from jurist.decide.sides import Side, TaskRun
from jurist.errors import JuristError


def _copy_candidate(run: TaskRun, model: str, out: Path) -> None:
    """b's stored answers copied into the new run directory, as if it had generated them (judge-only)."""
    import shutil

    from jurist.store import RunDir

    target = RunDir(out).answers(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(RunDir(run.root).answers(model), target)


def head_to_head(
    a: TaskRun,
    b: TaskRun,
    settings: CompareSettings,
    out: Path,
    models_file: Path | None,
    *,
    names: tuple[str, str],
) -> dict[str, Any]:
    """Judge b against a on a's benchmark, in ``out``, and the comparison row."""
    from jurist.families import RecordedRun, read_outcomes
    from jurist.ratings import paired_bootstrap
    from jurist.run import EngineSettings, JudgeCardSettings, RunConfig, run_pipeline
    from jurist.store import RunDir

    outcomes_a, outcomes_b = read_outcomes(a.root), read_outcomes(b.root)
    check_same(outcomes_a, outcomes_b, settings.replacement)
    if not outcomes_a.head_to_head:
        raise JuristError(
            f"--head-to-head: {a.root} is a {outcomes_a.family} run; only runs judged against a baseline "
            "(pairwise) are judged head to head"
        )
    fields = RecordedRun.read(a.root).fields
    (judge,) = outcomes_a.judges()[:1] or [""]
    model_a, _ = model_cells(outcomes_a, a, judge)
    model_b, _ = model_cells(outcomes_b, b, judge)
    if model_a == model_b:
        raise JuristError(
            f"--head-to-head: both runs name their model {model_a!r}; the judge must tell them apart"
        )
    bench = str(fields.get("bench_path") or fields.get("bench") or outcomes_a.task)
    config = RunConfig(
        bench=bench,
        bench_options={str(k): str(v) for k, v in (fields.get("bench_options") or {}).items()},
        models_file=models_file,
        models=[model_b],
        baseline=str(RunDir(a.root).answers(model_a)),
        judges=[str(j) for j in fields.get("judges") or []],
        judge_protocol=fields.get("judge_protocol"),
        out=out,
        mode="judge-only",
        engine=EngineSettings(progress=False, check=False),
        card=JudgeCardSettings(items=0),
        output_format="json",
    )
    _copy_candidate(b, model_b, out)
    with contextlib.redirect_stdout(sys.stderr):  # the run's own tables: stdout is the comparison's
        result = run_pipeline(config)
    if result.exit_code != 0:
        raise JuristError(f"--head-to-head: the run in {out} ended with exit code {result.exit_code}")
    judged = read_outcomes(out)
    _, cells = model_cells(judged, TaskRun(a.task, out, model_b), judge)
    uids = sorted(cells.sums)
    counts = [cells.counts[u] for u in uids]
    diff = paired_bootstrap(
        [0.5 * c for c in counts], counts, [cells.sums[u] for u in uids], counts,
        n_bootstrap=settings.n_bootstrap, seed=settings.seed, ci_level=settings.level,
    )  # fmt: skip
    return {
        "task": a.task, "judge": judge or None, "a": names[0], "b": names[1], "model_a": model_a,
        "model_b": model_b, "family": "pairwise", "units": "head-to-head win-rate points above 50",
        "n": diff.n, "n_a": len(uids), "n_b": len(uids), "score_a": 50.0, "score_b": 50.0 + diff.estimate,
        "difference": {"estimate": diff.estimate, "ci": [diff.ci_low, diff.ci_high]}, "level": settings.level,
        "test": "head-to-head bootstrap", "p": diff.p, "p_bootstrap": diff.p, "mdd": diff.mdd,
        "run_dir": str(out),
    }  # fmt: skip


def head_to_head_sides(
    sides: list[Side], settings: CompareSettings, out: Path, models_file: Path | None
) -> list[dict[str, Any]]:
    """Every later side judged directly against the first, task by task, in ``out/<b>/<task>``; Holm's
    correction within each pair."""
    from jurist.decide.compare import decide

    if len(sides) < 2:
        raise JuristError("jurist compare needs at least two runs (or a sweep of two checkpoints)")
    rows: list[dict[str, Any]] = []
    first = sides[0]
    for side in sides[1:]:
        pair = []
        for task in [t for t in first.tasks if t in side.tasks]:
            target = out / Path(side.name).name / task
            names = (first.name, side.name)
            pair.append(
                head_to_head(first.tasks[task], side.tasks[task], settings, target, models_file, names=names)
            )
        if not pair:
            raise JuristError(f"{first.name} vs {side.name}: no task in common")
        decide(pair, settings.level, settings.delta)
        rows.extend(pair)
    return rows
