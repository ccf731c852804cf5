"""IFEval / IFBench question files: pinned versions, strict reading, instruction ids checked at load.

Rows are ``{"key", "prompt", "instruction_id_list", "kwargs"}`` (the reference evaluators' input). A row
whose instruction id has no checker, or whose lists disagree in length, is an error naming the file, line
and field, before any request is sent.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, take_options
from jurist.benchmarks.catalog import BenchmarkCard, Need, fetch_line, pinned_copy
from jurist.benchmarks.data_files import PinnedFile, resolve, sha256_of
from jurist.errors import InputError, JuristError
from jurist.rules import Checker, require_resources
from jurist.store import id_field, read_input_jsonl

OPTIONS = {
    "version": "which pinned data version",
    "file": "your own question file in the reference format, instead of the pinned data",
}


def read_rule_questions(path: Path, known_ids: Mapping[str, object]) -> list[Question]:
    """The questions of a rule-task file; ``known_ids``: the suite's checkers (ids not there are errors)."""
    questions: list[Question] = []
    seen: set[str] = set()
    for number, row in read_input_jsonl(path):
        where = f"line {number}"
        for name in ("key", "prompt", "instruction_id_list", "kwargs"):
            if name not in row:
                raise InputError(path, where, f"field {name!r} is missing")
        ids, kwargs = row["instruction_id_list"], row["kwargs"]
        if not isinstance(row["prompt"], str):
            raise InputError(path, where, "field 'prompt' is not a string")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InputError(path, where, "field 'instruction_id_list' is not a list of strings")
        if not isinstance(kwargs, list) or not all(isinstance(k, dict) or k is None for k in kwargs):
            raise InputError(path, where, "field 'kwargs' is not a list of objects")
        if len(ids) != len(kwargs):
            problem = f"has {len(kwargs)} entries for {len(ids)} instructions"
            raise InputError(path, where, f"field 'kwargs' {problem}")
        for instruction_id in ids:
            if instruction_id not in known_ids:
                problem = f"no checker for {instruction_id!r}"
                raise InputError(path, where, f"field 'instruction_id_list': {problem}")
        uid = id_field(path, where, row, ("key",))  # IFEval's and IFBench's keys are integers
        if uid in seen:
            raise InputError(path, where, f"field 'key': {uid!r} appears twice")
        seen.add(uid)
        metadata: dict[str, Any] = {"instruction_id_list": ids, "kwargs": [k or {} for k in kwargs]}
        family = ids[0].split(":", 1)[0] if ids else "default"
        questions.append(Question(uid=uid, prompt=row["prompt"], category=family, metadata=metadata))
    if not questions:
        raise InputError(path, "", "no questions")
    return questions


def rule_benchmark(
    name: str,
    suite: str,
    versions: Mapping[str, PinnedFile],
    default_version: str,
    options: BenchmarkOptions,
    known_ids: Mapping[str, Checker],
) -> Benchmark:
    """A rule-checked benchmark from its pinned data (or ``-B file=``), scored without a judge."""
    chosen = take_options(name, options, OPTIONS)
    info: dict[str, Any] = {"suite": suite}
    if "file" in chosen:
        if "version" in chosen:
            raise JuristError(f"-B file and -B version: {name} takes one or the other")
        path = Path(chosen["file"]).expanduser()
        if not path.is_file():
            raise JuristError(f"-B file: {path} is not a file")
        info |= {"version": "file", "file": str(path), "sha256": sha256_of(path)}
    else:
        version = chosen.get("version", default_version)
        pinned = versions.get(version)
        if pinned is None:
            known = ", ".join(versions)
            raise JuristError(f"-B version: {name} has no version {version!r} (it has: {known})")
        path = resolve(pinned)
        info |= {"version": version, "source": pinned.origin, "sha256": pinned.sha256}
    return Benchmark(
        name,
        read_rule_questions(path, known_ids),
        judge_kind=None,
        metrics=("instruction-following",),
        rule_suite=suite,
        info=info,
        requirements=functools.partial(require_checker_data, known_ids),
    )


def require_checker_data(known_ids: Mapping[str, Checker], questions: Sequence[Question]) -> None:
    """The NLTK data the instructions of ``questions`` use is installed, or one line naming the first
    prompt that needs what is missing and how to install it (a prompt that needs none needs nothing)."""
    uses = (
        (q.uid, instruction_id, kwargs)
        for q in questions
        for instruction_id, kwargs in zip(
            q.metadata["instruction_id_list"], q.metadata["kwargs"], strict=True
        )
    )
    require_resources(known_ids, uses)


def rule_card(name: str, pinned: PinnedFile, checker_data: Need, about: str) -> BenchmarkCard:
    """What ``jurist list`` shows of a rule-checked benchmark: its default version's file and the NLTK
    data its checkers read (no judge)."""
    data = Need("data", lambda: pinned_copy([pinned]), fetch_line(name, pinned.local_paths[0]))
    return BenchmarkCard(name, "rules", 1, None, (data, checker_data), about=about)
