"""generate -> judge -> battles -> score, resumable at every step.

Each stage reads what is already on disk and sends requests only for what is missing, so re-running a
finished run sends nothing and a crashed one sends only what was lost. Results are appended the moment
they arrive; transport failures go to ``failures.jsonl`` and are retried by the next run.
"""

from __future__ import annotations

import asyncio
import platform
import sys
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from jurist import __version__
from jurist.benchmarks.base import Benchmark, Question
from jurist.benchmarks.question_file import load_question_file
from jurist.benchmarks.starter import NAME as STARTER_NAME
from jurist.benchmarks.starter import load_starter
from jurist.config import ModelSpec, load_models_file
from jurist.engine.client import Engine, ModelClient, RequestFailed
from jurist.engine.local import EMBEDDED_ALIAS, LlamaCppServer, embedded_gguf_path, embedded_model_spec
from jurist.engine.retry import RetryPolicy
from jurist.engine.throttle import make_throttle
from jurist.errors import JuristError
from jurist.judging.pairwise import battles_from_judgment, judge_question, judgment_key, text_hash
from jurist.judging.protocols import JudgeProtocol, protocol_for
from jurist.redact import mask
from jurist.report.progress import StageProgress
from jurist.report.table import print_leaderboard
from jurist.scoring import ratings_document, win_rate_leaderboard
from jurist.store.jsonl import JsonlAppender, write_json_atomic
from jurist.store.run_dir import RunDir
from jurist.style import answer_style_metadata

Mode = Literal["all", "inference-only", "judge-only"]


@dataclass
class RunConfig:
    """Everything ``jurist run`` needs, resolved from the command line."""

    bench: str = STARTER_NAME
    models_file: Path | None = None
    models: list[str] = field(default_factory=list)
    baseline: str | None = None
    judges: list[str] = field(default_factory=list)
    out: Path | None = None
    limit: int | None = None
    max_concurrency: int = 64
    mode: Mode = "all"
    rejudge_invalid: bool = False
    judge_protocol: str | None = None
    judge_prompt: Path | None = None  # a file of templates replacing the protocol's prompts
    min_interval: float = 0.0  # seconds between request starts, shared by processes naming throttle_file
    throttle_file: Path | None = None  # default: ~/.cache/jurist/throttle.lock
    n_bootstrap: int = 100
    seed: int = 0
    ci_level: float = 0.90
    strong_weight: int = 3
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    progress: bool = True
    split: str | None = None  # JudgeBench: "gpt", "claude" or a pairs .jsonl
    check: bool = True  # probe the models-file endpoints a run will use before it starts


@dataclass
class RunResult:
    exit_code: int
    leaderboard: list[dict[str, Any]]
    failures: int
    requests: int
    run_dir: Path


def load_benchmark(bench: str) -> Benchmark:
    if bench == STARTER_NAME:
        return load_starter()
    path = Path(bench)
    if path.exists():
        return load_question_file(path)
    raise JuristError(
        f"--bench: {bench!r} is neither a known benchmark (starter) nor an existing question file"
    )


