"""What a run still has to do (answers missing, judgments missing), and the stored judgments scoring
reads, without holding answers.

Every answer of every candidate is paired with its baseline's answer and looked up among the stored
judgments by key. The answers and judgments are found through indexes (:mod:`jurist.store.line_index`)
and read back one at a time, so a run keeps a few numbers per answer, not the texts: memory that held
every answer and judgment of all models (1.7 GB at 20k questions × 8 models) stays near flat.

While the generate stage still writes answers, :class:`JudgeFeed` hands the judge stage each job as soon
as its answers exist, so the two stages run at once instead of one after the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from jurist.benchmarks import Question
from jurist.judging import CacheMode, JudgeItem, JudgeKind
from jurist.run.generate import AnswerJob, JudgeJob, PartialGames, WrittenLine
from jurist.run.indexes import RunIndexes
from jurist.store import AnswerIndex, JudgmentIndex

if TYPE_CHECKING:
    from jurist.run.plan import RunPlan

Judged = tuple[JudgeItem, dict[str, Any]]
Pair = tuple[str, str]
"""(judge, model)."""
Entry = tuple[int, int, CacheMode, dict[int, dict[str, Any]] | None]
"""A judge job before its texts are read: question position, sample, cache mode, games paid earlier."""


def answer_work(plan: RunPlan, indexes: RunIndexes) -> dict[str, list[AnswerJob]]:
    """Per model alias, the (question, sample) answers still missing; baselines need sample 0 only."""
    if plan.mode == "judge-only":
        return {}
    wanted = {alias: plan.samples for alias in plan.candidates if not plan.shipped(alias)}
    # Inference-only generates the baselines too, so a later --judge-only has every answer it needs.
    if plan.judges or plan.mode == "inference-only":
        for alias in plan.baselines:
            if not plan.shipped(alias) and alias in plan.specs:
                wanted.setdefault(alias, 1)
    work: dict[str, list[AnswerJob]] = {}
    for alias, samples in wanted.items():
        existing = indexes.answers(alias)
        jobs = (
            AnswerJob(q, tuple(s for s in range(samples) if (q.uid, s) not in existing))
            for q in plan.bench.questions
        )
        work[alias] = [job for job in jobs if job.samples]
    return work


class JudgeWork:
    """The judging side of the run ``plan`` describes: which answers each judge judges, and against what;
    answers and judgments are found through ``indexes``, the run's own (a fresh set when none is given)."""

    def __init__(self, plan: RunPlan, indexes: RunIndexes | None = None) -> None:
        self.plan = plan
        run_dir, shipped = plan.run_dir, plan.bench.shipped_answers
        self.indexes = indexes if indexes is not None else RunIndexes(run_dir, shipped)

    def _index(self, alias: str) -> AnswerIndex:
        return self.indexes.answers(alias)

    def _judgments(self, judge: str, model: str) -> JudgmentIndex:
        return self.indexes.judgments(judge, model)

    def _baseline_indexes(self) -> dict[str, AnswerIndex]:
        return {alias: self._index(alias) for alias in self.plan.baselines}

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
        found = self._both(position, sample, answers, baselines, AnswerIndex.text)
        if found is None:
            return None
        question, baseline, answer, base = found
        written = (
            answers.written(question.uid, sample) if _reads_written(self.plan.kinds.get(judge)) else None
        )
        return JudgeItem(judge, model, question, sample, answer, baseline, base, written=written)

    def keyed_at(
        self,
        judge: str,
        model: str,
        position: int,
        sample: int,
        answers: AnswerIndex,
        baselines: dict[str, AnswerIndex],
    ) -> JudgeItem | None:
        """:meth:`item_at` for looking a judgment up: the answers' hashes from the indexes, no text read
        (``answer`` is ""); None when an answer is missing."""
        found = self._both(position, sample, answers, baselines, AnswerIndex.text_hash)
        if found is None:
            return None
        question, baseline, answer, base = found
        return JudgeItem(judge, model, question, sample, "", baseline, None, hashes=(answer, base))

    def _both(
        self,
        position: int,
        sample: int,
        answers: AnswerIndex,
        baselines: dict[str, AnswerIndex],
        get: Callable[[AnswerIndex, str, int], str | None],
    ) -> tuple[Question, str | None, str, str | None] | None:
        """(question, its baseline, ``get`` of the answer, of the baseline's answer); None when missing."""
        question = self.plan.bench.questions[position]
        answer = get(answers, question.uid, sample)
        if answer is None:
            return None
        baseline = self.plan.bench.baseline_for(question)
        base: str | None = None
        if baseline is not None:
            index = baselines.get(baseline)
            base = get(index, question.uid, 0) if index is not None else None
            if base is None:
                return None
        return question, baseline, answer, base

    def _items(
        self,
        judge: str,
        model: str,
        answers: AnswerIndex,
        baselines: dict[str, AnswerIndex],
        positions: range | None = None,
    ) -> Iterator[tuple[int, JudgeItem]]:
        """Keyed items (:meth:`keyed_at`) of every answer on disk at ``positions`` (default: all)."""
        for position in positions if positions is not None else range(len(self.plan.bench.questions)):
            question = self.plan.bench.questions[position]
            for sample in range(self.plan.samples):
                if (question.uid, sample) in answers:
                    item = self.keyed_at(judge, model, position, sample, answers, baselines)
                    if item is not None:
                        yield position, item

    def judged(self) -> Iterator[Judged]:
        """Every answer's stored judgment for the *current* answers and prompt (answers with none are left
        out), one (judge, model) file at a time; the items are keyed ones (:meth:`keyed_at`: no texts)."""
        for item, stored, key in self.judged_keys():
            record = stored.record(key)
            if record is not None:
                yield item, record

    def judged_keys(self) -> Iterator[tuple[JudgeItem, JudgmentIndex, str]]:
        """:meth:`judged` before any judgment is read: each item with a stored judgment, the index that
        holds it and its key."""
        baselines = self._baseline_indexes()
        for judge in self.plan.judges:
            kind = self.plan.kinds[judge]
            for model in self.plan.candidates:
                stored = self._judgments(judge, model)
                if not len(stored):
                    continue
                for _, item in self._items(judge, model, self._index(model), baselines):
                    key = kind.key(item)
                    if key in stored:
                        yield item, stored, key

    def todo(self, rejudge_invalid: bool) -> dict[Pair, JudgeJobs]:
        """Per (judge, model): answers with no judgment yet (or an invalid one, with ``rejudge_invalid``);
        games an earlier run paid for (``partial_games.jsonl``) go with their job."""
        return JudgeFeed(self, rejudge_invalid).todo()


