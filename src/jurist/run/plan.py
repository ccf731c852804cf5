"""What a run is, resolved once before its first request: :class:`RunPlan`, made by :func:`resolve`.

The command line (a :class:`~jurist.run.config.RunConfig`) names a benchmark, models and options; the plan
says what they come to: the benchmark after ``--limit``, ``--answers`` and ``--baseline``, the run
directory, every model's spec, which aliases are candidates, baselines and judges, each judge's kind, the
samples, the judge preset and the prices and budget. Everything that can be wrong with the command is
found here (a one-line :class:`JuristError`), before a lock is taken or a request sent. The runner
(:mod:`jurist.run.pipeline`), ``--dry-run`` (:mod:`jurist.run.dry`) and the sweep's phases all start from
a plan; none of them derives these facts again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from jurist.benchmarks import (
    Benchmark,
    JudgePreset,
    baseline_from,
    is_benchmark_name,
    judge_preset,
    load_benchmark,
    read_answers_file,
    reference_sampling,
    with_answers_file,
)
from jurist.config import (
    ModelSpec,
    labelled,
    load_models_file,
    models_from_strings,
    string_labels,
    undefined_model,
)
from jurist.engine import EMBEDDED_ALIAS, embedded_model_spec
from jurist.errors import JuristError
from jurist.families import FamilyName, run_scoring_fields
from jurist.judging import JudgeKind, judge_kind_for, judge_kind_outcome, judge_kind_sends_own_sampling
from jurist.run.budget import BudgetPlan, resolve_budget
from jurist.run.config import Mode, RunConfig
from jurist.store import RunDir

if TYPE_CHECKING:
    from jurist.run.shards import ShardChoice, ShardPlan


def judges_against_baselines(bench: Benchmark) -> bool:
    """Whether ``bench``'s judge kind judges an answer against a baseline's (its judgments are battles)."""
    return bench.judge_kind is not None and judge_kind_outcome(bench.judge_kind) == "battle"


def battle_scoring_flags(config: RunConfig) -> list[str]:
    """The scoring options given that only battles take (``--method bt``, style or length control...)."""
    given = {
        f"--method {config.scoring.method}": config.scoring.method != "winrate",
        "--style-control": bool(config.scoring.style_control),
        "--length-controlled": config.scoring.length_controlled,
        "--category": bool(config.scoring.categories),
        "--ensemble": config.scoring.ensemble,
    }
    return [flag for flag, on in given.items() if on]


@dataclass(frozen=True)
class RunPlan:
    """Everything one run resolved before its first request; plain data, never changed once made."""

    config: RunConfig
    """What was asked: engine settings, scoring options and output format are read from it as they are."""
    bench: Benchmark
    """The benchmark after ``--limit``, ``--answers`` and ``--baseline``."""
    run_dir: RunDir
    specs: Mapping[str, ModelSpec]
    """Every alias the run may use (the embedded model included); judges with their reference's
    sampling filled in where the benchmark names one."""
    candidates: tuple[str, ...]
    baselines: tuple[str, ...]
    judges: tuple[str, ...]
    """Empty when nothing is judged (no judge kind, or ``--inference-only``)."""
    kinds: Mapping[str, JudgeKind]
    """Per judge: the judge kind that builds its prompts and reads its verdicts."""
    samples: int
    mode: Mode
    preset: JudgePreset
    """The judges measured against the benchmark's reference judge (run.json, and the notes)."""
    budget: BudgetPlan
    """Prices, what earlier runs of the directory spent, and ``--max-cost`` / ``--max-tokens``."""
    family: FamilyName
    """The scoring family of the benchmark's metrics: derived here once, written to run.json at open."""
    scoring: Mapping[str, Any]
    """The options the scores are computed with (run.json's ``scoring``: the metrics, the command line's
    settings, the benchmark's official scoring)."""
    shard: ShardPlan | None = None
    """``--shard I/N``: the part of the whole run this one is (``bench`` holds only its questions)."""

    def shipped(self, alias: str) -> bool:
        """Whether the benchmark brings ``alias``'s answers itself (nothing to generate)."""
        return alias in self.bench.shipped_answers

    def run_fields(self) -> dict[str, Any]:
        """What run.json records of the plan (its header and the run's progress are added by the run)."""
        config, bench = self.config, self.bench
        involved = list(dict.fromkeys(self.candidates + self.judges + self.baselines))
        return {
            "bench": config.bench if is_benchmark_name(config.bench) else bench.name,
            "bench_name": bench.name,
            "bench_options": config.bench_options,
            "bench_info": dict(bench.info),
            "n_questions": len(bench.questions),
            "samples": self.samples,
            "models": self.candidates,
            "baseline": self.baselines[0] if len(self.baselines) == 1 else None,
            "baselines": self.baselines,
            "judges": self.judges,
            "judge_kind": bench.judge_kind,
            "rule_suite": bench.rule_suite,
            "mode": config.mode,
            "judge_protocol": config.judge_protocol,
            "judge_prompt": str(config.judge_prompt) if config.judge_prompt else None,
            "protocols": {judge: kind.protocol_name for judge, kind in self.kinds.items()},
            "judge_preset": self.preset.record(),
            "min_interval": config.engine.min_interval,
            "max_concurrency": config.engine.max_concurrency,
            "limit": config.limit,
            "cache": config.engine.cache,
            "local": config.engine.local,  # served models ran in-process (--local), not on servers
            "score_family": self.family,
            "scoring": dict(self.scoring),
            "model_specs": {a: self.specs[a].public_dict() for a in involved if a in self.specs},
        }


