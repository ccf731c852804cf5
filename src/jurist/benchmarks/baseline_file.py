"""``--baseline FILE``: judge against answers someone already has (jurist's or Arena-Hard's answer shape).

The answers become the benchmark's shipped answers for that baseline, so they are written to the run
directory, hashed into judgment keys and cited like any other, and nothing is generated for them.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from jurist.benchmarks.base import Benchmark
from jurist.errors import InputError
from jurist.store import answer_text, id_field, iter_numbered_jsonl


def read_answer_file(path: Path) -> tuple[str, dict[str, str]]:
    """(model name, uid -> answer text) of an answers file; the name is the records' ``model``, else the
    file's stem. Only sample 0 is read (a baseline has one answer per question)."""
    answers: dict[str, str] = {}
    names: set[str] = set()
    for line, record in iter_numbered_jsonl(path, repair=False):
        uid = id_field(path, f"line {line}", record, ("uid", "question_id"))
        text = answer_text(record)
        if text is None:
            raise InputError(path, f"line {line}", "no answer text (field 'answer', 'messages' or 'choices')")
        if record.get("sample", 0) == 0:
            answers[uid] = text
        if isinstance(record.get("model"), str):
            names.add(record["model"])
    if not answers:
        raise InputError(path, "", "no answers in file")
    name = names.pop() if len(names) == 1 else path.name.removesuffix(".jsonl")
    return name, answers


def baseline_from(bench: Benchmark, value: str) -> Benchmark:
    """``bench`` judged against ``value``: a model alias, or a file of answers (then shipped with it)."""
    path = Path(value)
    # os.path.isfile, not Path.is_file: an alias too long to be a file name is an alias, not an OSError
    if not (path.suffix == ".jsonl" or os.path.isfile(path)):
        return bench.with_baseline(value)
    if not os.path.isfile(path):
        raise InputError(path, "", "--baseline: answers file not found")
    name, answers = read_answer_file(path)
    missing = [q.uid for q in bench.questions if q.uid not in answers]
    if missing:
        raise InputError(
            path,
            "",
            f"--baseline: no answer for {len(missing)} question(s) of {bench.name}, e.g. {missing[0]!r}",
        )
    shipped = {**bench.shipped_answers, name: answers}
    return dataclasses.replace(bench, shipped_answers=shipped).with_baseline(name)
