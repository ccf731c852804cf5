"""The indexes of one run's answers and judgments, owned by the run: each file is indexed once.

The answer stage learns what is on disk through them, the judge stage's feed follows them as answers and
judgments are appended, and scoring reads the judgments (and the answers' stored token lengths) through
the same ones, so no file of a run is parsed twice (at 50k questions a parse of one answers file cost
~0.6 s). An index holds offsets, not texts (:mod:`jurist.store.line_index`).
"""

from __future__ import annotations

from collections.abc import Mapping

from jurist.store import AnswerIndex, JudgmentIndex, RunDir


class RunIndexes:
    """Answer indexes per alias and judgment indexes per (judge, model) of one run directory, each built
    on first use and caught up with its file on every later one. ``shipped``: the benchmark's own answers
    per alias, which count as present until they are written (:meth:`RunDir.answer_index`)."""

    def __init__(self, run_dir: RunDir, shipped: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.run_dir = run_dir
        self._shipped = shipped or {}
        self._answers: dict[str, AnswerIndex] = {}
        self._judgments: dict[tuple[str, str], JudgmentIndex] = {}

    def answers(self, alias: str) -> AnswerIndex:
        """``alias``'s answer index, caught up with what was appended since it was built."""
        index = self._answers.get(alias)
        if index is None:
            index = self._answers[alias] = self.run_dir.answer_index(alias, self._shipped.get(alias))
        else:
            index.catch_up()
        return index

    def judgments(self, judge: str, model: str) -> JudgmentIndex:
        """``judge``'s judgment index on ``model``, caught up likewise."""
        index = self._judgments.get((judge, model))
        if index is None:
            index = self._judgments[(judge, model)] = self.run_dir.judgment_index(judge, model)
        else:
            index.catch_up()
        return index

    def put_answers(self, indexes: Mapping[str, AnswerIndex]) -> None:
        """Answer indexes built elsewhere (the shipped answers' writer, in its thread), used from now on."""
        self._answers.update(indexes)

    def built_answers(self) -> Mapping[str, AnswerIndex]:
        """The answer indexes built so far, as they are (scoring takes stored token lengths from them)."""
        return dict(self._answers)

    def release(self) -> None:
        """Let every index go (the run is scored: nothing reads them again)."""
        self._answers.clear()
        self._judgments.clear()


__all__ = ["RunIndexes"]