def resolve(
    config: RunConfig,
    *,
    placed: Mapping[str, ModelSpec] | None = None,
    loaded: Benchmark | None = None,
) -> RunPlan:
    """The plan of ``config``'s run; a :class:`JuristError` (one line) for anything that cannot run.

    ``placed``: specs that replace the models file's entries of the same alias (a sweep's checkpoint,
    placed on its slot's GPUs). ``loaded``: ``config.bench`` as already loaded with its options (``--tasks``
    loads each task first to tell which per-task options it takes)."""
    config, labels = _labelled(config)
    bench = _benchmark(config, loaded)
    shard: ShardPlan | None = None
    if config.shard is not None:  # this process runs one part of the run (jurist merge joins them)
        from jurist.run.shards import shard_benchmark

        bench, shard = shard_benchmark(bench, config.shard)
    run_dir = RunDir(config.out or default_run_dir(bench.name, config.shard))
    if run_dir.root.exists() and not run_dir.root.is_dir():
        raise JuristError(f"--out: {run_dir.root} is a file, not a run directory")
    run_dir.refuse_older_layout()  # an older jurist's directory is never resumed nor rewritten
    used = {*config.models, *config.judges, *bench.baselines(), *bench.candidates}
    specs: dict[str, ModelSpec] = (
        load_models_file(config.models_file, aliases=used) if config.models_file else {}
    )
    specs.update(placed or {})
    # Names the command gives that are no alias: model strings (openai/NAME, vllm/NAME, a path …).
    named = [*config.models, *config.judges, *(b for b in bench.baselines() if not _shipped(bench, b))]
    specs.update(models_from_strings(named, config.model_strings, defined=specs, labels=labels))
    if bench.candidates and config.models and config.answers_file is None:
        raise JuristError(
            f"--model does not apply to {bench.name}: it judges fixed response pairs (use --judge)"
        )
    if bench.candidates and config.mode == "inference-only":
        raise JuristError(f"--inference-only does not apply to {bench.name}: there is nothing to generate")
    candidates = tuple(bench.candidates) or tuple(dict.fromkeys(config.models or [EMBEDDED_ALIAS]))
    judging = bench.judge_kind is not None and config.mode != "inference-only"
    judges = tuple(dict.fromkeys(config.judges or [EMBEDDED_ALIAS])) if judging else ()
    baselines = tuple(bench.baselines()) if judges_against_baselines(bench) else ()
    if EMBEDDED_ALIAS not in specs:  # jurist serves the embedded model itself (engine/servers/pool.py)
        specs[EMBEDDED_ALIAS] = embedded_model_spec()
    _check(config, bench, run_dir, specs, candidates, baselines, judges)
    if bench.judge_kind is not None and not judge_kind_sends_own_sampling(bench.judge_kind):
        specs.update(reference_sampling(bench.info, judges, specs))
    kinds = {judge: _kind(config, bench, specs[judge]) for judge in judges}
    budget = resolve_budget(config, specs, run_dir.root, [*candidates, *baselines], judges)
    preset = judge_preset(
        bench.info,
        {judge: specs[judge] for judge in judges},
        {judge: kind.protocol_name for judge, kind in kinds.items()},
        config.judge_prompt,
    )
    scoring = run_scoring_fields(bench, config.scoring.recorded())  # the family, derived once
    return RunPlan(
        config=config,
        bench=bench,
        run_dir=run_dir,
        specs=specs,
        candidates=candidates,
        baselines=baselines,
        judges=judges,
        kinds=kinds,
        samples=config.samples or bench.default_samples,
        mode=config.mode,
        preset=preset,
        budget=budget,
        family=scoring["score_family"],
        scoring=scoring["scoring"],
        shard=shard,
    )


def default_run_dir(bench_name: str, shard: ShardChoice | None) -> Path:
    """``runs/<bench>``; a shard's ``runs/<bench>/shards/<I>-of-<N>`` (``jurist merge`` joins them into
    ``runs/<bench>``)."""
    root = Path("runs") / bench_name
    return root if shard is None else root / "shards" / f"{shard.index}-of-{shard.count}"


