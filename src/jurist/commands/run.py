"""``jurist run``: thin parsing that builds a RunConfig and hands it to the pipeline (or to ``--tasks``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.commands.list import bench_help
from jurist.commands.options import (
    AdaptiveFlags,
    Anchor,
    DataDir,
    Gate,
    ModelStringFlags,
    RequestFlags,
    ShardFlags,
    TaskOptionFlags,
    Track,
    check_format,
    check_tracking,
    grouped,
    split_list,
    use_data_dir,
)
from jurist.commands.parsing import JuristCommand
from jurist.commands.run_options import BatchFlags, BudgetFlags, EngineFlags, JudgeCardFlags, ScoringFlags
from jurist.errors import JuristError, unknown_value


def _bench_options(values: list[str] | None) -> dict[str, str]:
    """``-B split=claude -B n=100`` -> {"split": "claude", "n": "100"}."""
    options: dict[str, str] = {}
    for value in values or []:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise JuristError(f"-B {value!r}: expected KEY=VALUE (for example -B split=claude)")
        options[key.strip()] = text.strip()
    return options


@grouped
def run(
    *,
    bench: Annotated[str | None, typer.Option(help=bench_help() + " (default: starter)")] = None,
    per_task: TaskOptionFlags,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="candidate: an alias, or a model string (openai/NAME, vllm/NAME, a path…)"
        ),
    ] = None,
    strings: ModelStringFlags,
    out: Annotated[Path | None, typer.Option(help="run directory (default runs/<bench>)")] = None,
    sample: Annotated[
        str, typer.Option(help="which questions --limit keeps: first | stratified (by category, seeded)")
    ] = "first",
    sample_seed: Annotated[int, typer.Option(help="seed of --sample stratified")] = 0,
    engine: EngineFlags,
    inference_only: Annotated[
        bool, typer.Option("--inference-only", help="stop after generating answers")
    ] = False,
    judge_only: Annotated[
        bool, typer.Option("--judge-only", help="judge and score existing answers")
    ] = False,
    rejudge_invalid: Annotated[
        bool, typer.Option("--rejudge-invalid", help="judge invalid verdicts again")
    ] = False,
    judge_protocol: Annotated[
        str | None,
        typer.Option(
            help="arena-hard | arena-hard-creative | arena-hard-local (upstream's exact prompts) | "
            "jurist-pairwise | jurist-creative | structured | simple | logprob"
        ),
    ] = None,
    judge_prompt: Annotated[
        Path | None,
        typer.Option(
            help="file with the judge's system prompt and user template ({question} {answer_a} {answer_b})"
        ),
    ] = None,
    scoring: ScoringFlags,
    requests: RequestFlags,
    budget: BudgetFlags,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the requests and estimated tokens and cost; send nothing")
    ] = False,
    answers: Annotated[
        Path | None,
        typer.Option(help="JSONL of {key|prompt, response}: score these answers for --model, generate none"),
    ] = None,
    data_dir: DataDir = None,
    fmt: Annotated[
        str, typer.Option("--format", help="final scores as table | json | csv | markdown")
    ] = "table",
    track: Track = None,
    step: Annotated[
        int | None, typer.Option(min=0, help="--track: the training step of these points")
    ] = None,
    batch: BatchFlags,
    card: JudgeCardFlags,
    parts: ShardFlags,
    ray_retries: Annotated[
        int, typer.Option(min=0, help="times a Ray shard lost with its node is retried elsewhere")
    ] = 2,
    anchor: Anchor = None,
    gate: Gate = None,
    adaptive: AdaptiveFlags,
) -> None:
    """Answer a benchmark, then judge each model against the baseline (two games, swapped) or check its
    answers by rule (ifeval, ifbench), and print scores and what it cost.

    Exit codes: 0 done, 1 requests failed, 2 usage error, 3 stopped by --max-cost/--max-tokens (a
    larger budget resumes), 4 a judge-card probe flagged under --judge-gate or a --gate rule failed,
    130 interrupted."""
    from jurist.commands.run_launch import Launch
    from jurist.run import RunConfig, task_settings

    engine_settings = engine.settings(requests)
    if track and step is None:
        raise JuristError("--track needs --step: the training step these points belong to")
    if step is not None and not track:
        raise JuristError("--step applies to --track only")
    check_tracking(track)
    if bench is not None and per_task.several:
        raise JuristError("--bench names one benchmark, --tasks and --suite several: give one or the other")
    one = (
        None
        if per_task.several
        else task_settings([bench or "starter"], per_task.flags())[bench or "starter"]
    )
    if inference_only and judge_only:
        raise JuristError("--inference-only and --judge-only exclude each other")
    check_format(fmt)
    if answers is not None and not answers.is_file():
        raise JuristError(f"--answers: {answers} is not a file")
    use_data_dir(data_dir)
    if sample not in ("first", "stratified"):
        raise unknown_value("--sample", sample, ("first", "stratified"))
    if parts.ray is not None and (parts.shards is None or parts.shard is not None):
        raise JuristError("--ray runs every part of the run: give --shards N (and no --shard)")
    config = RunConfig(
        shard=parts.choice(),
        bench=bench or "starter",
        bench_options=_bench_options(per_task.bench_option),
        models_file=strings.models_file,
        models=split_list(model),
        baseline=one.baseline if one else None,
        judges=list(one.judges) if one else [],
        model_strings=strings.options(),
        out=out,
        limit=one.limit if one else None,
        limit_sample=sample,  # type: ignore[arg-type]  # checked above
        limit_seed=sample_seed,
        samples=one.samples if one else None,
        mode="inference-only" if inference_only else "judge-only" if judge_only else "all",
        rejudge_invalid=rejudge_invalid,
        judge_protocol=judge_protocol,
        judge_prompt=judge_prompt,
        answers_file=answers,
        output_format=fmt,
        engine=engine_settings,
        scoring=scoring.settings(anchor),
        budget=budget.settings(),
        card=card.settings(),
        batching=batch.choice(),
    )
    if config.shard is not None and per_task.several:
        raise JuristError(
            "--shard runs part of one benchmark: shard each task with --bench and its own --out"
        )
    launch = Launch(
        bench=bench or "starter", tasks=per_task.tasks, suite=per_task.suite,
        flags=per_task.flags(config.bench_options), dry_run=dry_run, ray=parts.ray, shards=parts.shards,
        ray_retries=ray_retries, track=track, step=step, gate=gate, adaptive=adaptive,
        sample_seed=sample_seed,
    )  # fmt: skip
    raise typer.Exit(launch.run(config))


def register(app: typer.Typer) -> None:
    app.command("run", cls=JuristCommand)(run)
