"""``jurist run``: thin parsing that builds a RunConfig and hands it to the pipeline (or to ``--tasks``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from jurist.commands.list import bench_help
from jurist.errors import JuristError, did_you_mean, unknown_value


def _split(values: list[str] | None) -> list[str]:
    """``--judge a --judge b`` and ``--judge a,b`` both give ``[a, b]``."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _bench_options(values: list[str] | None) -> dict[str, str]:
    """``-B split=claude -B n=100`` -> {"split": "claude", "n": "100"}."""
    options: dict[str, str] = {}
    for value in values or []:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise JuristError(f"-B {value!r}: expected KEY=VALUE (for example -B split=claude)")
        options[key.strip()] = text.strip()
    return options


def run(
    bench: Annotated[
        str | None,
        typer.Option(help=bench_help() + " (default: starter)"),
    ] = None,
    tasks: Annotated[
        str | None,
        typer.Option(
            help="several benchmarks, comma-separated, for the same models in one process: each into "
            "OUT/<task>, one combined table (-B TASK:KEY=VALUE for a task's options)"
        ),
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(help="a suite file: tasks with their judges, baselines, samples, limits, options"),
    ] = None,
    bench_option: Annotated[
        list[str] | None,
        typer.Option("-B", "--bench-option", help="benchmark option KEY=VALUE, e.g. -B split=claude"),
    ] = None,
    models_file: Annotated[
        Path | None, typer.Option("--models-file", help="api_config.yaml-style file")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="candidate: an alias, or a model string (openai/NAME, vllm/NAME, a path…)"
        ),
    ] = None,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            help="baseline: alias, model string or answers .jsonl (default: the benchmark's); "
            "TASK=B for one task"
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option("--judge", help="judge alias or model string (repeatable, or a,b); TASK=J for one task"),
    ] = None,
    # -- model strings (docs/models.md): what every string that names none of its own takes --------------
    base_url: Annotated[
        str | None, typer.Option(help="URL of the model strings' OpenAI-compatible server")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(help="key of the model strings (never written anywhere)", show_default=False)
    ] = None,
    model_setting: Annotated[
        list[str] | None,
        typer.Option(
            "-M", "--model-setting", help="model-string setting KEY=VALUE: temperature=0, max_tokens=512…"
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="run directory (default runs/<bench>)")] = None,
    limit: Annotated[list[str] | None, typer.Option(help="use only N questions; TASK=N for one task")] = None,
    sample: Annotated[
        str, typer.Option(help="which questions --limit keeps: first | stratified (by category, seeded)")
    ] = "first",
    sample_seed: Annotated[int, typer.Option(help="seed of --sample stratified")] = 0,
    samples: Annotated[
        list[str] | None,
        typer.Option(help="answers per prompt (default: the benchmark's); TASK=N for one task"),
    ] = None,
    max_concurrency: Annotated[int, typer.Option(min=1, help="requests in flight, all models together")] = 64,
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
    min_interval: Annotated[
        float, typer.Option(min=0.0, help="seconds between request starts, across all jurist processes")
    ] = 0.0,
    throttle_file: Annotated[
        Path | None,
        typer.Option(help="state file shared by throttled processes [~/.cache/jurist/throttle.lock]"),
    ] = None,
    method: Annotated[str, typer.Option(help="scoring: winrate | bt (Bradley-Terry, Elo scale)")] = "winrate",
    style_control: Annotated[
        str | None, typer.Option(help="control scores for style: length, markdown or length,markdown")
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option("--category", help="score this category alone, against its own baseline (repeatable)"),
    ] = None,
    length_controlled: Annotated[
        bool, typer.Option("--length-controlled", help="score with AlpacaEval's length-controlled win rate")
    ] = False,
    ensemble: Annotated[bool, typer.Option("--ensemble", help="pool the judges into one score")] = False,
    bootstrap: Annotated[int, typer.Option(min=0, help="bootstrap rounds")] = 100,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    ci: Annotated[float, typer.Option(min=0.5, max=0.999, help="CI level")] = 0.90,
    max_attempts: Annotated[
        int, typer.Option(min=1, help="attempts per request before it counts as failed")
    ] = 6,
    retry_base_delay: Annotated[float, typer.Option(min=0.0, help="first backoff delay, seconds")] = 1.0,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bars")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="neither read nor write the machine-wide request cache")
    ] = False,
    cache_only: Annotated[
        bool,
        typer.Option(
            "--cache-only",
            help="send nothing: answer from the request cache as each server last identified itself "
            "(servers may be down); what it lacks fails, and a run without it sends that",
        ),
    ] = False,
    cache_dir: Annotated[
        Path | None, typer.Option(help="request cache folder [$JURIST_CACHE_DIR or ~/.cache/jurist]")
    ] = None,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="skip probing the models' endpoints before the run")
    ] = False,
    prices: Annotated[
        Path | None,
        typer.Option(
            help="YAML/JSON: alias or served model name -> {input, output, cached_input} USD per 1M"
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(min=0.0, help="budget in USD for the run directory: stops before it could be exceeded"),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=0, help="budget in tokens (prompt + completion, all models) for the run directory"),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the requests and estimated tokens and cost; send nothing")
    ] = False,
    answers: Annotated[
        Path | None,
        typer.Option(help="JSONL of {key|prompt, response}: score these answers for --model, generate none"),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="folder with local copies of benchmark data [$JURIST_DATA_DIR]; no download"),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="final scores as table | json | csv | markdown")
    ] = "table",
    track: Annotated[
        list[str] | None,
        typer.Option(
            "--track",
            help="log the headline metrics at --step: tensorboard:DIR, mlflow:URI, "
            "wandb:ENTITY/PROJECT, wandb:ENTITY/PROJECT/RUN_ID (repeatable)",
        ),
    ] = None,
    step: Annotated[
        int | None, typer.Option(min=0, help="--track: the training step of these points")
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="run served models in-process (llama.cpp Llama on CPU, vLLM on GPU) instead of "
            "starting servers",
        ),
    ] = False,
    # -- batch APIs (docs/batch.md) --
    batch: Annotated[
        str,
        typer.Option(
            help="send requests through the providers' batch APIs, at ~half price: none | judges | all"
        ),
    ] = "none",
    batch_poll: Annotated[float, typer.Option(min=0.01, help="seconds between polls of a batch")] = 30.0,
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="cut a batch at N requests (default: the provider's limit)")
    ] = None,
    batch_age: Annotated[
        float, typer.Option(min=0.0, help="or once its oldest request has waited S seconds")
    ] = 30.0,
    batch_attempts: Annotated[
        int, typer.Option(min=1, help="batches that may leave a request unanswered, over all runs of RUN")
    ] = 3,
    batch_deadline: Annotated[
        float | None, typer.Option(min=0.0, help="past S seconds in batches, send a request synchronously")
    ] = None,
    # -- the judge card (docs/judge-card.md) --
    judge_card: Annotated[
        int | None,
        typer.Option(
            min=10, help="items per judge-card probe [50]; all probes stay within 10% of the judge requests"
        ),
    ] = None,
    no_judge_card: Annotated[
        bool, typer.Option("--no-judge-card", help="skip the judge card's probes")
    ] = False,
    gold: Annotated[
        Path | None,
        typer.Option(help="human labels (JSONL, docs/judge-card.md): the card's gold agreement against them"),
    ] = None,
    judge_gate: Annotated[
        bool,
        typer.Option("--judge-gate", help="exit 4 when a judge-card probe is flagged (after saving all)"),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(help="run part I of N (0-based: 0/4 … 3/4) into its own directory; jurist merge joins"),
    ] = None,
    shards: Annotated[
        int | None,
        typer.Option(help="run one of N parts, its index from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX"),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(help="run the --shards N parts as Ray tasks on the cluster at ADDRESS (auto, local, …)"),
    ] = None,
    ray_retries: Annotated[
        int, typer.Option(min=0, help="times a Ray shard lost with its node is retried elsewhere")
    ] = 2,
    anchor: Annotated[
        Path | None,
        typer.Option(
            help="a replacement.json (jurist judges replace): scores re-anchored to the published scale"
        ),
    ] = None,
    gate: Annotated[
        Path | None,
        typer.Option("--gate", help="a gate policy (YAML) checked on the scores; exit 4 on a fail"),
    ] = None,
    # -- adaptive evaluation (docs/decisions.md) --
    adaptive: Annotated[
        bool,
        typer.Option("--adaptive", help="judge questions in seeded random rounds until the answer is known"),
    ] = False,
    target_ci: Annotated[
        float | None, typer.Option(help="--adaptive: stop when the interval is narrower than W (task units)")
    ] = None,
    decide_vs: Annotated[
        Path | None, typer.Option(help="--adaptive: stop once the paired comparison with this run is decided")
    ] = None,
    delta: Annotated[
        float, typer.Option(min=0.0, help="--decide-vs: the smallest difference that counts")
    ] = 0.0,
    adaptive_round: Annotated[
        int, typer.Option("--round", min=1, help="--adaptive: questions per round")
    ] = 20,
) -> None:
    """Answer a benchmark, then judge each model against the baseline (two games, swapped) or check its
    answers by rule (ifeval, ifbench), and print scores and what it cost.

    Exit codes: 0 done, 1 requests failed, 2 usage error, 3 stopped by --max-cost/--max-tokens (a
    larger budget resumes), 4 a judge-card probe flagged under --judge-gate or a --gate rule failed,
    130 interrupted."""
    from jurist.commands.run_launch import Launch
    from jurist.engine import RetryPolicy
    from jurist.run.batching import batch_choice
    from jurist.run.config import RunConfig
    from jurist.run.task_options import TaskFlags, task_settings

    if cache_only and no_cache:
        raise JuristError(
            "--cache-only and --no-cache exclude each other: --cache-only answers from the cache"
        )
    if track and step is None:
        raise JuristError("--track needs --step: the training step these points belong to")
    if step is not None and not track:
        raise JuristError("--step applies to --track only")
    if track:
        from jurist.track import check_target

        for target in track:
            check_target(target)
    several = tasks is not None or suite is not None
    if bench is not None and several:
        raise JuristError("--bench names one benchmark, --tasks and --suite several: give one or the other")
    flags = TaskFlags(judge or [], baseline or [], samples or [], limit or [])
    one = task_settings([bench or "starter"], flags)[bench or "starter"] if not several else None
    if inference_only and judge_only:
        raise JuristError("--inference-only and --judge-only exclude each other")
    if fmt not in ("table", "json", "csv", "markdown"):
        raise unknown_value("--format", fmt, ("table", "json", "csv", "markdown"))
    if answers is not None and not answers.is_file():
        raise JuristError(f"--answers: {answers} is not a file")
    if data_dir is not None:
        if not data_dir.is_dir():
            raise JuristError(f"--data-dir: {data_dir} is not a folder")
        os.environ["JURIST_DATA_DIR"] = str(data_dir.resolve())  # read by benchmarks and NLTK lookups
    if sample not in ("first", "stratified"):
        raise unknown_value("--sample", sample, ("first", "stratified"))
    if method not in ("winrate", "bt"):
        raise unknown_value("--method", method, ("winrate", "bt"))
    from jurist.config import ModelStringOptions, parse_settings

    strings = ModelStringOptions(base_url, api_key, parse_settings(model_setting or []))
    if no_judge_card and (judge_card is not None or judge_gate):
        raise JuristError(
            f"--no-judge-card excludes {'--judge-card' if judge_card is not None else '--judge-gate'}"
        )
    features = tuple(_split([style_control])) if style_control else ()
    unknown = [f for f in features if f not in ("length", "markdown")]
    if unknown:
        hint = did_you_mean(unknown[0], ("length", "markdown"))
        raise JuristError(f"--style-control: unknown feature {unknown[0]!r}{hint}; choose length, markdown")
    from jurist.run import shard_choice

    if ray is not None and (shards is None or shard is not None):
        raise JuristError("--ray runs every part of the run: give --shards N (and no --shard)")
    part = shard_choice(shard, shards) if ray is None else None
    if part is not None and several:
        raise JuristError(
            "--shard runs part of one benchmark: shard each task with --bench and its own --out"
        )
    config = RunConfig(
        shard=part,
        bench=bench or "starter",
        bench_options=_bench_options(bench_option),
        models_file=models_file,
        models=_split(model),
        baseline=one.baseline if one else None,
        judges=list(one.judges) if one else [],
        model_strings=strings,
        out=out,
        limit=one.limit if one else None,
        limit_sample=sample,  # type: ignore[arg-type]  # checked above
        limit_seed=sample_seed,
        samples=one.samples if one else None,
        max_concurrency=max_concurrency,
        mode="inference-only" if inference_only else "judge-only" if judge_only else "all",
        rejudge_invalid=rejudge_invalid,
        judge_protocol=judge_protocol,
        judge_prompt=judge_prompt,
        min_interval=min_interval,
        throttle_file=throttle_file,
        n_bootstrap=bootstrap,
        seed=seed,
        ci_level=ci,
        retry=RetryPolicy(max_attempts=max_attempts, base_delay=retry_base_delay),
        progress=not no_progress,
        method=method,
        style_control=features,
        categories=tuple(_split(category)),
        length_controlled=length_controlled,
        ensemble=ensemble,
        cache=not no_cache,
        cache_path=cache_dir,
        cache_only=cache_only,
        check=not no_check,
        answers_file=answers,
        output_format=fmt,
        prices_file=prices,
        max_cost=max_cost,
        max_tokens=max_tokens,
        local=local,
        batching=batch_choice(batch, batch_poll, batch_size, batch_age, batch_attempts, batch_deadline),
        judge_card=0 if no_judge_card else judge_card,
        judge_gate=judge_gate,
        gold=gold,
        anchor=anchor,
    )
    launch = Launch(
        bench=bench or "starter", tasks=tasks, suite=suite, flags=TaskFlags(judge or [], baseline or [],
        samples or [], limit or [], config.bench_options), dry_run=dry_run, ray=ray, shards=shards,
        ray_retries=ray_retries, track=track, step=step, ci=ci, gate=gate, anchor=anchor, adaptive=adaptive,
        target_ci=target_ci, decide_vs=decide_vs, delta=delta, adaptive_round=adaptive_round,
        sample_seed=sample_seed,
    )  # fmt: skip
    raise typer.Exit(launch.run(config))


def register(app: typer.Typer) -> None:
    app.command("run")(run)