def run_header(run_id: str, status: str) -> dict[str, Any]:
    """The fields every ``run.json`` starts with: which run, how far it got, and what ran it."""
    return {
        "run_id": run_id,
        "status": status,
        "jurist_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def engine_for(config: RunConfig, specs: dict[str, ModelSpec]) -> Engine:
    """The engine of one run: its global limit, retry policy and (optional) cross-process throttle."""
    return Engine(
        specs,
        max_concurrency=config.max_concurrency,
        policy=config.retry,
        throttle=make_throttle(config.min_interval, config.throttle_file),
    )


class FailureLog:
    """Appends failed requests to ``failures.jsonl`` (secrets masked) and counts them."""

    def __init__(self, path: Path, run_id: str) -> None:
        self._appender: JsonlAppender | None = None
        self._path = path
        self.run_id = run_id
        self.count = 0

    def record(self, stage: str, exc: RequestFailed, **where: str) -> None:
        if self._appender is None:
            self._appender = JsonlAppender(self._path)
        self.count += 1
        self._appender.append(
            {"run_id": self.run_id, "stage": stage, **where, **exc.record(), "tstamp": time.time()}
        )

    def close(self) -> None:
        if self._appender is not None:
            self._appender.close()


def start_embedded_server(stack: ExitStack, console: Console) -> LlamaCppServer:
    """Start the embedded llama.cpp server; ``stack`` stops it however the run ends."""
    console.print("[dim]starting the embedded llama.cpp server (SmolLM2-135M-Instruct)...[/dim]")
    server = LlamaCppServer(embedded_gguf_path())
    stack.enter_context(server)
    return server


class Pipeline:
    """One run: resolves models, starts the embedded server only if a stage has work for it, runs stages."""

    def __init__(self, config: RunConfig, console: Console | None = None) -> None:
        self.config = config
        self.console = console or Console(stderr=True)
        self.bench = load_benchmark(config.bench).limited(config.limit)
        self.run_dir = RunDir(config.out or Path("runs") / self.bench.name)
        self.specs: dict[str, ModelSpec] = load_models_file(config.models_file) if config.models_file else {}
        self.candidates = config.models or [EMBEDDED_ALIAS]
        self.judges = [] if config.mode == "inference-only" else (config.judges or [EMBEDDED_ALIAS])
        self.baseline = config.baseline or self.bench.baseline
        self.run_id = uuid.uuid4().hex[:12]
        # The embedded alias is served by jurist itself unless a models file defines it.
        self._embedded = set() if EMBEDDED_ALIAS in self.specs else {EMBEDDED_ALIAS}
        self._server: LlamaCppServer | None = None
        self._validate()

    # -- set-up ---------------------------------------------------------------------------------------------
    def _is_undefined(self, alias: str) -> bool:
        return alias not in self.specs and alias not in self._embedded

    def _validate(self) -> None:
        for alias in self.candidates + self.judges:
            if self._is_undefined(alias):
                source = (
                    f"models file {self.config.models_file}"
                    if self.config.models_file
                    else "no --models-file"
                )
                raise JuristError(f"model {alias!r} is not defined ({source})")
        if self.judges and self.baseline is None:
            raise JuristError(
                "--baseline is required to judge a question file (it has no baseline of its own)"
            )
        if self.baseline in self.candidates:
            raise JuristError(f"--baseline {self.baseline!r} is also a candidate --model")
        if self.config.mode == "judge-only":
            for alias in self.candidates + ([self.baseline] if self.baseline else []):
                if not self.run_dir.answers(alias).exists():
                    raise JuristError(
                        f"--judge-only: no answers for {alias!r} at {self.run_dir.answers(alias)}"
                    )
        if self.judges:
            for judge in self.judges:
                try:
                    self._protocol(judge)
                except KeyError:
                    raise JuristError(
                        f"--judge-protocol: unknown protocol {self.config.judge_protocol!r}"
                    ) from None

    def _protocol(self, judge: str) -> JudgeProtocol:
        return protocol_for(self.config.judge_protocol, self._spec(judge), self.config.judge_prompt)

    def _spec(self, alias: str) -> ModelSpec:
        if alias not in self.specs and alias in self._embedded:
            self.specs[alias] = embedded_model_spec()
        return self.specs[alias]

    def _ensure_server(self, aliases: set[str], stack: ExitStack) -> None:
        """Start the embedded llama.cpp server the first time a stage has work for it."""
        if not aliases & self._embedded or self._server is not None:
            return
        self._server = start_embedded_server(stack, self.console)
        self.specs[EMBEDDED_ALIAS] = embedded_model_spec(self._server.base_url)

    def _precheck(self) -> None:
        """Probe the models-file aliases that have work in this run, so a dead endpoint fails it at once."""
        if not self.config.check or self.config.models_file is None:
            return
        from jurist.engine.check import require_ready

        busy = {alias for alias, questions in self._generation_work().items() if questions}
        if busy:
            busy.update(self.judges)
        elif self.judges:
            busy.update(judge for (judge, _), items in self._judging_work().items() if items)
        # The embedded server is not up yet (and is ours): it is never probed.
        require_ready(self.specs, [alias for alias in self.specs if alias in busy - self._embedded])

    def _write_run_json(self, status: str, extra: dict[str, Any] | None = None) -> None:
        config = self.config
        data: dict[str, Any] = {
            **run_header(self.run_id, status),
            "bench": self.bench.name,
            "n_questions": len(self.bench.questions),
            "models": self.candidates,
            "baseline": self.baseline,
            "judges": self.judges,
            "mode": config.mode,
            "judge_protocol": config.judge_protocol,
            "judge_prompt": str(config.judge_prompt) if config.judge_prompt else None,
            "min_interval": config.min_interval,
            "max_concurrency": config.max_concurrency,
            "limit": config.limit,
            "scoring": {
                "method": "weighted-winrate",
                "strong_weight": config.strong_weight,
                "bootstrap": config.n_bootstrap,
                "seed": config.seed,
                "ci_level": config.ci_level,
                "resample": "questions",
            },
            "model_specs": {alias: self._spec(alias).public_dict() for alias in self._involved()},
            "updated": time.time(),
        }
        data.update(extra or {})
        write_json_atomic(self.run_dir.run_json, data)

    def _involved(self) -> list[str]:
        aliases = list(dict.fromkeys(self.candidates + self.judges))
        if self.baseline and (self.baseline in self.specs):
            aliases.append(self.baseline)
        return aliases

    # -- stages ---------------------------------------------------------------------------------------------
    def run(self) -> RunResult:
        self._precheck()
        self.run_dir.root.mkdir(parents=True, exist_ok=True)
        failures = FailureLog(self.run_dir.failures, self.run_id)
        engine = engine_for(self.config, self.specs)
        self._write_run_json("running")
        leaderboard: list[dict[str, Any]] = []
        with ExitStack() as stack:
            stack.callback(failures.close)
            leaderboard = asyncio.run(self._stages(engine, failures, stack))
        exit_code = 1 if failures.count else 0
        self._write_run_json(
            "finished",
            {
                "exit_code": exit_code,
                "failures": failures.count,
                "usage": engine.stats.summary(),
            },
        )
        if leaderboard:
            print_leaderboard(
                Console(), leaderboard, title=f"jurist: {self.bench.name}", ci_level=self.config.ci_level
            )
        if failures.count:
            self.console.print(
                f"[yellow]{failures.count} request(s) failed after retries; see {self.run_dir.failures}. "
                "Run the same command again to retry them.[/yellow]"
            )
        return RunResult(exit_code, leaderboard, failures.count, engine.stats.requests, self.run_dir.root)

    async def _stages(self, engine: Engine, failures: FailureLog, stack: ExitStack) -> list[dict[str, Any]]:
        """All stages in one event loop (the engine's limits belong to one loop)."""
        try:
            self._write_shipped_baseline()
            generation = self._generation_work()
            if any(generation.values()):
                self._ensure_server(set(generation), stack)
                await self._generate(engine, generation, failures)
            if self.config.mode == "inference-only":
                return []
            judging = self._judging_work()
            if any(judging.values()):
                self._ensure_server({judge for judge, _ in judging}, stack)
                await self._judge(engine, judging, failures)
            return self._score()
        finally:
            await engine.aclose()

    def _write_shipped_baseline(self) -> None:
        """Write the benchmark's own baseline answers to a file, so judgments can hash and cite them."""
        shipped = self.bench.baseline_answers
        if not shipped or self.baseline is None or self.baseline != self.bench.baseline:
            return
        existing = self.run_dir.load_answers(self.baseline)
        missing = [q for q in self.bench.questions if q.uid not in existing and q.uid in shipped]
        if missing:
            with JsonlAppender(self.run_dir.answers(self.baseline)) as out:
                for q in missing:
                    out.append(
                        {
                            "uid": q.uid,
                            "model": self.baseline,
                            "category": q.category,
                            "answer": shipped[q.uid],
                            "source": "benchmark",
                            "tstamp": time.time(),
                        }
                    )

    def _generation_work(self) -> dict[str, list[Question]]:
        if self.config.mode == "judge-only":
            return {}
        aliases = list(self.candidates)
        if (
            self.judges
            and self.baseline
            and not (self.bench.baseline_answers and self.baseline == self.bench.baseline)
        ):
            if self.baseline not in self.specs:
                if not self.run_dir.answers(self.baseline).exists():
                    raise JuristError(
                        f"baseline {self.baseline!r} has no answers at {self.run_dir.answers(self.baseline)} "
                        "and is not in the models file"
                    )
            else:
                aliases.append(self.baseline)
        work: dict[str, list[Question]] = {}
        for alias in aliases:
            existing = self.run_dir.load_answers(alias)
            work[alias] = [q for q in self.bench.questions if q.uid not in existing]
        return work

    async def _generate(self, engine: Engine, work: dict[str, list[Question]], failures: FailureLog) -> None:
        with StageProgress(self.console, enabled=self.config.progress) as progress, ExitStack() as files:
            jobs = []
            for alias, questions in work.items():
                if not questions:
                    continue
                bar = progress.add_bar(f"answer  {alias}", len(questions))
                out = files.enter_context(JsonlAppender(self.run_dir.answers(alias)))
                client = engine.client(alias)
                jobs += [self._answer_one(client, q, out, progress, bar, failures) for q in questions]
            await asyncio.gather(*jobs)

    async def _answer_one(
        self,
        client: ModelClient,
        question: Question,
        out: JsonlAppender,
        progress: StageProgress,
        bar: Any,
        failures: FailureLog,
    ) -> None:
        messages = []
        if client.spec.system_prompt:
            messages.append({"role": "system", "content": client.spec.system_prompt})
        messages.append({"role": "user", "content": question.prompt})
        try:
            completion = await client.complete(messages)
        except RequestFailed as exc:
            failures.record("generate", exc, model=client.alias, uid=question.uid)
            progress.advance(bar, failed=True)
            return
        record: dict[str, Any] = {
            "uid": question.uid,
            "model": client.alias,
            "category": question.category,
            "answer": completion.text,
            "usage": completion.usage(),
            "finish_reason": completion.finish_reason,
            "tstamp": time.time(),
            "metadata": answer_style_metadata(completion.text),  # style-control features, Arena-Hard's shape
        }
        if completion.reasoning:
            record["reasoning"] = completion.reasoning
        out.append(record)
        progress.advance(bar, tokens=completion.completion_tokens or 0)

    def _judging_work(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """Per (judge, model): the questions whose judgment for the *current* answers is missing."""
        assert self.baseline is not None
        baseline_answers = self.run_dir.load_answers(self.baseline)
        work: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for judge in self.judges:
            protocol = self._protocol(judge)
            prompt_hash = protocol.fingerprint(self._spec(judge))
            for model in self.candidates:
                answers = self.run_dir.load_answers(model)
                done = self.run_dir.load_judgments(judge, model)
                items = []
                for q in self.bench.questions:
                    if q.uid not in answers or q.uid not in baseline_answers:
                        continue
                    answer, base = answers[q.uid]["answer"], baseline_answers[q.uid]["answer"]
                    key = judgment_key(
                        judge, model, self.baseline, q.uid, text_hash(answer), text_hash(base), prompt_hash
                    )
                    previous = done.get(key)
                    if previous is not None and not (previous.get("invalid") and self.config.rejudge_invalid):
                        continue
                    items.append(
                        {
                            "question": q,
                            "answer": answer,
                            "baseline_answer": base,
                            "protocol": protocol,
                            "prompt_hash": prompt_hash,
                        }
                    )
                work[(judge, model)] = items
        return work

    async def _judge(
        self, engine: Engine, work: dict[tuple[str, str], list[dict[str, Any]]], failures: FailureLog
    ) -> None:
        assert self.baseline is not None
        with StageProgress(self.console, enabled=self.config.progress) as progress, ExitStack() as files:
            jobs = []
            for (judge, model), items in work.items():
                if not items:
                    continue
                bar = progress.add_bar(f"judge   {judge} -> {model}", len(items))
                out = files.enter_context(JsonlAppender(self.run_dir.judgments(judge, model)))
                client = engine.client(judge)
                jobs += [self._judge_one(client, model, item, out, progress, bar, failures) for item in items]
            await asyncio.gather(*jobs)

    async def _judge_one(
        self,
        client: ModelClient,
        model: str,
        item: dict[str, Any],
        out: JsonlAppender,
        progress: StageProgress,
        bar: Any,
        failures: FailureLog,
    ) -> None:
        question: Question = item["question"]
        protocol: JudgeProtocol = item["protocol"]
        assert self.baseline is not None
        try:
            record = await judge_question(
                client,
                protocol,
                uid=question.uid,
                category=question.category,
                question=question.prompt,
                model=model,
                answer=item["answer"],
                baseline=self.baseline,
                baseline_answer=item["baseline_answer"],
                prompt_hash=item["prompt_hash"],
            )
        except RequestFailed as exc:
            failures.record("judge", exc, judge=client.alias, model=model, uid=question.uid)
            progress.advance(bar, failed=True)
            return
        out.append(record)
        tokens = sum((g["usage"].get("completion_tokens") or 0) for g in record["games"])
        progress.advance(bar, invalid=record["invalid"], tokens=tokens)

    def _current_judgments(self) -> list[dict[str, Any]]:
        """The judgments that belong to the current answers and prompts; stale ones are ignored."""
        assert self.baseline is not None
        baseline_answers = self.run_dir.load_answers(self.baseline)
        current = []
        for judge in self.judges:
            prompt_hash = self._protocol(judge).fingerprint(self._spec(judge))
            for model in self.candidates:
                answers = self.run_dir.load_answers(model)
                done = self.run_dir.load_judgments(judge, model)
                for q in self.bench.questions:
                    if q.uid in answers and q.uid in baseline_answers:
                        key = judgment_key(
                            judge,
                            model,
                            self.baseline,
                            q.uid,
                            text_hash(answers[q.uid]["answer"]),
                            text_hash(baseline_answers[q.uid]["answer"]),
                            prompt_hash,
                        )
                        if key in done:
                            current.append(done[key])
        return current

    def _score(self) -> list[dict[str, Any]]:
        judgments = self._current_judgments()
        battles = [
            b
            for record in judgments
            for b in battles_from_judgment(record, strong_weight=self.config.strong_weight)
        ]
        invalid: dict[tuple[str, str], int] = {}
        for record in judgments:
            if record.get("invalid"):
                invalid[(record["judge"], record["model"])] = (
                    invalid.get((record["judge"], record["model"]), 0) + 1
                )
        tmp = self.run_dir.battles.with_suffix(".jsonl.tmp")
        tmp.unlink(missing_ok=True)
        with JsonlAppender(tmp) as out:
            for battle in battles:
                out.append(battle)
        tmp.replace(self.run_dir.battles)
        assert self.baseline is not None
        rows = win_rate_leaderboard(
            battles,
            {self.baseline},
            invalid=invalid,
            n_bootstrap=self.config.n_bootstrap,
            seed=self.config.seed,
            ci_level=self.config.ci_level,
        )
        write_json_atomic(self.run_dir.leaderboard, rows)
        write_json_atomic(
            self.run_dir.root / "ratings.json",
            ratings_document(
                rows,
                method="winrate",
                seed=self.config.seed,
                n_bootstrap=self.config.n_bootstrap,
                ci_level=self.config.ci_level,
                battles=battles,
            ),
        )
        return rows


def run_pipeline(config: RunConfig, console: Console | None = None) -> RunResult:
    try:
        if config.bench == "judgebench":
            from jurist.judgebench_run import run_judgebench

            return run_judgebench(config, console)
        return Pipeline(config, console).run()
    except RequestFailed as exc:  # pragma: no cover - every stage catches these per item
        raise JuristError(mask(str(exc))) from None
