"""Rubric grading: one grader request per rubric item (HealthBench) or criterion (WritingBench).

All items of one answer are asked at once; the engine's global and per-model limits decide how many are
in flight. A reply the grader's reader cannot read is re-asked once (the reply is sent back with a short
instruction); if that reply cannot be read either, the item is recorded ``unscored``: a result, counted
and reported, never taken as "not met" and never asked again in a loop. A transport failure is not a
result: the items that succeeded travel in :class:`~jurist.judging.base.PartialJudgment`, so the next run
asks only the failed ones. With ``--rejudge-invalid`` (cache mode ``refresh``) the scored items come back
from the request cache and only the unscored ones are asked afresh.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from typing import Any

from jurist.config import ModelSpec
from jurist.engine import ModelClient, RequestFailed
from jurist.errors import JuristError
from jurist.judging.base import CacheMode, JudgeItem, OutcomeKind, PartialJudgment
from jurist.judging.kinds import JudgeKindSetup
from jurist.judging.pairwise import cap_raw, reask_context
from jurist.judging.rubric_prompts import RubricGrader, rubric_grader
from jurist.store import text_hash

MAX_REASKS = 1
"""Re-asks after an unreadable reply before the item is recorded unscored."""


def _stored(item: dict[str, Any], field: str, text: str) -> None:
    item[field], chars = cap_raw(text)
    if chars is not None:
        item[f"{field}_chars"] = chars


class RubricJudge:
    """The rubric judge kind: a judgment per answer holds one graded entry per item; outcomes are one point
    per item (``value`` 1/0 for met/not met, score/10 for a 1-10 criterion, None when unscored)."""

    name = "rubric"
    outcome: OutcomeKind = "point"

    def __init__(self, grader: RubricGrader, spec: ModelSpec, *, max_reasks: int = MAX_REASKS) -> None:
        self.grader = grader
        self.spec = spec
        self.max_reasks = max_reasks
        self.params = self._params(spec)
        data = {
            "grader": grader.fingerprint,
            "judge_model": spec.model,
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
            "params": spec.passthrough_params(),
            "presets": self.params,
            "reasks": max_reasks,
        }
        self._fingerprint = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def _params(self, spec: ModelSpec) -> dict[str, Any]:
        """The reference grader's sampling settings for the fields the judge's models-file entry leaves
        unset (its own settings always win)."""
        own = {"temperature": spec.temperature, "max_tokens": spec.max_tokens, **spec.passthrough_params()}
        return {key: value for key, value in self.grader.presets.items() if own.get(key) is None}

    @property
    def reads_written(self) -> bool:
        """Whether items carry the answer as written (:attr:`JudgeItem.written`) for the grader's cut."""
        return self.grader.reads_written

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def protocol_name(self) -> str:
        return self.grader.name

    def rubric_hash(self, item: JudgeItem) -> str:
        """What the grader is asked about besides the answer: the prompt, its turns and the items."""
        question = item.question
        data = {
            "prompt": question.prompt,
            "messages": question.metadata.get("messages"),
            "items": self.grader.items(question),
            "facts": self.grader.facts(question),
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]

    def key(self, item: JudgeItem) -> str:
        parts: list[Any] = [
            "rubric",
            item.judge,
            item.model,
            item.question.uid,
            item.answer_hash(),
            self._fingerprint,
            self.rubric_hash(item),
            item.sample,
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]

    async def _grade(
        self,
        client: ModelClient,
        messages: list[dict[str, str]],
        sample: int,
        cache: CacheMode,
        shared: int = 0,
    ) -> dict[str, Any]:
        """One item: ask, re-ask at most ``max_reasks`` times, and record what was read (or unscored).
        ``shared``: the start of its user message the answer's other items share (a prompt-cache mark)."""
        entry: dict[str, Any] = {}
        first_mode: CacheMode = "use" if cache == "refresh" else cache
        reply = await client.complete(
            messages, sample=sample, cache=first_mode, phase="judge", shared_prefix=shared, **self.params
        )
        grade = self.grader.read(reply.text)
        if grade is None and reply.cached and first_mode != cache:  # re-judging: ask a cached bad one afresh
            reply = await client.complete(
                messages, sample=sample, cache=cache, phase="judge", shared_prefix=shared, **self.params
            )
            grade = self.grader.read(reply.text)
        _stored(entry, "raw", reply.text)
        entry["usage"] = reply.usage()
        reasks: list[dict[str, Any]] = []
        last = reply.text
        while grade is None and len(reasks) < self.max_reasks:
            follow_up = [
                *messages,
                {"role": "assistant", "content": reask_context(last)},
                {"role": "user", "content": self.grader.reask_text},
            ]
            again = await client.complete(
                follow_up, sample=sample, cache=cache, phase="reask", shared_prefix=shared, **self.params
            )
            grade = self.grader.read(again.text)
            reask: dict[str, Any] = {"usage": again.usage()}
            _stored(reask, "raw", again.text)
            reasks.append(reask)
            last = again.text
        if reasks:
            entry["reasks"] = reasks
        if grade is None:
            entry["status"] = "unscored"
        else:
            entry.update(status="scored", **grade)
        return entry

    async def judge(
        self,
        client: ModelClient,
        item: JudgeItem,
        *,
        cache: CacheMode,
        earlier: dict[int, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Every item of one answer, concurrently; items an earlier run graded (``earlier``) are reused."""
        question = item.question
        answer = self.grader.shown(item.answer, item.written)  # as its upstream shows it to the grader
        specs = self.grader.items(question)
        kept = earlier or {}

        asked = {i: self.grader.messages(question, answer, i) for i in range(len(specs)) if i not in kept}
        shared = _shared_prefix(list(asked.values()))

        async def grade(index: int) -> dict[str, Any]:
            if index in kept:
                return kept[index]
            return await self._grade(client, asked[index], item.sample, cache, shared)

        results = await asyncio.gather(*(grade(i) for i in range(len(specs))), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, RequestFailed):
                raise result
        failed = [result for result in results if isinstance(result, RequestFailed)]
        if failed:
            done = {i: r for i, r in enumerate(results) if isinstance(r, dict)}
            raise PartialJudgment(failed[0], done)
        entries = [
            {"item": index, **spec, **result}
            for index, (spec, result) in enumerate(zip(specs, results, strict=True))
            if isinstance(result, dict)
        ]
        unscored = sum(1 for entry in entries if entry["status"] == "unscored")
        return {
            "kind": "rubric",
            "key": self.key(item),
            "uid": question.uid,
            "sample": item.sample,
            "category": question.category,
            "judge": item.judge,
            "model": item.model,
            "protocol": self.grader.name,
            "metric": self.grader.metric,
            "prompt_hash": self._fingerprint,
            "rubric_hash": self.rubric_hash(item),
            "answer_hash": text_hash(item.answer),
            "facts": {**self.grader.facts(question), "answer_chars": len(answer)},  # the text graded
            "items": entries,
            "unscored": unscored,
            "invalid": unscored > 0,
            "tstamp": time.time(),
        }

    def outcomes(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """One point per item, with the item's and the question's facts that scoring needs."""
        points = []
        facts = record.get("facts") or {}
        for entry in record["items"]:
            scored = entry.get("status") == "scored"
            detail = {k: v for k, v in entry.items() if k not in _NOT_DETAIL}
            points.append(
                {
                    "kind": "point",
                    "uid": record["uid"],
                    "sample": record.get("sample", 0),
                    "model": record["model"],
                    "judge": record["judge"],
                    "metric": record.get("metric", self.grader.metric),
                    "value": self.grader.value(entry) if scored else None,
                    "category": record.get("category", "default"),
                    "detail": {**detail, **facts, "unscored": not scored},
                }
            )
        return points


_NOT_DETAIL = frozenset(
    {"raw", "raw_chars", "usage", "reasks", "status", "explanation", "reason", "criterion"}
)
"""Entry fields a point does not carry: the judge's texts and costs stay in the judgment."""


OUTCOME: OutcomeKind = RubricJudge.outcome
"""What this kind's judgments become, known before any judge is built
(:func:`jurist.judging.kinds.judge_kind_outcome`)."""


def judge_kind(setup: JudgeKindSetup) -> RubricJudge:
    """The ``rubric`` kind of the registry: the grader is fixed by the benchmark (its ``judge_protocol``,
    HealthBench's variant chosen with ``-B variant=``) and reads the prompt the benchmark hands it;
    ``--judge-prompt`` replaces upstream's texts (:mod:`jurist.judging.rubric_prompts`)."""
    if setup.protocol is not None and setup.protocol != setup.default_protocol:
        raise JuristError(
            f"--judge-protocol {setup.protocol!r} does not apply: this benchmark grades with its own rubric "
            f"grader ({setup.default_protocol}); HealthBench's variant is chosen with -B variant="
        )
    grader = rubric_grader(setup.default_protocol, setup.prompt_file, setup.prompt_source)
    return RubricJudge(grader, setup.spec)


def _shared_prefix(requests: list[list[dict[str, str]]]) -> int:
    """Characters at the start of the first user message that all ``requests`` share (0 for fewer than
    two: a prefix one request reads is not worth a cache write)."""
    users = [next((m["content"] for m in r if m["role"] == "user"), "") for r in requests]
    return len(os.path.commonprefix(users)) if len(users) >= 2 else 0
