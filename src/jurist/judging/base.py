"""What a judge kind is: how one unit of judging work becomes requests, a stored judgment and outcomes.

The runner knows nothing of games, rubrics or rules: it builds :class:`JudgeItem`s, skips those whose
:meth:`JudgeKind.key` is already stored, hands the rest to :meth:`JudgeKind.judge` through the engine, and
turns stored judgments into outcomes with :meth:`JudgeKind.outcomes`. An unreadable judge reply is an
``invalid`` judgment (a result, counted), never an exception; only a transport failure raises
(:class:`~jurist.engine.client.RequestFailed`), so the item is retried on the next run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from jurist.engine import ModelClient, RequestFailed
from jurist.store import Question, text_hash

CacheMode = Literal["use", "refresh", "off"]
"""How a judge request uses the request cache: ``refresh`` asks again (re-judging an invalid verdict)."""

OutcomeKind = Literal["battle", "point"]


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One answer (one sample of one model) to judge, with what it is compared against, if anything.

    An item made only to look its judgment up (:meth:`jurist.run.work.JudgeWork.keyed_at`) carries the
    answers' hashes instead of their texts (``answer`` is then ""): a key needs no more, and a re-run that
    finds every judgment stored then reads no answer text twice (the 50k-question re-run read 200k)."""

    judge: str
    model: str
    question: Question
    sample: int
    answer: str
    baseline: str | None = None
    baseline_answer: str | None = None
    hashes: tuple[str, str | None] | None = None
    """(answer hash, baseline answer hash) where the texts were not read; None: hash the texts."""
    written: str | None = None
    """The answer as the model wrote it (a leading thought the engine moved out put back), for a kind
    whose upstream cuts the thought its own way (``reads_written``); None: ``answer`` is all it sees."""

    def answer_hash(self) -> str:
        return self.hashes[0] if self.hashes is not None else text_hash(self.answer)

    def baseline_hash(self) -> str | None:
        if self.hashes is not None:
            return self.hashes[1]
        return None if self.baseline_answer is None else text_hash(self.baseline_answer)


class PartialJudgment(Exception):
    """Some parts of a judgment succeeded and one failed after retries: the failure is recorded and
    retried next run, and the parts that succeeded (``games``, by part number) are kept, never paid twice."""

    def __init__(self, failure: RequestFailed, games: dict[int, dict[str, Any]]) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.games = games


class JudgeKind(Protocol):
    """A way of judging answers (pairwise games today; rubric grading and rule checks next)."""

    name: str
    outcome: OutcomeKind

    @property
    def fingerprint(self) -> str:
        """Hash of everything besides the answers that shapes a judgment; part of every key."""
        ...

    @property
    def protocol_name(self) -> str:
        """Which prompts and reader this judge uses (for run.json and reports)."""
        ...

    def key(self, item: JudgeItem) -> str:
        """Identity of the stored judgment of ``item``: changes whenever a re-judge is due."""
        ...

    async def judge(
        self,
        client: ModelClient,
        item: JudgeItem,
        *,
        cache: CacheMode,
        earlier: dict[int, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Judge ``item`` and return the record to store (its ``key`` field set). ``earlier``: parts an
        earlier run already paid for (by part number), reused instead of asked again."""
        ...

    def outcomes(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The battles (or points) a stored judgment contributes to scoring."""
        ...
