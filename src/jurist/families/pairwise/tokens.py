"""Average answer length in tokens (``avg_tokens``), the column Arena-Hard and AlpacaEval print by a score.

A score is read together with how long the answers were (judges favour long answers), so every leaderboard
row carries the mean o200k token count of the model's answers to the questions that row scores. The count
is Arena-Hard's ``metadata.token_len`` where an answer stores it (jurist runs and style-enabled imports do);
otherwise it is counted here with the same encoding (:func:`jurist.tokens.count_tokens`). When no answers
exist (a battles-only run) or the tokenizer is unavailable, ``avg_tokens`` is None and a note says why.
"""

from __future__ import annotations

import array
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from jurist.ratings import Battle, Row

if TYPE_CHECKING:
    from jurist.store import AnswerIndex, RunDir


Lengths = tuple[list[str], "array.array[int]"]
"""One model's answers as two columns: each answer's uid and its token length (one entry per sample)."""


class TokenLengths:
    """Each model's answers' token lengths, read once per model and kept as two columns: at 50k questions
    a dict of per-uid lists (and the (uid, sample) dict it was built from) held 16 MB at scoring, the
    run's memory peak; the columns hold 0.8 MB."""

    def __init__(
        self, run: RunDir, notes: list[str], indexes: Mapping[str, AnswerIndex] | None = None
    ) -> None:
        self.run = run
        self.notes = notes
        self._models: dict[str, Lengths] = {}
        self._no_tokenizer = False
        self._indexes = indexes or {}  # the run's own answer indexes: stored lengths, no file read again

    def model(self, name: str) -> Lengths:
        if name not in self._models:
            self._models[name] = self._load(name)
        return self._models[name]

    def _load(self, name: str) -> Lengths:
        index = self._indexes.get(name)
        if index is None:
            return self._load_file(name)
        index.catch_up()
        uids: list[str] = []
        lengths = array.array("q")
        missing: dict[tuple[str, int], str] = {}
        for uid, sample in index.keys():
            token_len = index.token_len(uid, sample)
            if token_len is not None:
                uids.append(uid)
                lengths.append(token_len)
            elif (text := index.text(uid, sample)) is not None:
                missing[(uid, sample)] = text
        return self._with_counted(name, uids, lengths, missing)

    def _load_file(self, name: str) -> Lengths:
        """An answers file with no index of this run (an import): the last record of each key counts."""
        from jurist.store import answer_text, iter_numbered_jsonl, sample_of

        latest: dict[tuple[str, int], int | None] = {}
        missing: dict[tuple[str, int], str] = {}
        path = self.run.answers(name)
        if not path.is_file():
            return [], array.array("q")
        for _, record in iter_numbered_jsonl(path, repair=False):
            key = (str(record.get("uid", record.get("question_id"))), sample_of(record))
            metadata = record.get("metadata") or record.get("conv_metadata")
            token_len = metadata.get("token_len") if isinstance(metadata, dict) else None
            if isinstance(token_len, int) and not isinstance(token_len, bool):
                latest[key] = token_len
                missing.pop(key, None)
            elif (text := answer_text(record)) is not None:
                latest[key] = None
                missing[key] = text
        stored = [(uid, n) for (uid, _), n in latest.items() if n is not None]
        return self._with_counted(
            name, [uid for uid, _ in stored], array.array("q", (n for _, n in stored)), missing
        )

    def _with_counted(
        self, name: str, uids: list[str], lengths: array.array[int], missing: dict[tuple[str, int], str]
    ) -> Lengths:
        """The columns, with the answers that store no ``token_len`` counted now (o200k), once the
        tokenizer is known to load; without it they are left out and a note says so once."""
        if not missing or self._no_tokenizer:
            return uids, lengths
        from jurist.tokens import count_tokens

        try:
            counted = [(uid, count_tokens(text)) for (uid, _), text in missing.items()]
        except (RuntimeError, ImportError) as exc:  # no offline o200k ranks
            self._no_tokenizer = True
            self.notes.append(f"avg_tokens left out for answers without stored token_len: {exc}")
            return uids, lengths
        for uid, count in counted:
            uids.append(uid)
            lengths.append(count)
        self.notes.append(f"avg_tokens: token_len counted for {len(missing)} answers of {name} (none stored)")
        return uids, lengths


def add_avg_tokens(rows: list[Row], battles: list[Battle], lengths: TokenLengths) -> None:
    """Set each row's ``avg_tokens``: the mean token length of its model's answers to the questions that
    the row's judge scored it on (every sample counts once); None where no such answer is stored."""
    uids: dict[tuple[str, str], set[str]] = defaultdict(set)
    for battle in battles:
        judge = battle.get("judge", "")
        for side in ("model_a", "model_b"):
            uids[(judge, battle[side])].add(str(battle["uid"]))
    for row in rows:
        answered, counts = lengths.model(row["model"])
        scored = uids.get((row.get("judge", ""), row["model"]), set())
        total = kept = 0
        for uid, n in zip(answered, counts, strict=True):
            if uid in scored:
                total += n
                kept += 1
        row["avg_tokens"] = round(total / kept, 1) if kept else None
