"""A run on a question file keeps its questions: the file's path in run.json and a copy of what was asked.

A benchmark named by name is loaded again by name wherever its run is read (``jurist view`` shows the
prompts from it), but a question file (``--bench path/question.jsonl``) may be moved, edited or deleted
after the run. So run.json records the file's absolute path (``bench_path``) and the run directory keeps
``questions.jsonl``: each question the run asked (after ``--limit``; earlier runs' questions in the same
directory stay) as uid, category and prompt, the text only, no metadata, so the copy is about as large as
the prompts. A copy that would be over :data:`KEEP_LIMIT` bytes is not written; run.json then says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist.benchmarks import Question
from jurist.store import RunDir, iter_jsonl, jsonl_line, rewrite_lines_atomic

KEPT_FILE = "questions.jsonl"
KEEP_LIMIT = 32 * 1024 * 1024
"""The largest copy kept (bytes): an arena export of 100k prompts is not copied into every run."""


def keep_questions(run_dir: RunDir, bench: str, questions: Sequence[Question]) -> dict[str, Any]:
    """run.json's fields for a run of ``bench``: none for a benchmark named by name; for a file, its path
    (``bench_path``) and the copy kept (``questions_kept``, relative to the run directory) or, when the copy
    would be too large, why not (``questions_not_kept``)."""
    source = Path(bench)
    if not source.is_file():
        return {}
    fields: dict[str, Any] = {"bench_path": str(source.resolve())}
    kept = run_dir.root / KEPT_FILE
    rows: dict[str, dict[str, Any]] = {}
    if kept.is_file():
        rows = {str(row.get("uid")): row for row in iter_jsonl(kept, repair=False) if isinstance(row, dict)}
    for question in questions:
        rows[question.uid] = {"uid": question.uid, "category": question.category, "prompt": question.prompt}
    lines = [jsonl_line(row) for row in rows.values()]  # encoded once: measured, then written
    size = sum(map(len, lines))
    if size > KEEP_LIMIT:
        mib, limit = size / 2**20, KEEP_LIMIT // 2**20
        fields["questions_not_kept"] = f"the prompts are {mib:.0f} MiB (over {limit} MiB)"
        return fields
    rewrite_lines_atomic(kept, lines)
    fields["questions_kept"] = KEPT_FILE
    return fields