class JudgeFeed:
    """The judge stage's work while answers are still being written: the jobs there are now
    (:meth:`todo`) and the ones each newly written answer makes possible (:meth:`answered`).

    A job is handed out once: an answer on disk when the feed is built is in :meth:`todo` (or waits for
    its baseline's answer), one written later comes through :meth:`answered`. Build it once the shipped
    answers are on disk; its indexes then follow the answer files as the generate stage appends to them.
    """

    def __init__(self, work: JudgeWork, rejudge_invalid: bool) -> None:
        self.work = work
        self.rejudge_invalid = rejudge_invalid
        self.paid = PartialGames.load(work.plan.run_dir.partial_games)
        self.baselines = work._baseline_indexes()
        self.answers = {model: work._index(model) for model in work.plan.candidates}
        pairs = [(judge, model) for model in work.plan.candidates for judge in work.plan.judges]
        self.stored = {pair: work._judgments(*pair) for pair in pairs}
        self._positions: dict[str, int] | None = None
        # Per (judge, model), a byte per (position, sample) whose job was handed out: a baseline answer
        # written while todo_parts is still reading would otherwise hand out its waiting candidates' jobs
        # twice, once through answered() and again when todo_parts reaches that question.
        slots = len(work.plan.bench.questions) * work.plan.samples
        self._handed = {pair: bytearray(slots) for pair in pairs}

    def todo(self) -> dict[Pair, JudgeJobs]:
        """Per (judge, model): the jobs whose answers are on disk now."""
        everything = range(len(self.work.plan.bench.questions))
        return {pair: self._jobs(pair, self._todo_entries(pair, everything)) for pair in self._pairs()}

    def todo_parts(self, questions: int = 64) -> Iterator[dict[Pair, JudgeJobs]]:
        """:meth:`todo` ``questions`` questions at a time, so that the caller can let requests go out
        between parts: the judge stage reads every answer already written (their texts give the keys
        of their judgments), which held the event loop for ~0.4 s in one piece."""
        total = len(self.work.plan.bench.questions)
        for start in range(0, total, questions):
            part = range(start, min(start + questions, total))
            found = {pair: self._todo_entries(pair, part) for pair in self._pairs()}
            yield {pair: self._jobs(pair, entries) for pair, entries in found.items() if entries}

    def _pairs(self) -> list[Pair]:
        return [(judge, model) for model in self.answers for judge in self.work.plan.judges]

    def _todo_entries(self, pair: Pair, positions: range) -> list[Entry]:
        judge, model = pair
        items = self.work._items(judge, model, self.answers[model], self.baselines, positions)
        return [entry for position, item in items if (entry := self._entry(pair, position, item)) is not None]

    def answered(
        self, alias: str, uid: str, sample: int, line: WrittenLine | None = None
    ) -> dict[Pair, JudgeJobs]:
        """The jobs an answer just appended to ``alias``'s file makes possible: a candidate's own judgments
        (once its baseline's answer exists too), or, for a baseline's answer, those that waited for it.
        ``line``: where the answer was written and its record, indexed without reading it back."""
        if alias in self.answers:
            _take(self.answers[alias], line)
            waiting = [(alias, sample)]
        elif alias in self.baselines and sample == 0:
            _take(self.baselines[alias], line)
            question = self.work.plan.bench.questions[self._position(uid)]
            if self.work.plan.bench.baseline_for(question) != alias:
                return {}
            waiting = [
                (model, s)
                for model, answers in self.answers.items()
                for s in range(self.work.plan.samples)
                if (uid, s) in answers
            ]
        else:
            return {}
        position = self._position(uid)
        entries: dict[Pair, list[Entry]] = {}
        for model, s in waiting:
            for judge in self.work.plan.judges:
                item = self.work.keyed_at(judge, model, position, s, self.answers[model], self.baselines)
                entry = None if item is None else self._entry((judge, model), position, item)
                if entry is not None:
                    entries.setdefault((judge, model), []).append(entry)
        return {pair: self._jobs(pair, found) for pair, found in entries.items()}

    def _position(self, uid: str) -> int:
        if self._positions is None:
            self._positions = {q.uid: n for n, q in enumerate(self.work.plan.bench.questions)}
        return self._positions[uid]

    def _entry(self, pair: Pair, position: int, item: JudgeItem) -> Entry | None:
        """``item``'s job, or None when its current judgment is stored (and valid, or kept as it is) or the
        job was handed out already."""
        handed, slot = self._handed[pair], position * self.work.plan.samples + item.sample
        if handed[slot]:
            return None
        entry = self._new_entry(pair, position, item)
        if entry is not None:
            handed[slot] = 1
        return entry

    def _new_entry(self, pair: Pair, position: int, item: JudgeItem) -> Entry | None:
        key = self.work.plan.kinds[pair[0]].key(item)
        stored = self.stored[pair]
        if key not in stored:
            return (position, item.sample, "use", self.paid.get(key))
        if self.rejudge_invalid and stored.invalid(key):
            return (position, item.sample, "refresh", None)
        return None

    def _jobs(self, pair: Pair, entries: list[Entry]) -> JudgeJobs:
        judge, model = pair
        kind = self.work.plan.kinds[judge]
        return JudgeJobs(self.work, judge, model, kind, entries, self.answers[model], self.baselines)


class JudgeJobs:
    """The jobs of one (judge, model), as a sized collection built lazily: each job's texts are read from
    disk when a worker takes it, so the judge stage never holds more than its workers' jobs."""

    def __init__(
        self,
        work: JudgeWork,
        judge: str,
        model: str,
        kind: JudgeKind,
        entries: list[Entry],
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


def _reads_written(kind: JudgeKind | None) -> bool:
    """Whether ``kind`` grades the answer as the model wrote it (WritingBench's critic cuts its thought
    as upstream does), so the item carries that text too."""
    return bool(getattr(kind, "reads_written", False))


def _take(index: AnswerIndex, line: WrittenLine | None) -> None:
    """``index`` caught up with an answer just written: from its line as told, else read from the file."""
    if line is None:
        index.catch_up()
    else:
        index.learned(*line)