def _labelled(config: RunConfig) -> tuple[RunConfig, dict[str, str]]:
    """``config`` with its model strings under their row labels (``NAME=STRING``, a string less its
    ``@URL``: :func:`jurist.config.string_labels`), and label -> full string."""
    aliases: set[str] = set()
    if config.models_file is not None:
        try:  # the aliases only; the models file is read (and its errors said) by load_models_file
            aliases = {str(key) for key in yaml.safe_load(Path(config.models_file).read_text()) or {}}
        except (OSError, ValueError, TypeError, AttributeError, RecursionError, yaml.YAMLError):
            aliases = set()
    given = [*config.models, *config.judges, *([config.baseline] if config.baseline else [])]
    labels = string_labels(given, aliases)
    if not labels:
        return config, labels
    baseline = labelled([config.baseline], labels)[0] if config.baseline else None
    models, judges = labelled(config.models, labels), labelled(config.judges, labels)
    return replace(config, models=models, judges=judges, baseline=baseline), labels


def _benchmark(config: RunConfig, loaded: Benchmark | None = None) -> Benchmark:
    """The benchmark as the run asks it: limited, with ``--answers`` as its candidate, ``--baseline``'s
    answers as its baseline; ``--judge`` or ``--baseline`` where it takes none is refused."""
    bench = loaded or load_benchmark(config.bench, config.bench_options)
    if config.judges and bench.judge_kind is None and config.mode != "inference-only":
        raise JuristError(f"--judge does not apply to {bench.name}: it is checked by rule, with no judge")
    answers = read_answers_file(config.answers_file, bench) if config.answers_file else None
    bench = bench.limited(config.limit, config.limit_sample, config.limit_seed)
    if config.answers_file is not None and answers is not None:
        if (config.samples or 1) > 1:
            raise JuristError("--answers gives one answer per prompt: --samples does not apply")
        bench = with_answers_file(bench, config.answers_file, answers, config.models)
    if config.baseline is not None:
        if bench.candidates:
            raise JuristError(f"--baseline does not apply to {bench.name}: it judges its own pairs")
        if not judges_against_baselines(bench):
            raise JuristError(f"--baseline does not apply to {bench.name}: it {_scored_alone(bench)}")
        gguf = config.baseline.lower().endswith(".gguf")  # weights to serve, not a file of answers
        bench = bench.with_baseline(config.baseline) if gguf else baseline_from(bench, config.baseline)
    scoring = battle_scoring_flags(config)
    if scoring and not judges_against_baselines(bench):
        raise JuristError(f"{', '.join(scoring)}: does not apply to {bench.name}: it {_scored_alone(bench)}")
    bench.require_installed()  # for the questions kept: IFBench's NLTK data only if one of them needs it
    return bench


def _scored_alone(bench: Benchmark) -> str:
    """How a benchmark with no battles scores an answer, in words for an error."""
    how = f"grades each answer on its own ({bench.judge_kind})" if bench.judge_kind else "is checked by rule"
    return f"{how}, with no baseline"


def _shipped(bench: Benchmark, alias: str) -> bool:
    return alias in bench.shipped_answers


def _check(
    config: RunConfig,
    bench: Benchmark,
    run_dir: RunDir,
    specs: Mapping[str, ModelSpec],
    candidates: tuple[str, ...],
    baselines: tuple[str, ...],
    judges: tuple[str, ...],
) -> None:
    """Every model the run sends requests for is defined, and every answer it judges exists or can be
    made."""

    def shipped(alias: str) -> bool:
        return _shipped(bench, alias)

    source = f"models file {config.models_file}" if config.models_file else "no --models-file"
    # Candidates need a models-file entry only to generate: --judge-only judges answers on disk.
    generating = () if config.mode == "judge-only" else candidates
    for alias in [a for a in generating if not shipped(a)] + list(judges):
        if alias not in specs:
            raise undefined_model(alias, source, specs)
    if judges and judges_against_baselines(bench) and not baselines:
        raise JuristError("--baseline is required to judge a question file (it has no baseline of its own)")
    clash = set(baselines) & set(candidates)
    if clash:
        raise JuristError(f"--baseline {sorted(clash)[0]!r} is also a candidate --model")
    if config.mode == "judge-only":
        for alias in candidates + baselines:
            path = run_dir.answers(alias)
            if not shipped(alias) and (not path.exists() or not run_dir.load_answers(alias)):
                raise JuristError(f"--judge-only: no answers for {alias!r} at {path}")
    if judges:
        for alias in baselines:
            if not (shipped(alias) or alias in specs or run_dir.answers(alias).exists()):
                raise undefined_model(alias, f"{source}, and no answers at {run_dir.answers(alias)}")


def _kind(config: RunConfig, bench: Benchmark, spec: ModelSpec) -> JudgeKind:
    assert bench.judge_kind is not None
    return judge_kind_for(
        bench.judge_kind,
        protocol=config.judge_protocol,
        default_protocol=bench.judge_protocol,
        spec=spec,
        prompt_file=config.judge_prompt,
        strong_weight=config.scoring.strong_weight,
        prompt_source=bench.judge_prompt_source,
    )


__all__ = ["RunPlan", "battle_scoring_flags", "default_run_dir", "judges_against_baselines", "resolve"]
