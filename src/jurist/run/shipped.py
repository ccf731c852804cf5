"""Answers a run did not generate: the benchmark's own (a reference baseline, JudgeBench's pairs) and a
user's ``--answers FILE``; written to ``answers/`` like generated ones, so judgments and checks can hash
and cite them, and replaced when the source's text changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from jurist.benchmarks import Benchmark
from jurist.store import AnswerIndex, JsonlAppender, RunDir, answer_record, text_hash
from jurist.tokens import answer_style_metadata


def write_shipped_answers(
    run_dir: RunDir, bench: Benchmark, aliases: Iterable[str]
) -> dict[str, AnswerIndex]:
    """Append each shipped answer that is missing on disk or whose text differs (the last line wins): a
    candidate's for every question, a baseline's for the questions judged against it (Arena-Hard v2.0
    judges hard prompts against o3-mini and creative writing against gemini-2.0-flash, so half of the two
    files' 1,500 answers; a later run with ``--baseline`` writes the rest it needs).

    Returns the index of each alias's answers file, caught up with what was written: the judge stage
    reads the shipped answers through it. Built here, in the writer's thread, it is not built on the
    event loop, where parsing Arena-Hard v2.0's baseline answers held the first requests ~0.1 s."""
    indexes: dict[str, AnswerIndex] = {}
    baselines = set(bench.baselines())
    for alias in aliases:
        shipped = bench.shipped_answers.get(alias)
        if not shipped:
            continue
        source = str(bench.info.get("answers_source", {}).get(alias, "benchmark"))
        stored = bench.shipped_metadata.get(alias, {})
        index = indexes[alias] = run_dir.answer_index(alias)
        judged = (q for q in bench.questions if alias not in baselines or bench.baseline_for(q) == alias)
        missing = [q for q in judged if q.uid in shipped and _differs(index, q.uid, shipped[q.uid])]
        if not missing:
            continue
        with JsonlAppender(run_dir.answers(alias)) as out:
            for q in missing:
                record = answer_record(
                    uid=q.uid,
                    sample=0,
                    model=alias,
                    category=q.category,
                    answer=shipped[q.uid],
                    tstamp=time.time(),
                    source=source,
                    # as generated answers have: the stored counts where the source brings them
                    metadata=dict(stored.get(q.uid) or answer_style_metadata(shipped[q.uid])),
                )
                written = dict(record)
                index.learned(out.append(written), written)  # indexed as written: 1,500 lines not reparsed
    return indexes


def _differs(index: AnswerIndex, uid: str, text: str) -> bool:
    """Whether the answers file lacks ``text`` as ``uid``'s answer: a text is hashed only where a stored
    one is there to compare (a fresh run's 1,500 Arena-Hard baseline answers skip it)."""
    stored = index.text_hash(uid, 0)
    return stored is None or stored != text_hash(text)


def start_writing_shipped(
    run_dir: RunDir, bench: Benchmark, aliases: Iterable[str]
) -> asyncio.Future[dict[str, AnswerIndex]]:
    """:func:`write_shipped_answers` in a thread, started now, so the first requests go out while it runs
    (a shipped answer without stored style metadata is tokenised: 1.8 s for Arena-Hard v2.0's 1,500 when
    none was stored). Await it before anything reads those answers."""
    return asyncio.ensure_future(asyncio.to_thread(write_shipped_answers, run_dir, bench, list(aliases)))
