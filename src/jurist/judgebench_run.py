"""``jurist run --bench judgebench``: put JudgeBench's fixed response pairs to judges and score them exactly.

JudgeBench measures the judge, not the answers: each pair holds one objectively correct and one wrong
response, so there is nothing to generate. Each pair is judged twice (game 1 shows response_A first, game 2
swaps them) with a jurist protocol, and scored with upstream's two-game rule
(:func:`jurist.benchmarks.judgebench.score_decisions`), so numbers compare with the published leaderboard.

Judgments are stored per judge in ``judgments/<judge>/judgebench-<split>.jsonl``, keyed by judge, pair,
pair text and protocol fingerprint: a rerun sends nothing for what is stored, retries transport failures
(kept in ``failures.jsonl``, never stored as judgments) and keeps invalid verdicts (they are results: they
score as a missing decision, as upstream scores a judge that gave none).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from jurist.benchmarks.judgebench import (
    SPLITS,
    JudgeScore,
    Pair,
    load_pairs,
    load_pairs_from_hub,
    normalize_decision,
    score_decisions,
)
from jurist.config import ModelSpec, load_models_file
from jurist.engine.check import require_ready
from jurist.engine.client import Engine, ModelClient, RequestFailed
from jurist.engine.local import EMBEDDED_ALIAS, embedded_model_spec
from jurist.errors import InputError, JuristError
from jurist.judging.pairwise import judge_game
from jurist.judging.protocols import JudgeProtocol, protocol_for
from jurist.pipeline import FailureLog, RunConfig, RunResult, engine_for, run_header, start_embedded_server
from jurist.report.progress import StageProgress
from jurist.store.jsonl import JsonlAppender, write_json_atomic
from jurist.store.run_dir import RunDir

DEFAULT_SPLIT = "gpt"
ROW_FIELDS = (
    "judge",
    "response_model",
    "n",
    "overall",
    "knowledge",
    "reasoning",
    "math",
    "coding",
    "consistency",
    "failed",
)


# --------------------------------------------------------------------------------------------------
# Pairs


def _local_split_file(split: str) -> Path | None:
    """The upstream data file of ``split`` under ``$JURIST_JUDGEBENCH_DIR`` (or its data/), if there."""
    root = os.environ.get("JURIST_JUDGEBENCH_DIR")
    if not root:
        return None
    name = f"dataset=judgebench,response_model={SPLITS[split]}.jsonl"
    for candidate in (Path(root) / name, Path(root) / "data" / name):
        if candidate.is_file():
            return candidate
    return None


def load_split(split: str) -> tuple[str, list[Pair]]:
    """(set name, pairs) for ``--split``: a pairs file, or gpt/claude from a local copy, else the HF Hub."""
    path = Path(split)
    if path.is_file():
        name = path.name.removesuffix(".gz").removesuffix(".jsonl")
        return name, load_pairs(path)
    if split not in SPLITS:
        raise JuristError(f"--split: {split!r} is neither {' nor '.join(SPLITS)} nor an existing pairs file")
    local = _local_split_file(split)
    if local is not None:
        return split, load_pairs(local)
    try:
        return split, load_pairs_from_hub(split)
    except Exception as exc:  # the Hub client raises many types (offline, missing package, not found)
        raise JuristError(
            f"JudgeBench split {split!r}: no local copy (set JURIST_JUDGEBENCH_DIR to a folder holding "
            f"upstream's data/*.jsonl) and loading hf://datasets/ScalerLab/JudgeBench failed: {exc}"
        ) from None


def pair_hash(pair: Pair) -> str:
    blob = json.dumps([pair.question, pair.response_A, pair.response_B, pair.label])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def judgment_key(judge: str, pair: Pair, prompt_hash: str) -> str:
    """Identity of a stored judgment: another judge, pair text or prompt makes a new one."""
    blob = json.dumps([judge, pair.pair_id, pair_hash(pair), prompt_hash])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


# --------------------------------------------------------------------------------------------------
# Result rows and the table


def score_row(score: JudgeScore) -> dict[str, Any]:
    """A ``JudgeScore`` as a JSON-safe row (NaN, e.g. a group with no pairs, becomes null)."""
    row = score._asdict()
    out: dict[str, Any] = {}
    for name in ROW_FIELDS:
        value = row[name]
        out[name] = None if isinstance(value, float) and math.isnan(value) else value
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def table_console() -> Console:
    """stdout for tables; when it is not a terminal (a file, a CI log) wide enough that no name is cut."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def judgebench_table(rows: Sequence[dict[str, Any]], *, title: str) -> Table:
    table = Table(title=title)
    several_sets = len({row["response_model"] for row in rows}) > 1
    columns = [name for name in ROW_FIELDS if name != "response_model" or several_sets]
    for name in columns:
        if name in ("judge", "response_model"):
            table.add_column(name, overflow="fold")  # names are the point of the table: never cut them
        else:
            table.add_column(name, justify="right", min_width=len(name), no_wrap=True)
    for row in rows:
        table.add_row(*(_cell(row[name]) for name in columns))
    return table


