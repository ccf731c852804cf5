"""``--shard I/N``: one run cut into N parts that separate processes (Slurm array tasks, Kubernetes indexed
pods, Ray tasks, plain processes) run on their own, each into a complete, resumable run directory of its
own, later joined by ``jurist merge`` (:mod:`jurist.run.merge`).

The unit is a question with all its samples: a question's answers, its baseline's answer and its
judgments stay in one shard, so a shard judges what it answered and never waits on another. The
partition depends on nothing but the questions and the shard count (not on the machine, the order the
processes start or what they already hold), and it balances expected cost rather than counts: questions
are dealt, most expensive first, to the shard with the least expected cost so far (longest-processing-
time first), so a benchmark whose long prompts cluster in one category does not leave one shard with
all of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.benchmarks import Benchmark
from jurist.errors import JuristError
from jurist.store import Question

REPLY_CHARS = 2000
"""The expected length of a reply, in characters, added to each question's prompt as its cost: most of a
request's time is its reply, which is not known before it is made (about 500 tokens)."""

SHARD_FILE = "shard.json"
SHARD_SCHEMA = "jurist.shard/1"


@dataclass(frozen=True)
class ShardChoice:
    """Which shard this process runs: ``index`` in ``0..count-1``, and where that came from (said in the
    run's first line)."""

    index: int
    count: int
    source: str = "--shard"

    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> ShardChoice:
    """``--shard I/N`` (0-based: ``0/4`` … ``3/4``)."""
    index_text, sep, count_text = text.partition("/")
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise JuristError(f"--shard: {text!r} is not I/N with 0 <= I < N (for example --shard 0/4)")
    return ShardChoice(index, count)


def shard_from_environment(count: int, environ: Mapping[str, str] | None = None) -> ShardChoice:
    """``--shards N``: this process's index from the scheduler — a Slurm array task
    (``SLURM_ARRAY_TASK_ID`` less ``SLURM_ARRAY_TASK_MIN``, whose ``SLURM_ARRAY_TASK_COUNT`` must be N) or
    a Kubernetes indexed Job's pod (``JOB_COMPLETION_INDEX``)."""
    env = os.environ if environ is None else environ
    if count < 1:
        raise JuristError(f"--shards: {count} is not a shard count (at least 1)")
    if "SLURM_ARRAY_TASK_ID" in env:
        task, low = _env_int(env, "SLURM_ARRAY_TASK_ID"), _env_int(env, "SLURM_ARRAY_TASK_MIN", 0)
        given = _env_int(env, "SLURM_ARRAY_TASK_COUNT", count)
        if given != count:
            raise JuristError(
                f"--shards {count}: the Slurm array has {given} tasks (SLURM_ARRAY_TASK_COUNT); "
                "give the array's size"
            )
        index = task - low
        source = f"SLURM_ARRAY_TASK_ID={task}" + (f" - SLURM_ARRAY_TASK_MIN={low}" if low else "")
    elif "JOB_COMPLETION_INDEX" in env:
        index, source = _env_int(env, "JOB_COMPLETION_INDEX"), "JOB_COMPLETION_INDEX"
        source = f"{source}={index}"
    else:
        raise JuristError(
            "--shards: no shard index in the environment (SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX); "
            "outside a scheduler give --shard I/N"
        )
    if not 0 <= index < count:
        raise JuristError(f"--shards {count}: {source} gives shard {index}, outside 0..{count - 1}")
    return ShardChoice(index, count, source)


def shard_choice(shard: str | None, shards: int | None) -> ShardChoice | None:
    """The command line's ``--shard I/N`` or ``--shards N``; None: not sharded."""
    if shard is not None and shards is not None:
        raise JuristError("--shard I/N names the shard, --shards N reads it from the scheduler: give one")
    if shard is not None:
        return parse_shard(shard)
    return shard_from_environment(shards) if shards is not None else None


def _env_int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    value = env.get(name)
    if value is None and default is not None:
        return default
    try:
        return int(str(value))
    except ValueError:
        raise JuristError(f"${name}: {value!r} is not an integer") from None


def question_cost(question: Question) -> int:
    """A question's expected cost per sample: its prompt's characters (a conversation's turns) and a
    reply's."""
    messages = question.metadata.get("messages")
    if isinstance(messages, list):
        size = sum(len(str(m.get("content", ""))) for m in messages if isinstance(m, dict))
    else:
        size = len(question.prompt)
    return size + REPLY_CHARS


def partition(questions: Sequence[Question], count: int) -> dict[str, int]:
    """Each question's shard: dealt most expensive first (ties by uid) to the least loaded shard (ties by
    index), so the result is a function of the questions and ``count`` alone."""
    order = sorted(questions, key=lambda q: (-question_cost(q), q.uid))
    loads = [(0, index) for index in range(count)]  # a heap of (expected cost so far, shard)
    owners: dict[str, int] = {}
    for question in order:
        load, index = heapq.heappop(loads)
        owners[question.uid] = index
        heapq.heappush(loads, (load + question_cost(question), index))
    return owners


@dataclass(frozen=True)
class ShardPlan:
    """One shard of a run: which it is, the owner of every question of the whole run, and the facts of the
    whole benchmark that a shard's own run.json (about its part) does not hold."""

    choice: ShardChoice
    owners: Mapping[str, int]
    n_questions: int
    categories: tuple[str, ...]
    selection: Mapping[str, Any] | None

    def document(self, plan_facts: Mapping[str, Any]) -> dict[str, Any]:
        """shard.json: the shard, the whole run's facts every shard of it shares (compared by
        ``jurist merge``, field by field) and the owners of the questions (so a merge names what a missing
        shard held)."""
        facts = {
            **plan_facts,
            "n_questions": self.n_questions,
            "score_categories": list(self.categories),
            "selection": dict(self.selection) if self.selection else None,
        }
        return {
            "schema": SHARD_SCHEMA,
            "index": self.choice.index,
            "count": self.choice.count,
            "source": self.choice.source,
            "fingerprint": fingerprint(facts),
            "plan": facts,
            "owners": dict(self.owners),
        }


def fingerprint(facts: Mapping[str, Any]) -> str:
    """The short hash of a run's shared facts: equal in every shard of one run."""
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def shard_benchmark(bench: Benchmark, choice: ShardChoice) -> tuple[Benchmark, ShardPlan]:
    """``bench`` cut to ``choice``'s questions (in the benchmark's order), and the shard's plan."""
    owners = partition(bench.questions, choice.count)
    kept = [q for q in bench.questions if owners[q.uid] == choice.index]
    if not kept:
        raise JuristError(
            f"--shard {choice.label()}: {bench.name} has {len(bench.questions)} question(s), none for this "
            f"shard; use at most {len(bench.questions)} shards"
        )
    present = {q.category for q in kept}
    categories = tuple(c for c in bench.score_categories if c in present)
    shard_info = {"index": choice.index, "count": choice.count, "questions": len(kept)}
    cut = dataclasses.replace(
        bench,
        questions=kept,
        info={**bench.info, "shard": shard_info},
        score_categories=categories if len(categories) > 1 else (),
    )
    selection = bench.info.get("selection")
    plan = ShardPlan(
        choice,
        owners,
        len(bench.questions),
        tuple(bench.score_categories),
        selection if isinstance(selection, Mapping) else None,
    )
    return cut, plan


__all__ = [
    "SHARD_FILE",
    "ShardChoice",
    "ShardPlan",
    "fingerprint",
    "parse_shard",
    "partition",
    "shard_benchmark",
    "shard_choice",
    "shard_from_environment",
]
