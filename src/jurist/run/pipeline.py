"""THE runner: generate (N samples) -> judge (the benchmark's judge kind) -> outcomes -> score -> write.

Every benchmark runs through here: it names its questions, shipped answers, baselines, judge kind and
metrics, and this class does the rest. Each stage reads what is already on disk and sends requests only
for what is missing, so re-running a finished run sends nothing and a crashed one sends only what was lost.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.benchmarks.answers_file import read_answers_file, with_answers_file
from jurist.benchmarks.base import Benchmark
from jurist.benchmarks.baseline_file import baseline_from
from jurist.benchmarks.presets import JudgePreset, judge_preset, reference_sampling
from jurist.benchmarks.registry import benchmark_names, load_benchmark
from jurist.config import ModelSpec, load_models_file
from jurist.engine.cache import open_cache
from jurist.engine.client import Engine, RequestFailed
from jurist.engine.embedded import EMBEDDED_ALIAS, embedded_model_spec
from jurist.engine.local import LocalModels
from jurist.engine.pool import ServerPool
from jurist.engine.throttle import make_throttle
from jurist.errors import JuristError
from jurist.run.interrupts import FORCED_STOP, GracefulInterrupt, run_interruptibly
from jurist.run.judge import Judging, answer_and_judge
from jurist.run.work import JudgeFeed, JudgeJobs, JudgeWork
from jurist.judging.base import JudgeKind
from jurist.judging.kinds import judge_kind_for
from jurist.run.budget import BUDGET_STOPPED, RunLedger
from jurist.redact import mask
from jurist.report.progress import StageProgress, display_for
from jurist.run.outcomes import Outcome, RunView
from jurist.run.config import Mode, RunConfig, RunResult
from jurist.run.finish import score_finished_run
from jurist.scoring.family import run_scoring_fields
from jurist.run.shipped import start_writing_shipped
from jurist.run.generate import AnswerJob, FailureLog
from jurist.store.line_index import AnswerIndex, JudgmentIndex
from jurist.store.lock import RunDirLock
from jurist.store.run_dir import RunDir
from jurist.store.usage import add_usage, previous_usage

__all__ = ["Mode", "Pipeline", "RunConfig", "RunResult", "run_pipeline"]


class Pipeline:
    """One run of one benchmark: resolves models, runs the stages that have work, scores, writes."""

    def __init__(self, config: RunConfig, console: Console | None = None) -> None:
        self.config = config
        self.console = console or Console(stderr=True)
        bench = load_benchmark(config.bench, config.bench_options)
        answers = read_answers_file(config.answers_file, bench) if config.answers_file else None
        bench = bench.limited(config.limit, config.limit_sample, config.limit_seed)
        if config.answers_file is not None and answers is not None:
            if (config.samples or 1) > 1:
                raise JuristError("--answers gives one answer per prompt: --samples does not apply")
            bench = with_answers_file(bench, config.answers_file, answers, config.models)
        if config.baseline is not None:
            if bench.candidates:
                raise JuristError(f"--baseline does not apply to {bench.name}: it judges its own pairs")
            bench = baseline_from(bench, config.baseline)
        self.bench: Benchmark = bench
        self.run_dir = RunDir(config.out or Path("runs") / bench.name)
        if self.run_dir.root.exists() and not self.run_dir.root.is_dir():
            raise JuristError(f"--out: {self.run_dir.root} is a file, not a run directory")
        used = {*config.models, *config.judges, *bench.baselines(), *bench.candidates}
        self.specs: dict[str, ModelSpec] = (
            load_models_file(config.models_file, aliases=used) if config.models_file else {}
        )
        if bench.candidates and config.models and config.answers_file is None:
            raise JuristError(
                f"--model does not apply to {bench.name}: it judges fixed response pairs (use --judge)"
            )
        if bench.candidates and config.mode == "inference-only":
            raise JuristError(
                f"--inference-only does not apply to {bench.name}: there is nothing to generate"
            )
        self.candidates = list(bench.candidates) or list(dict.fromkeys(config.models or [EMBEDDED_ALIAS]))
        self.samples = config.samples or bench.default_samples
        judging = bench.judge_kind is not None and config.mode != "inference-only"
        self.judges = list(dict.fromkeys(config.judges or [EMBEDDED_ALIAS])) if judging else []
        self.baselines = bench.baselines() if bench.judge_kind in ("pairwise", "preference") else []
        self.run_id = uuid.uuid4().hex[:12]
        self._read_indexes: dict[str, AnswerIndex] = {}  # answer indexes built so far (judge_work)
        if EMBEDDED_ALIAS not in self.specs:  # jurist serves the embedded model itself (engine/pool.py)
            self.specs[EMBEDDED_ALIAS] = embedded_model_spec()
        self._validate()
        if bench.judge_kind != "rubric":  # the rubric kind sends its grader's reference settings itself
            self.specs.update(reference_sampling(bench.info, self.judges, self.specs))
        self.kinds: dict[str, JudgeKind] = {j: self._kind(j) for j in self.judges}
        self.accounts = RunLedger(  # prices and the budget, known before the first request (a probe)
            config, self.specs, self.run_dir.run_json, [*self.candidates, *self.baselines], self.judges
        )
        self.preset: JudgePreset = judge_preset(
            bench.info,
            {j: self.specs[j] for j in self.judges},
            {j: kind.protocol_name for j, kind in self.kinds.items()},
            config.judge_prompt,
        )

    # -- set-up ---------------------------------------------------------------------------------------------
    def _shipped(self, alias: str) -> bool:
        return alias in self.bench.shipped_answers

    def _validate(self) -> None:
        source = f"models file {self.config.models_file}" if self.config.models_file else "no --models-file"
        # Candidates need a models-file entry only to generate: --judge-only judges answers on disk.
        generating = [] if self.config.mode == "judge-only" else self.candidates
        for alias in [a for a in generating if not self._shipped(a)] + self.judges:
            if alias not in self.specs:
                raise JuristError(f"model {alias!r} is not defined ({source})")
        if self.judges and self.bench.judge_kind in ("pairwise", "preference") and not self.baselines:
            raise JuristError(
                "--baseline is required to judge a question file (it has no baseline of its own)"
            )
        clash = set(self.baselines) & set(self.candidates)
        if clash:
            raise JuristError(f"--baseline {sorted(clash)[0]!r} is also a candidate --model")
        if self.config.mode == "judge-only":
            for alias in self.candidates + self.baselines:
                path = self.run_dir.answers(alias)
                if not self._shipped(alias) and (not path.exists() or not self.run_dir.load_answers(alias)):
                    raise JuristError(f"--judge-only: no answers for {alias!r} at {path}")
        if self.judges:
            for alias in self.baselines:
                if not (self._shipped(alias) or alias in self.specs or self.run_dir.answers(alias).exists()):
                    raise JuristError(
                        f"baseline {alias!r} has no answers at {self.run_dir.answers(alias)} "
                        "and is not in the models file"
                    )

    def _say_notes(self) -> None:
        """What the benchmark left out or estimated, and where a judge departs from the benchmark's
        reference judge: said when the run starts and again under its results."""
        lines = [str(note) for note in self.bench.info.get("notes") or ()]
        for line in lines + self.preset.lines(self.bench.name):
            self.console.print(f"note: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)

    def _kind(self, judge_alias: str) -> JudgeKind:
        assert self.bench.judge_kind is not None
        return judge_kind_for(
            self.bench.judge_kind,
            protocol=self.config.judge_protocol,
            default_protocol=self.bench.judge_protocol,
            spec=self.specs[judge_alias],
            prompt_file=self.config.judge_prompt,
            strong_weight=self.config.strong_weight,
        )

    def _precheck(self) -> None:
        """Probe the models-file aliases that have work in this run, so a dead endpoint fails it at once."""
        if not self.config.check or self.config.models_file is None:
            return
        from jurist.engine.check import require_ready

        busy = {alias for alias, jobs in self._pending_work().items() if jobs}
        if busy:
            busy.update(self.judges)
        elif self.judges:
            busy.update(judge for (judge, _), jobs in self._judging_work().items() if jobs)
        require_ready(
            self.specs, [alias for alias in self.specs if alias in busy], ledger=self.accounts.ledger
        )

    def _run_fields(self) -> dict[str, Any]:
        config = self.config
        involved = list(dict.fromkeys(self.candidates + self.judges + self.baselines))
        return {
            "bench": config.bench if config.bench in benchmark_names() else self.bench.name,
            "bench_name": self.bench.name,
            "bench_options": config.bench_options,
            "bench_info": dict(self.bench.info),
            "n_questions": len(self.bench.questions),
            "samples": self.samples,
            "models": self.candidates,
            "baseline": self.baselines[0] if len(self.baselines) == 1 else None,
            "baselines": self.baselines,
            "judges": self.judges,
            "judge_kind": self.bench.judge_kind,
            "rule_suite": self.bench.rule_suite,
            "mode": config.mode,
            "judge_protocol": config.judge_protocol,
            "judge_prompt": str(config.judge_prompt) if config.judge_prompt else None,
            "protocols": {judge: kind.protocol_name for judge, kind in self.kinds.items()},
            "judge_preset": self.preset.record(),
            "min_interval": config.min_interval,
            "max_concurrency": config.max_concurrency,
            "limit": config.limit,
            "cache": config.cache,
            "local": config.local,  # served models ran in-process (--local), not on servers
            **run_scoring_fields(self.bench, config.scoring_settings()),  # score_family and scoring
            "model_specs": {a: self.specs[a].public_dict() for a in involved if a in self.specs},
        }

    # -- the run --------------------------------------------------------------------------------------------
    def run(self) -> RunResult:
        """The run, holding the run directory's lock: one writer per directory, whatever else runs."""
        lock = RunDirLock(self.run_dir.root)
        if self.run_dir.root.is_dir():
            lock.acquire()  # before anything is read for work or written
        try:
            return self._run(lock)
        finally:
            lock.release()

    def _run(self, lock: RunDirLock) -> RunResult:
        self.open_run(lock)
        engine = self.new_engine()
        try:
            self._run_loop(engine)
        except KeyboardInterrupt:
            self.interrupted(engine)
            raise
        finally:
            self.close_engine(engine)
        return self.finish(engine)

    def open_run(self, lock: RunDirLock) -> None:
        """Everything before the first request: older judgments adopted, the endpoints probed, the lock
        taken, run.json written as running."""
        if self.run_dir.root.is_dir():  # judgments an older jurist stored under other names and keys
            from jurist.interop.judgebench import adopt_schema1_judgments

            for judge_alias, kind in self.kinds.items():
                if adopt_schema1_judgments(self.run_dir, judge_alias, kind, self.bench):
                    note = f"adopted {judge_alias}'s judgments from an older run"
                    self.console.print(note, style="dim", markup=False, highlight=False)
        self._precheck()
        if not lock.held:
            lock.acquire()  # a new directory: made only now, so a refused check leaves nothing behind
        self.failures = FailureLog(self.run_dir.failures, self.run_id)
        self._earlier_usage = previous_usage(self.run_dir.run_json)  # before run.json is rewritten below
        self._fields = self._run_fields()
        if self.config.judge_prompt is not None:  # kept, so the run can be audited or re-judged
            self._fields["judge_prompt_kept"] = self.run_dir.keep_file(self.config.judge_prompt, "prompts")
        # the directory's ledger so far, so that a run killed now does not lose what earlier runs spent
        self.run_dir.write_run_json(self.run_id, "running", {**self._fields, **self.accounts.fields()})
        self._say_notes()

    def new_engine(self, shares: Engine | None = None) -> Engine:
        """This run's engine, or (``--tasks``) a sibling of another task's, sharing its limits."""
        if shares is not None:
            return shares.sibling(self.specs, ledger=self.accounts.ledger)
        notify = lambda text: self.console.print(text, style="dim", markup=False, highlight=False)  # noqa: E731
        return Engine(
            self.specs,
            max_concurrency=self.config.max_concurrency,
            policy=self.config.retry,
            throttle=make_throttle(self.config.min_interval, self.config.throttle_file),
            cache=open_cache(self.config.cache_path, enabled=self.config.cache),
            pool=ServerPool(notify=notify, log_dir=self.run_dir.root / "logs"),
            ledger=self.accounts.ledger,
            local=LocalModels(notify=notify) if self.config.local else None,
        )

    def interrupted(self, engine: Engine) -> None:
        self.run_dir.save_indexes()  # what they cover is on disk whole: the next run parses only the rest
        usage = {"failures": self.failures.count, "usage": engine.stats.summary(), **self.accounts.fields()}
        self.run_dir.write_run_json(self.run_id, "interrupted", {**self._fields, **usage})

    def close_engine(self, engine: Engine) -> None:
        self.failures.close()
        engine.close_servers()
        if engine.cache is not None and engine.owns_shared():
            engine.cache.close()

    def _view(self) -> RunView:
        return RunView(
            self.bench, self.config, self.run_dir, self.judges, self.candidates, self.baselines, self.kinds
        )

    def finish(self, engine: Engine) -> RunResult:
        """Score what is on disk, write run.json as finished, say what is still missing."""
        failures, fields = self.failures, {**self._fields, **self.accounts.fields()}
        stopped = self.accounts.stopped  # the budget ran out: all is saved, scored once a run completes it
        outcome = (
            Outcome([], scored=False)
            if stopped
            else score_finished_run(self._view(), self.judge_work(), self.samples, self.console)
        )
        self.run_dir.save_indexes()
        exit_code = BUDGET_STOPPED if stopped else 1 if failures.count or not outcome.scored else 0
        usage = engine.stats.summary()
        summary = {
            "exit_code": exit_code,
            "failures": failures.count,
            "still_failing": failures.current,
            "scored": outcome.scored,
            "usage": usage,  # this run's requests
            "usage_total": add_usage(self._earlier_usage, usage),  # every run in the directory
        }
        self.run_dir.write_run_json(
            self.run_id, "stopped-by-budget" if stopped else "finished", {**fields, **summary}
        )
        self.accounts.report(self.console)
        self._say_notes()
        if failures.count:
            self.console.print(
                f"{failures.count} request(s) failed after retries and are still missing (run.json "
                f"'still_failing'; every attempt is kept in {self.run_dir.failures}). Run the same command "
                "again to retry them.",
                style="yellow",
                markup=False,
                highlight=False,
            )
        return RunResult(exit_code, outcome.rows, failures.count, engine.stats.requests, self.run_dir.root)

    def _run_loop(self, engine: Engine) -> None:
        """The stages in one event loop; Ctrl-C / SIGTERM cancel them cleanly, or force an exit if stuck."""

        def force_stop() -> None:
            engine.close_servers()
            if engine.cache is not None:
                engine.cache.close()
            self.console.print(FORCED_STOP, style="yellow", markup=False, highlight=False)

        async def stages(interrupt: GracefulInterrupt) -> None:
            interrupt.attach()
            try:
                await self.stages(engine)
            finally:
                await engine.aclose()

        run_interruptibly(stages, force_stop)

    overlap_stages = True
    """Judge each answer as soon as it and its baseline's exist; False: only once every answer is in."""
    _feed_indexes: dict[str, AnswerIndex] | None = None
    _feed_judgments: dict[tuple[str, str], JudgmentIndex] = {}  # noqa: RUF012 (replaced, never mutated)
    _feed: JudgeFeed | None = None

    async def stages(self, engine: Engine, progress: StageProgress | None = None) -> None:
        """Answer what is missing and judge what is missing, both at once (:func:`answer_and_judge`);
        ``progress``: a display shared with other tasks (else the run has its own)."""
        # A baseline's shipped answers are written where they are judged against; answers only, they would
        # cost the first requests ~0.1 s of GIL (8 MB of JSON for Arena-Hard v2.0) and serve nothing.
        judged = [] if self.config.mode == "inference-only" else self.baselines
        shipped = asyncio.ensure_future(self._write_shipped(self.candidates + judged))
        work, self._work = self._pending_work(), None
        files = {alias: self.run_dir.answers(alias) for alias in work}
        judging = Judging(self.judges, self._judge_feed, self.run_dir) if self.judges else None
        with display_for(self.console, self.config.progress, progress) as bars:
            await answer_and_judge(
                engine, work, files, judging, shipped, self.failures, bars, overlap=self.overlap_stages
            )

    async def _write_shipped(self, aliases: list[str]) -> None:
        """The benchmark's own answers written (in a thread), their files' indexes kept for the judge
        stage."""
        self._read_indexes.update(await start_writing_shipped(self.run_dir, self.bench, aliases))

    _work: dict[str, list[AnswerJob]] | None = None

    def _pending_work(self) -> dict[str, list[AnswerJob]]:
        """:meth:`_generation_work`, read once for the set-up and the answer stage (nothing but this run
        writes the directory in between: it holds the lock)."""
        if self._work is None:
            self._work = self._generation_work()
        return self._work

    def _generation_work(self) -> dict[str, list[AnswerJob]]:
        """Per model alias, the (question, sample) answers still missing; baselines need sample 0 only."""
        if self.config.mode == "judge-only":
            return {}
        wanted: dict[str, int] = {
            alias: self.samples for alias in self.candidates if not self._shipped(alias)
        }
        # Inference-only generates the baselines too, so a later --judge-only has every answer it needs.
        if self.judges or self.config.mode == "inference-only":
            for alias in self.baselines:
                if not self._shipped(alias) and alias in self.specs:
                    wanted.setdefault(alias, 1)
        work: dict[str, list[AnswerJob]] = {}
        for alias, samples in wanted.items():
            existing = self._read_indexes[alias] = self.run_dir.answer_index(alias)
            jobs = (
                AnswerJob(q, tuple(s for s in range(samples) if (q.uid, s) not in existing))
                for q in self.bench.questions
            )
            work[alias] = [job for job in jobs if job.samples]
        return work

    def judge_work(self) -> JudgeWork:
        """Which answers each judge judges, and the stored judgments of the current ones, read through the
        answer indexes this run built already (the answer stage's, the judge stage's once it left them):
        no answer file is read whole twice (at 50k questions each read cost ~0.6 s)."""
        built = {**self._read_indexes, **(self._feed_indexes or {})}
        judgments, self._feed_indexes, self._feed_judgments = self._feed_judgments, None, {}
        # The feed is let go (its bookkeeping is not needed to score), what its pass saw is kept.
        judged = self._feed.judged_digest() if self._feed is not None else None
        self._feed = None
        names = (self.judges, self.candidates, self.baselines)
        return JudgeWork(self.bench, self.run_dir, *names, self.samples, self.kinds, built, judgments, judged)

    def _judge_feed(self) -> JudgeFeed:
        """The judge stage's work, followed as answers are written."""
        feed = JudgeFeed(self.judge_work(), self.config.rejudge_invalid)
        self._feed_indexes, self._feed_judgments, self._feed = feed.indexes(), feed.stored, feed
        return feed

    def _judging_work(self) -> dict[tuple[str, str], JudgeJobs]:
        """Per (judge, model): answers with no judgment yet (or an invalid one, with --rejudge-invalid)."""
        return self.judge_work().todo(self.config.rejudge_invalid)


def run_pipeline(config: RunConfig, console: Console | None = None) -> RunResult:
    try:
        return Pipeline(config, console).run()
    except RequestFailed as exc:  # pragma: no cover - every stage catches these per item
        raise JuristError(mask(str(exc))) from None