# --------------------------------------------------------------------------------------------------
# The run


class JudgeBenchRun:
    """One JudgeBench run: resolves judges, judges what is missing, scores every judge."""

    def __init__(self, config: RunConfig, console: Console | None = None) -> None:
        if config.models:
            raise JuristError(
                "--model does not apply to JudgeBench: it judges fixed response pairs (use --judge)"
            )
        if config.baseline:
            raise JuristError("--baseline does not apply to JudgeBench: each pair is its own comparison")
        if config.mode == "inference-only":
            raise JuristError("--inference-only does not apply to JudgeBench: there is nothing to generate")
        self.config = config
        self.console = console or Console(stderr=True)
        self.name, pairs = load_split(config.split or DEFAULT_SPLIT)
        self.pairs = pairs[: config.limit] if config.limit else pairs
        self.run_dir = RunDir(config.out or Path("runs") / f"judgebench-{self.name}")
        self.specs: dict[str, ModelSpec] = load_models_file(config.models_file) if config.models_file else {}
        self.judges = list(dict.fromkeys(config.judges or [EMBEDDED_ALIAS]))
        self.run_id = uuid.uuid4().hex[:12]
        # As in the pipeline, jurist serves the embedded alias itself unless the models file defines it.
        self.embedded = {EMBEDDED_ALIAS} - set(self.specs)
        for judge in self.judges:
            if judge not in self.specs:
                if judge not in self.embedded:
                    source = f"models file {config.models_file}" if config.models_file else "no --models-file"
                    raise JuristError(f"judge {judge!r} is not defined ({source})")
                self.specs[judge] = embedded_model_spec()
        self.protocols: dict[str, JudgeProtocol] = {}
        for judge in self.judges:
            try:
                self.protocols[judge] = protocol_for(
                    config.judge_protocol, self.specs[judge], config.judge_prompt
                )
            except KeyError:
                raise JuristError(f"--judge-protocol: unknown protocol {config.judge_protocol!r}") from None

    @property
    def set_name(self) -> str:
        return f"judgebench-{self.name}"

    def _prompt_hash(self, judge: str) -> str:
        return self.protocols[judge].fingerprint(self.specs[judge])

    def _stored(self, judge: str) -> dict[str, dict[str, Any]]:
        return self.run_dir.load_judgments(judge, self.set_name)

    def work(self) -> dict[str, list[Pair]]:
        """Per judge, the pairs with no stored judgment for the current pair text and prompt."""
        todo: dict[str, list[Pair]] = {}
        for judge in self.judges:
            done, prompt_hash = self._stored(judge), self._prompt_hash(judge)
            todo[judge] = []
            for pair in self.pairs:
                previous = done.get(judgment_key(judge, pair, prompt_hash))
                if previous is None or (previous.get("invalid") and self.config.rejudge_invalid):
                    todo[judge].append(pair)
        return todo

    def run(self) -> RunResult:
        work = self.work()
        busy = [judge for judge, pairs in work.items() if pairs and judge not in self.embedded]
        if self.config.check and self.config.models_file is not None and busy:
            require_ready(self.specs, busy)
        self.run_dir.root.mkdir(parents=True, exist_ok=True)
        failures = FailureLog(self.run_dir.failures, self.run_id)
        engine = engine_for(self.config, self.specs)
        self._write_run_json("running")
        with ExitStack() as stack:
            stack.callback(failures.close)
            if any(work.values()):
                asyncio.run(self._judge_all(engine, work, failures, stack))
        rows = [score_row(score) for score in self.scores()]
        write_json_atomic(self.run_dir.root / "judgebench.json", rows)
        exit_code = 1 if failures.count else 0
        self._write_run_json(
            "finished",
            {
                "exit_code": exit_code,
                "failures": failures.count,
                "usage": engine.stats.summary(),
            },
        )
        table_console().print(
            judgebench_table(rows, title=f"JudgeBench ({self.name}, {len(self.pairs)} pairs)")
        )
        if failures.count:
            self.console.print(
                f"[yellow]{failures.count} pair(s) failed after retries; see {self.run_dir.failures}. "
                "Run the same command again to retry them.[/yellow]"
            )
        return RunResult(exit_code, rows, failures.count, engine.stats.requests, self.run_dir.root)

    async def _judge_all(
        self, engine: Engine, work: dict[str, list[Pair]], failures: FailureLog, stack: ExitStack
    ) -> None:
        """Every judge at once, so the engine's global limit (not the judge order) paces the run."""
        try:
            if any(work[judge] for judge in self.embedded & set(self.judges)):
                server = start_embedded_server(stack, self.console)
                for alias in self.embedded:
                    self.specs[alias] = embedded_model_spec(server.base_url)
            with StageProgress(self.console, enabled=self.config.progress) as progress, ExitStack() as files:
                jobs = []
                for judge, pairs in work.items():
                    if not pairs:
                        continue
                    bar = progress.add_bar(f"judge   {judge} -> {self.set_name}", len(pairs))
                    out = files.enter_context(JsonlAppender(self.run_dir.judgments(judge, self.set_name)))
                    client = engine.client(judge)
                    prompt_hash = self._prompt_hash(judge)
                    jobs += [
                        self._judge_pair(client, pair, prompt_hash, out, progress, bar, failures)
                        for pair in pairs
                    ]
                await asyncio.gather(*jobs)
        finally:
            await engine.aclose()

    async def _judge_pair(
        self,
        client: ModelClient,
        pair: Pair,
        prompt_hash: str,
        out: JsonlAppender,
        progress: StageProgress,
        bar: Any,
        failures: FailureLog,
    ) -> None:
        protocol = self.protocols[client.alias]
        results = await asyncio.gather(
            judge_game(client, protocol, pair.question, pair.response_A, pair.response_B),
            judge_game(client, protocol, pair.question, pair.response_B, pair.response_A),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, RequestFailed):
                failures.record("judge", result, judge=client.alias, pair_id=pair.pair_id)
                progress.advance(bar, failed=True)
                return
            if isinstance(result, BaseException):
                raise result
        game1, game2 = (result for result in results if isinstance(result, dict))
        games = [
            {"game": 1, "a": "response_A", "b": "response_B", **game1},
            {"game": 2, "a": "response_B", "b": "response_A", **game2},
        ]
        invalid = any(game["label"] is None for game in games)
        out.append(
            {
                "key": judgment_key(client.alias, pair, prompt_hash),
                "pair_id": pair.pair_id,
                "source": pair.source,
                "label": pair.label,
                "response_model": pair.response_model,
                "judge": client.alias,
                "protocol": protocol.name,
                "prompt_hash": prompt_hash,
                "pair_hash": pair_hash(pair),
                "games": games,
                # As upstream stores them: direction only, game 2 as the judge said it on the swapped order.
                "decisions": [normalize_decision(game["label"]) for game in games],
                "invalid": invalid,
                "tstamp": time.time(),
            }
        )
        tokens = sum((game["usage"].get("completion_tokens") or 0) for game in games)
        progress.advance(bar, invalid=invalid, tokens=tokens)

    def scores(self) -> list[JudgeScore]:
        """Every judge on every pair; a pair with no stored judgment (a failed request) has no decisions."""
        scores = []
        for judge in self.judges:
            done, prompt_hash = self._stored(judge), self._prompt_hash(judge)
            decisions: dict[str, tuple[str | None, ...]] = {}
            for pair in self.pairs:
                record = done.get(judgment_key(judge, pair, prompt_hash))
                games = record["games"] if record else [{"label": None}, {"label": None}]
                decisions[pair.pair_id] = tuple(game["label"] for game in games)
            try:
                scores.append(score_decisions(self.pairs, decisions, judge=judge))
            except ValueError as exc:
                raise InputError(self.run_dir.judgments(judge, self.set_name), "", str(exc)) from None
        return scores

    def _write_run_json(self, status: str, extra: dict[str, Any] | None = None) -> None:
        config = self.config
        data: dict[str, Any] = {
            **run_header(self.run_id, status),
            "bench": "judgebench",
            "split": self.name,
            "n_pairs": len(self.pairs),
            "judges": self.judges,
            "judge_protocol": config.judge_protocol,
            "judge_prompt": str(config.judge_prompt) if config.judge_prompt else None,
            "protocols": {judge: protocol.name for judge, protocol in self.protocols.items()},
            "max_concurrency": config.max_concurrency,
            "limit": config.limit,
            "scoring": {
                "method": "judgebench-two-game",
                "rule": "correct iff points(game1)+points(game2) > 0",
            },
            "model_specs": {judge: self.specs[judge].public_dict() for judge in self.judges},
            "updated": time.time(),
        }
        data.update(extra or {})
        write_json_atomic(self.run_dir.run_json, data)


def run_judgebench(config: RunConfig, console: Console | None = None) -> RunResult:
    """Entry point from :func:`jurist.pipeline.run_pipeline` when ``config.bench == "judgebench"``."""
    return JudgeBenchRun(config, console).run()
