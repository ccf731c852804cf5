"""What the judge stage still has to do, and the stored judgments scoring reads, without holding answers.

Every answer of every candidate is paired with its baseline's answer and looked up among the stored
judgments by key. The answers and judgments are found through indexes (:mod:`jurist.store.line_index`)
and read back one at a time, so a run keeps a few numbers per answer, not the texts: memory that held
every answer and judgment of all models (1.7 GB at 20k questions × 8 models) stays near flat.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.benchmarks.base import Benchmark
from jurist.judging.base import CacheMode, JudgeItem, JudgeKind
from jurist.stages import JudgeJob, PartialGames
from jurist.store.line_index import AnswerIndex
from jurist.store.run_dir import RunDir

Judged = tuple[JudgeItem, dict[str, Any]]


@dataclass(frozen=True)
class JudgeWork:
    """The judging side of one run: which answers each judge judges, and against what."""

    bench: Benchmark
    run_dir: RunDir
    judges: Sequence[str]
    candidates: Sequence[str]
    baselines: Sequence[str]
    samples: int
    kinds: dict[str, JudgeKind]

    def _index(self, alias: str) -> AnswerIndex:
        return self.run_dir.answer_index(alias, self.bench.shipped_answers.get(alias))

    def _baseline_indexes(self) -> dict[str, AnswerIndex]:
        return {alias: self._index(alias) for alias in self.baselines}

    def item_at(
        self,
        judge: str,
        model: str,
        position: int,
        sample: int,
        answers: AnswerIndex,
        baselines: dict[str, AnswerIndex],
    ) -> JudgeItem | None:
        """The item for question ``position``'s sample, texts read now; None when an answer is missing."""
        question = self.bench.questions[position]
        answer = answers.text(question.uid, sample)
        if answer is None:
            return None
        baseline = self.bench.baseline_for(question)
        base: str | None = None
        if baseline is not None:
            index = baselines.get(baseline)
            base = index.text(question.uid, 0) if index is not None else None
            if base is None:
                return None
        return JudgeItem(judge, model, question, sample, answer, baseline, base)

    def _items(
        self, judge: str, model: str, answers: AnswerIndex, baselines: dict[str, AnswerIndex]
    ) -> Iterator[tuple[int, JudgeItem]]:
        for position, question in enumerate(self.bench.questions):
            for sample in range(self.samples):
                if (question.uid, sample) in answers:
                    item = self.item_at(judge, model, position, sample, answers, baselines)
                    if item is not None:
                        yield position, item

    def judged(self) -> Iterator[Judged]:
        """Every answer's stored judgment for the *current* answers and prompt (answers with none are left
        out), one (judge, model) file at a time."""
        baselines = self._baseline_indexes()
        for judge in self.judges:
            kind = self.kinds[judge]
            for model in self.candidates:
                stored = self.run_dir.judgment_index(judge, model)
                if not len(stored):
                    continue
                for _, item in self._items(judge, model, self._index(model), baselines):
                    record = stored.record(kind.key(item))
                    if record is not None:
                        yield item, record

    def todo(self, rejudge_invalid: bool) -> dict[tuple[str, str], JudgeJobs]:
        """Per (judge, model): answers with no judgment yet (or an invalid one, with ``rejudge_invalid``);
        games an earlier run paid for (``partial_games.jsonl``) go with their job."""
        paid = PartialGames.load(self.run_dir.partial_games)
        baselines = self._baseline_indexes()
        work: dict[tuple[str, str], JudgeJobs] = {}
        for model in self.candidates:
            answers = self._index(model)
            for judge in self.judges:
                kind = self.kinds[judge]
                stored = self.run_dir.judgment_index(judge, model)
                entries: list[tuple[int, int, CacheMode, dict[int, dict[str, Any]] | None]] = []
                for position, item in self._items(judge, model, answers, baselines):
                    key = kind.key(item)
                    if key not in stored:
                        entries.append((position, item.sample, "use", paid.get(key)))
                    elif rejudge_invalid and stored.invalid(key):
                        entries.append((position, item.sample, "refresh", None))
                work[(judge, model)] = JudgeJobs(self, judge, model, kind, entries, answers, baselines)
        return work


class JudgeJobs:
    """The jobs of one (judge, model), as a sized collection built lazily: each job's texts are read from
    disk when a worker takes it, so the judge stage never holds more than its workers' jobs."""

    def __init__(
        self,
        work: JudgeWork,
        judge: str,
        model: str,
        kind: JudgeKind,
        entries: list[tuple[int, int, CacheMode, dict[int, dict[str, Any]] | None]],
        answers: AnswerIndex,
        baselines: dict[str, AnswerIndex],
    ) -> None:
        self._work, self._judge, self._model, self._kind = work, judge, model, kind
        self._entries, self._answers, self._baselines = entries, answers, baselines

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __contains__(self, job: object) -> bool:
        return any(job == other for other in self)

    def __iter__(self) -> Iterator[JudgeJob]:
        for position, sample, cache, earlier in self._entries:
            item = self._work.item_at(
                self._judge, self._model, position, sample, self._answers, self._baselines
            )
            if item is not None:  # an answer file rewritten under us: the next run picks it up
                yield JudgeJob(item, self._kind, cache, earlier)
