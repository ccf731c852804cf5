"""``--answers FILE``: answers made elsewhere, scored as if this run had generated them.

The file is the reference evaluators' input shape, one JSON object per line: ``response`` plus ``key`` (the
question's key) or ``prompt`` (its exact text). Every line must name a question of the benchmark; a question
the file does not answer is simply not scored (and reported as missing). IFBench at upstream's ``db69a6f``
(``prompt_match: trimmed`` in its info) reads the file as upstream does: prompts match after trimming
whitespace, and a line whose prompt is no question's is passed over.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from jurist.benchmarks.base import Benchmark
from jurist.errors import InputError, JuristError
from jurist.store import id_field, read_input_jsonl


def read_answers_file(path: Path, bench: Benchmark) -> dict[str, str]:
    """uid -> response text, every line matched to a question of ``bench`` by key or prompt."""
    by_key = {q.uid: q.uid for q in bench.questions}
    by_prompt: dict[str, str] = {}
    for q in bench.questions:
        by_prompt.setdefault(q.prompt, q.uid)
    # IFBench db69a6f: a prompt also matches after trimming whitespace, and a line whose prompt is no
    # question's is passed over, as upstream's prompt -> response table is only ever looked up
    by_trimmed: dict[str, str] = {}
    upstream_lookup = bench.info.get("prompt_match") == "trimmed"
    if upstream_lookup:
        for q in bench.questions:
            by_trimmed.setdefault(q.prompt.strip(), q.uid)
    answers: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, row in read_input_jsonl(path):
        where = f"line {number}"
        response = row.get("response")
        if not isinstance(response, str):
            problem = "is missing" if "response" not in row else "is not a string"
            raise InputError(path, where, f"field 'response' {problem}")
        if "key" in row:
            uid = by_key.get(id_field(path, where, row, ("key",)))  # IFEval's keys are integers
            if uid is None:
                raise InputError(path, where, f"field 'key': {row['key']!r} is no question of {bench.name}")
        elif isinstance(row.get("prompt"), str):
            uid = by_prompt.get(row["prompt"]) or by_trimmed.get(row["prompt"].strip())
            if uid is None and upstream_lookup:
                continue
            if uid is None:
                raise InputError(path, where, f"field 'prompt': matches no prompt of {bench.name}")
        else:
            raise InputError(path, where, "needs field 'key' or 'prompt' to name its question")
        if uid in answers:
            raise InputError(path, where, f"question {uid!r} already answered on line {lines[uid]}")
        answers[uid] = response
        lines[uid] = number
    if not answers:
        raise InputError(path, "", "no answers")
    return answers


def with_answers_file(bench: Benchmark, path: Path, answers: dict[str, str], models: list[str]) -> Benchmark:
    """``bench`` with ``answers`` shipped for the one model they belong to (``--model``, else the file's
    stem), limited to the questions ``bench`` still has (after ``--limit``)."""
    if len(models) > 1:
        raise JuristError(f"--answers {path}: name the one model these answers belong to (--model NAME)")
    alias = models[0] if models else path.stem
    kept = {q.uid: answers[q.uid] for q in bench.questions if q.uid in answers}
    sources = {**bench.info.get("answers_source", {}), alias: f"file:{path.name}"}
    info = {**bench.info, "answers_source": sources, "answers_file": str(path)}
    return dataclasses.replace(
        bench, shipped_answers={**bench.shipped_answers, alias: kept}, candidates=(alias,), info=info
    )
