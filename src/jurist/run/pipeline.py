"""One run: generate (N samples) -> judge (the benchmark's judge kind) -> outcomes -> score -> write.

Every benchmark runs through here: its plan (:mod:`jurist.run.plan`) names the questions, shipped answers,
baselines, judge kinds and metrics; a :class:`Pipeline` holds what the run holds while it runs and gives
the steps that the life cycle (:mod:`jurist.run.session`) drives. Each stage reads what is already on disk
and sends requests only for what is missing, so re-running a finished run sends nothing and a crashed one
sends only what was lost.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from jurist.benchmarks import is_benchmark_name
from jurist.engine import (
    Engine,
    LocalModels,
    RequestFailed,
    ServerPool,
    counts_prompt_tokens,
    make_throttle,
    open_cache,
)
from jurist.errors import JuristError
from jurist.families import scoring_modules
from jurist.redact import mask
from jurist.report import DRAWING_MODULES, StageProgress, stderr_console
from jurist.run.ahead import import_ahead
from jurist.run.batching import batch_report, batching_of
from jurist.run.budget import BUDGET_STOPPED, RunLedger
from jurist.run.card import (
    card_modules,
    card_wanted,
    check_gate,
    gate,
    probe_judges,
    show_card,
    skipped_probe_lines,
)
from jurist.run.config import Mode, RunConfig, RunResult
from jurist.run.finish import closing_lines, missing_lines, score_finished_run
from jurist.run.generate import AnswerJob, rule_checks_ahead
from jurist.run.indexes import RunIndexes
from jurist.run.judge import Judging, answer_and_judge
from jurist.run.kept_questions import keep_questions
from jurist.run.plan import RunPlan, resolve
from jurist.run.precheck import chat_probes_due
from jurist.run.record import RunRecord
from jurist.run.session import Session, run_session
from jurist.run.shard_files import shard_line, write_shard_file
from jurist.run.shipped import start_writing_shipped
from jurist.run.work import JudgeFeed, JudgeJobs, JudgeWork, answer_work
from jurist.store import CRASHED, RunDirLock
from jurist.tokens import hold_o200k, release_o200k

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Mode", "Pipeline", "RunConfig", "RunResult", "run_pipeline", "run_plan"]


class Pipeline:
    """One run of one benchmark, from its :class:`RunPlan`: the steps a session drives (open, stages,
    finish), and what the run holds while it runs (its indexes, failures, ledger)."""

    def __init__(self, plan: RunPlan, console: Console | None = None) -> None:
        self.plan = plan
        """The run's facts: read from here, never copied."""
        self._console = console
        self.indexes = RunIndexes(plan.run_dir, plan.bench.shipped_answers)
        self.accounts = RunLedger(plan.budget)  # prices and the budget, known before the first request
        self.record = RunRecord(plan.run_dir, self.accounts)
        """run.json, the failure log and the usage log: what a session writes when the run stops."""
        self.batching = batching_of(plan)  # --batch, batch: true (jurist.run.batching); None: none
        check_gate(plan)

    @property
    def console(self) -> Console:
        """Where the run's notes, bars and tables go: stderr unless given, made where first used (after the
        endpoint check: rich is no part of the way to the first request)."""
        if self._console is None:
            self._console = stderr_console()
        return self._console

    card: dict[str, Any] | None = None
    """The judge card's document (judge_card.json), once the judge stage's probes have run."""
    resumed = False
    """Whether the directory's last run had not finished (interrupted, crashed, stopped by the budget)."""
    card_stopped = False
    """Whether the budget ran out during the card's probes (after every judgment was made)."""

    # -- set-up ---------------------------------------------------------------------------------------------
    def _say_notes(self) -> None:
        """What the benchmark left out or estimated, and where a judge departs from the benchmark's
        reference judge: said once, when the run starts (before its first request, while it can still be
        stopped); run.json keeps them (``bench_info.notes``, ``judge_preset``)."""
        lines = [str(note) for note in self.plan.bench.info.get("notes") or ()]
        for line in lines + self.plan.preset.lines(self.plan.bench.name):
            self.console.print(f"note: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)

    def _precheck(self) -> None:
        """Probe the models (aliases and model strings) that have requests to send in this run, so a dead
        endpoint, a rejected key or an unknown model fails it at once (one line, before the lock and any
        file).

        Only requests still to send count: what is on disk is never sent again, so a finished run re-run
        (or copied and re-run) with its servers down probes nothing and scores. Judges are probed
        with the answers they would judge when answers are still to come, since those are new. A model
        whose missing answers the request cache holds under what answers it now is not probed: a cached
        answer stands in only for a server that says which weights it serves (engine/cache/identity.py), so a
        server that is down is probed and refuses (:mod:`jurist.run.precheck`).
        ``--cache-only`` probes nothing: it sends nothing, and answers from the cache under what each
        server last said it serves."""
        plan, config = self.plan, self.plan.config
        if not config.engine.check or config.engine.cache_only:  # a server jurist starts is never probed
            return
        from jurist.engine import require_ready

        busy = {alias for alias, jobs in self._pending_work().items() if jobs}
        if busy:
            busy.update(plan.judges)
        elif plan.judges:
            busy.update(judge for (judge, _), jobs in self._judging_work().items() if jobs)
        due = chat_probes_due(
            plan.specs, self._pending_work(), busy, plan.judges, config.engine.cache_path, config.engine.cache
        )
        require_ready(
            plan.specs,
            [alias for alias in plan.specs if alias in due],
            ledger=self.accounts.ledger,
            remedies="pass --no-check to skip, or --cache-only to answer from the request cache alone",
        )

    # -- the life cycle's steps (jurist.run.session) -------------------------------------------------------
    def open_run(self, lock: RunDirLock) -> None:
        """Everything before the first request: the endpoints probed, the lock taken, run.json written
        as running."""
        plan, run_dir = self.plan, self.plan.run_dir
        if plan.shard is not None:  # the first line: which part of the run this process is
            self.console.print(shard_line(plan), markup=False, highlight=False, soft_wrap=True)
        if any(self._pending_work().values()):  # each answer's style metadata counts its tokens
            hold_o200k()  # built at the first answer, kept until the answers are written
            self._counting = True
        self._precheck()
        if not lock.held:
            lock.acquire()  # a new directory: made only now, so a refused check leaves nothing behind
        self.record.open_logs()
        fields = plan.run_fields()
        fields |= self._note_a_crashed_run(lock)
        if plan.config.judge_prompt is not None:  # kept, so the run can be audited or re-judged
            fields["judge_prompt_kept"] = run_dir.keep_file(plan.config.judge_prompt, "prompts")
        if not is_benchmark_name(plan.config.bench):  # a question file: its path and questions kept
            fields |= keep_questions(run_dir, plan.config.bench, plan.bench.questions)
        if plan.shard is not None:  # the whole run's facts and owners, for jurist merge
            fields["shard"] = write_shard_file(run_dir, plan.shard, fields)
        self.record.write_opened(fields)
        self._say_notes()

    def _note_a_crashed_run(self, lock: RunDirLock) -> dict[str, Any]:
        """The directory's last run died while running (its run.json says so, and this run now holds the
        lock, so its holder is gone): said in one line, and kept in run.json as ``resumed`` (returned)."""
        status, run_id = self.plan.run_dir.recorded_status(holding_lock=lock.held)
        self.resumed = status not in (None, "finished")  # interrupted, crashed or stopped by the budget
        if status != CRASHED:
            return {}
        self.console.print(
            f"note: the last run in {self.plan.run_dir.root} (run {run_id}) stopped without finishing "
            "(killed, or the disk was full); resuming from what it saved",
            style="yellow",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return {"resumed": {"run_id": run_id, "status": CRASHED}}

    def new_engine(self, shares: Engine | None = None) -> Engine:
        """This run's engine, or a sibling of another run's (``shares``), sharing its limits."""
        if shares is not None:
            return shares.sibling(dict(self.plan.specs), ledger=self.accounts.ledger, batching=self.batching)
        notify = lambda text: self.console.print(text, style="dim", markup=False, highlight=False)  # noqa: E731
        config = self.plan.config
        return Engine(
            dict(self.plan.specs),
            max_concurrency=config.engine.max_concurrency,
            policy=config.engine.retry,
            throttle=make_throttle(config.engine.min_interval, config.engine.throttle_file),
            cache=open_cache(config.engine.cache_path, enabled=config.engine.cache),
            pool=ServerPool(notify=notify, log_dir=self.plan.run_dir.root / "logs"),
            ledger=self.accounts.ledger,
            local=LocalModels(notify=notify) if config.engine.local else None,
            cache_only=config.engine.cache_only,
            batching=self.batching,
        )

    def finish(self, engine: Engine) -> RunResult:
        """Score what is on disk, write run.json as finished, say what is still missing."""
        failures, ledger_fields = self.record.failures, self.accounts.fields()
        # the budget ran out: all is saved, scored once a run completes it (unless only the card's probes
        # were left: the run's judgments are whole, the card says which probes the budget refused)
        stopped = self.accounts.stopped and not self.card_stopped
        outcome = score_finished_run(
            self.plan, self.judge_work(), self.record.opened, self.console, partial=stopped
        )
        self.indexes.release()  # scored: nothing reads them again
        exit_code = BUDGET_STOPPED if stopped else 1 if failures.count or not outcome.scored else 0
        if self.card is not None:  # under the leaderboard; --judge-gate may end the run with its own code
            show_card(self.card, self.plan, self.console)
            exit_code = gate(self.card, self.plan, exit_code, self.console)
        usage = engine.stats.summary()
        summary = {
            "exit_code": exit_code,
            "failures": failures.count,
            "still_failing": failures.current,
            "scored": outcome.scored,
            "usage": usage,  # this run's requests
            "usage_total": self.accounts.usage_total(usage),  # every run in the directory
        }
        self.record.ended("stopped-by-budget" if stopped else "finished", {**ledger_fields, **summary})
        self.accounts.report(self.console)
        for line in [*batch_report(engine, self.batching), *engine.cache_report()]:
            self.console.print(line, style="dim", markup=False, highlight=False, soft_wrap=True)
        for line in missing_lines(failures.current, self.plan.run_dir.failures):
            self.console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
        ledger = ledger_fields["ledger"]
        ends = closing_lines(
            self.plan.run_dir.root,
            ledger,
            outcome.documents,
            resumed=self.resumed,
            stopped=stopped,
            missing=len(failures.current),
        )
        if self.card is not None:  # the probes a small run's tenth left out, and how to ask for them
            ends[1:1] = skipped_probe_lines(self.card, self.plan)
        for line in ends:
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)
        return RunResult(
            exit_code, outcome.rows, failures.count, engine.stats.requests, self.plan.run_dir.root
        )

    # -- the stages -----------------------------------------------------------------------------------------
    overlap_stages = True
    """Judge each answer as soon as it and its baseline's exist; False: only once every answer is in."""

    async def stages(self, engine: Engine, progress: StageProgress) -> None:
        """Answer what is missing and judge what is missing, both at once (:func:`answer_and_judge`), with
        their bars in ``progress``."""
        # A baseline's shipped answers are written where they are judged against; answers only, they would
        # cost the first requests ~0.1 s of GIL (8 MB of JSON for Arena-Hard v2.0) and serve nothing.
        judged = () if self.plan.mode == "inference-only" else self.plan.baselines
        shipped = asyncio.ensure_future(self._write_shipped([*self.plan.candidates, *judged]))
        work, self._work = self._pending_work(), None
        files = {alias: self.plan.run_dir.answers(alias) for alias in work}
        judging = Judging(self.plan.judges, self._judge_feed, self.plan.run_dir) if self.plan.judges else None
        checked = rule_checks_ahead(self.plan.bench.rule_suite, self.plan.mode)
        answers_only = self.plan.mode == "inference-only"
        if not self.plan.judges and not answers_only:  # a rule-checked run: its checks come with answering
            self._import_closing()
        await answer_and_judge(
            engine,
            work,
            files,
            judging,
            shipped,
            self.record.failures,
            progress,
            overlap=self.overlap_stages,
            checked=checked,
            answered=self._answered,
            all_asked=self._import_closing if answers_only else None,  # its last replies on their way
        )
        if card_wanted(self.plan) and not engine.ledger.stopped:  # the judge card (jurist.audit)
            self.card = await probe_judges(engine, self.plan, self.judge_work())
            self.card_stopped = engine.ledger.stopped  # the budget ran out on probes: the judging is whole

    _counting = False
    """Whether this run asked for the o200k tables (:func:`hold_o200k`) and has not let them go."""

    def _answered(self) -> None:
        """Every answer written: the o200k tables go, their ~17 MB not held under the judging and the
        scoring that follow; they stay where a judge counts its prompts with them, or where nothing
        follows (a run that only answers ends here). Then the closing modules are imported, so that
        numpy and the scoring never sit beside the tables."""
        judges = self.plan.judges
        if self._counting:
            self._counting = False
            release_o200k(
                let_go=bool(judges) and not any(counts_prompt_tokens(self.plan.specs[j]) for j in judges)
            )
        if judges:
            self._import_closing()

    _closing_asked = False
    """Whether this run has asked for its closing modules (:meth:`_import_closing`: once at most)."""

    def _import_closing(self) -> None:
        """The modules the scoring, the card and the closing report import, imported in a thread while
        the run waits on its replies (:mod:`jurist.run.ahead`); an answers-only run scores nothing, and
        draws only its ledger."""
        if self._closing_asked:
            return
        self._closing_asked = True
        plan = self.plan
        if plan.mode == "inference-only":
            import_ahead(lambda: DRAWING_MODULES)
            return
        import_ahead(lambda: [*scoring_modules(plan.family), *card_modules(plan), *DRAWING_MODULES])

    async def _write_shipped(self, aliases: list[str]) -> None:
        """The benchmark's own answers written (in a thread), their files' indexes kept for the judge
        stage."""
        self.indexes.put_answers(await start_writing_shipped(self.plan.run_dir, self.plan.bench, aliases))

    _work: dict[str, list[AnswerJob]] | None = None

    def _pending_work(self) -> dict[str, list[AnswerJob]]:
        """The answers still missing (:func:`answer_work`), read once for the set-up and the answer stage
        (nothing but this run writes the directory in between: it holds the lock)."""
        if self._work is None:
            self._work = answer_work(self.plan, self.indexes)
        return self._work

    def judge_work(self) -> JudgeWork:
        """Which answers each judge judges, and the stored judgments of the current ones, read through the
        run's indexes: no answer or judgment file is parsed twice in a run."""
        return JudgeWork(self.plan, self.indexes)

    def _judge_feed(self) -> JudgeFeed:
        """The judge stage's work, followed as answers are written."""
        return JudgeFeed(self.judge_work(), self.plan.config.rejudge_invalid)

    def _judging_work(self) -> dict[tuple[str, str], JudgeJobs]:
        """Per (judge, model): answers with no judgment yet (or an invalid one, with --rejudge-invalid)."""
        return self.judge_work().todo(self.plan.config.rejudge_invalid)


def run_plan(plan: RunPlan, console: Console | None = None) -> RunResult:
    """The run ``plan`` describes, alone in its session, holding the run directory's lock: one writer
    per directory, whatever else runs."""
    pipeline = Pipeline(plan, console)
    return run_session(Session({"": pipeline}), lambda: pipeline.console, plan.config.engine.progress)[""]


def run_pipeline(config: RunConfig, console: Console | None = None) -> RunResult:
    """``jurist run``: ``config``'s run resolved (:func:`resolve`), run, scored."""
    try:
        return run_plan(resolve(config), console)
    except RequestFailed as exc:  # pragma: no cover - every stage catches these per item
        raise JuristError(mask(str(exc))) from None
