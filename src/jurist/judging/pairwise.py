"""Pairwise judging with position swap: game 1 puts the baseline in position A, game 2 swaps them.

A question whose metadata names a ``model_position`` ("A": the model shown first, "B": second) is judged
in that one game only, as JudgeArena's arena pipeline judges each battle once at a drawn position.

A reply without a valid label is re-asked once; if the second reply has none either, the game is recorded
as invalid (a result, counted and reported). A transport failure is not a result: it propagates as
:class:`~jurist.engine.client.RequestFailed` and the question is judged again on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any

from jurist.config import ModelSpec
from jurist.engine import ModelClient, RequestFailed
from jurist.errors import JuristError, did_you_mean
from jurist.judging.base import CacheMode, JudgeItem, OutcomeKind, PartialJudgment
from jurist.judging.kinds import JudgeKindSetup
from jurist.judging.protocols import PROTOCOLS, JudgeProtocol, protocol_set
from jurist.judging.verdict import LABEL_OUTCOME
from jurist.store import Question, sample_of, text_hash

Shown = tuple[tuple[str, str, str], str]
"""One game's material as the judge sees it (question, answers A and B, neutralised) and its user message."""

# A judge reply is stored whole up to 2 x RAW_KEEP characters; past that, its head and tail with a marker.
RAW_KEEP = 16_384
_CUT_MARKER = "\n[... {cut} characters cut by jurist ...]\n"


def cap_raw(text: str, keep: int = RAW_KEEP) -> tuple[str, int | None]:
    """``text`` for the judgment file, and its original length when it was cut (else None).

    A runaway judge reply (a 20 MB loop) stored whole made a 126 MB judgments file that every later
    read of the run pays for. The head shows how the reply began and the tail holds its final verdict, so
    both are kept; the verdict itself is always read from the full text before this cut.
    """
    if len(text) <= 2 * keep:
        return text, None
    cut = len(text) - 2 * keep
    return text[:keep] + _CUT_MARKER.format(cut=cut) + text[-keep:], len(text)


def reask_context(text: str) -> str:
    """The first reply as a re-ask sends it back: cut like the stored ``raw`` (head and tail).

    Sent whole, a 20 MB runaway reply went back to the judge in full (and again on every retry of the
    re-ask), past any context window. The tail holds the end the judge is asked to conclude; a reply
    short enough to be stored whole is sent whole, so ordinary re-asks (and their cache keys) are as before.
    """
    return cap_raw(text)[0]


def _stored(game: dict[str, Any], field: str, text: str) -> None:
    """Put ``text`` (capped) in ``game[field]``, with ``{field}_chars`` when it was cut."""
    game[field], chars = cap_raw(text)
    if chars is not None:
        game[f"{field}_chars"] = chars


def judgment_key(
    judge: str,
    model: str,
    baseline: str,
    uid: str,
    answer_hash: str,
    baseline_hash: str,
    prompt_hash: str,
    sample: int = 0,
    games: tuple[int, ...] = (1, 2),
) -> str:
    """Identity of a judgment: a changed answer, baseline answer, judge prompt or set of games makes a
    new key.

    Sample 0 of both games hashes exactly as schema-1 runs did, so their judgments are found again on resume.
    """
    parts: list[Any] = [judge, model, baseline, uid, answer_hash, baseline_hash, prompt_hash]
    if sample:
        parts.append(sample)
    if games != (1, 2):
        parts.append({"games": list(games)})
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


def games_of(question: Question) -> tuple[int, ...]:
    """The games ``question`` is judged in: both, or the one its ``model_position`` names (game 2 shows
    the model first, game 1 second)."""
    position = question.metadata.get("model_position")
    if position is None:
        return (1, 2)
    if position not in ("A", "B"):
        raise ValueError(f"question {question.uid}: model_position {position!r} is not A or B")
    return (2,) if position == "A" else (1,)


def shared_start(protocol: JudgeProtocol, question: str, base: str, answer: str) -> int:
    """Characters at the start of the user message both games of a question share (the question, before
    the answers): with the system prompt, the prefix a provider's prompt cache can hold for both."""
    return _both_games(protocol, question, base, answer)[2]


def _both_games(protocol: JudgeProtocol, question: str, base: str, answer: str) -> tuple[Shown, Shown, int]:
    """Game 1's and game 2's material as the judge sees it (neutralised once for both) with its user
    message, and the characters both messages share (:func:`shared_start`, without building them twice)."""
    shown_question, shown_base, shown_answer = protocol.shown(question, base, answer)
    first_shown = (shown_question, shown_base, shown_answer)
    second_shown = (shown_question, shown_answer, shown_base)
    first, second = protocol.shown_message(first_shown), protocol.shown_message(second_shown)
    return (first_shown, first), (second_shown, second), common_prefix_length(first, second)


def common_prefix_length(first: str, second: str) -> int:
    """How many characters two strings share at their start: ``len(os.path.commonprefix(...))``, found
    by halving with slice comparisons (compared in C) instead of a Python loop over every character,
    which took 0.1 s of a 750-question run's CPU on the long prompts."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[low:middle] == second[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


async def judge_game(
    client: ModelClient,
    protocol: JudgeProtocol,
    question: str,
    answer_a: str,
    answer_b: str,
    *,
    sample: int = 0,
    cache: CacheMode = "use",
    shared_prefix: int = 0,
    prepared: Shown | None = None,
) -> dict[str, Any]:
    """Ask one judge for one verdict (with one re-ask); returns the game record. ``shared_prefix``: the
    start of the user message the question's other game shares (a prompt-cache mark, :func:`shared_start`);
    ``prepared``: this game's shown material and user message, made already (:func:`_both_games`).

    The judge sees the question and answers with their verdict labels neutralised, and its reply is read
    against that shown material, so a label inside an answer cannot become the verdict (see verdict.py).
    """
    if prepared is None:
        shown = protocol.shown(question, answer_a, answer_b)
        prepared = (shown, protocol.shown_message(shown))
    shown, user_message = prepared
    messages: list[dict[str, Any]] = []
    if protocol.system_prompt:
        messages.append({"role": "system", "content": protocol.system_prompt})
    messages.append({"role": "user", "content": user_message})
    params = protocol.request_params(client.spec)
    first = await client.complete(
        messages, sample=sample, cache=cache, phase="judge", shared_prefix=shared_prefix, **params
    )
    label, how = protocol.read(first.text, first.logprobs, shown)
    game: dict[str, Any] = {"label": label}
    _stored(game, "raw", first.text)
    game.update({"usage": first.usage(), **how})
    if protocol.asks_again(label, how):
        follow_up = messages + [
            {"role": "assistant", "content": reask_context(first.text)},
            {"role": "user", "content": protocol.reask_text},
        ]
        second = await client.complete(
            follow_up, sample=sample, cache=cache, phase="reask", shared_prefix=shared_prefix, **params
        )
        label, how = protocol.read(second.text, second.logprobs, shown)
        game.update({"label": label, "reask_usage": second.usage(), **how})
        _stored(game, "reask_raw", second.text)
    return game


def battles_from_judgment(record: dict[str, Any], *, strong_weight: int = 3) -> list[dict[str, Any]]:
    """One battle per game; a question with an invalid game yields none (Arena-Hard v2 drops it), unless
    the record says ``invalid_drops: game`` (Arena-Hard v0.1, Arena-Hard-Local: the other game counts)."""
    if record.get("invalid") and record.get("invalid_drops") != "game":
        return []
    battles = []
    for game in record["games"]:
        if game["label"] is None:
            continue
        side, strong = LABEL_OUTCOME[game["label"]]
        winner = "tie" if side is None else ("model_a" if side == "A" else "model_b")
        battles.append(
            {
                "kind": "battle",
                "model_a": game["a"],
                "model_b": game["b"],
                "winner": winner,
                "weight": strong_weight if strong else 1,
                "uid": record["uid"],
                "sample": sample_of(record),
                "category": record.get("category", "default"),
                "judge": record["judge"],
                "source": "llm-judge",
            }
        )
    return battles


class PairwiseJudge:
    """The pairwise judge kind: two games per answer, positions swapped, read by a :class:`JudgeProtocol`.

    ``by_category`` names the protocols some question categories use instead of ``protocol`` (Arena-Hard
    v2.0 judges creative_writing with its own system prompt). Each judgment's key holds the fingerprint of
    the protocol its question used, so changing one category's prompt re-judges that category only.
    """

    name = "pairwise"
    outcome: OutcomeKind = "battle"

    def __init__(
        self,
        protocol: JudgeProtocol,
        spec: ModelSpec,
        *,
        strong_weight: int = 3,
        by_category: Mapping[str, JudgeProtocol] | None = None,
    ) -> None:
        self.protocol = protocol
        self.by_category = dict(by_category or {})
        self.spec = spec
        self.strong_weight = strong_weight
        self._fingerprint = protocol.fingerprint(spec)
        self._fingerprints = {cat: p.fingerprint(spec) for cat, p in self.by_category.items()}

    @property
    def fingerprint(self) -> str:
        """The fingerprint of ``protocol``, which judges every category not in ``by_category`` (those
        categories key with their own: :meth:`prompt_hash`)."""
        return self._fingerprint

    @property
    def protocol_name(self) -> str:
        return self.protocol.name

    def protocol_for(self, category: str) -> JudgeProtocol:
        """The protocol that judges questions of ``category``."""
        return self.by_category.get(category, self.protocol)

    def prompt_hash(self, category: str) -> str:
        return self._fingerprints.get(category, self._fingerprint)

    def key(self, item: JudgeItem) -> str:
        base_hash = item.baseline_hash()
        assert item.baseline is not None and base_hash is not None
        return judgment_key(
            item.judge,
            item.model,
            item.baseline,
            item.question.uid,
            item.answer_hash(),
            base_hash,
            self.prompt_hash(item.question.category),
            item.sample,
            games_of(item.question),
        )

    async def judge(
        self,
        client: ModelClient,
        item: JudgeItem,
        *,
        cache: CacheMode,
        earlier: dict[int, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Both games for one answer, run concurrently; returns the judgment record to store.

        A game an earlier run already won from the judge (``earlier``) is reused; when one game fails
        after retries, :class:`PartialJudgment` carries the other so that it is kept, not paid again.
        """
        assert item.baseline is not None and item.baseline_answer is not None
        question, answer, base = item.question.prompt, item.answer, item.baseline_answer
        protocol = self.protocol_for(item.question.category)
        kept = earlier or {}

        shown = {1: (item.baseline, base, item.model, answer), 2: (item.model, answer, item.baseline, base)}
        numbers = games_of(item.question)
        asked = [n for n in numbers if n not in kept]
        first, second, shared = _both_games(protocol, question, base, answer)
        prepared = {1: first, 2: second}
        shared = shared if len(asked) == 2 else 0

        async def play(number: int, shown_a: str, shown_b: str) -> dict[str, Any]:
            if number in kept:
                return kept[number]
            return await judge_game(
                client, protocol, question, shown_a, shown_b, sample=item.sample, cache=cache,
                shared_prefix=shared, prepared=prepared[number],
            )  # fmt: skip

        results = await asyncio.gather(
            *(play(n, shown[n][1], shown[n][3]) for n in numbers), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, RequestFailed):
                raise result
        failed = [result for result in results if isinstance(result, RequestFailed)]
        if failed:
            won = {n: r for n, r in zip(numbers, results, strict=True) if isinstance(r, dict)}
            raise PartialJudgment(failed[0], won)
        games = [
            {"game": n, "a": shown[n][0], "b": shown[n][2], **result}
            for n, result in zip(numbers, results, strict=True)
            if isinstance(result, dict)
        ]
        return {
            "kind": "pairwise",
            "key": self.key(item),
            "uid": item.question.uid,
            "sample": item.sample,
            "category": item.question.category,
            "judge": item.judge,
            "model": item.model,
            "baseline": item.baseline,
            "protocol": protocol.name,
            "prompt_hash": self.prompt_hash(item.question.category),
            "answer_hash": text_hash(answer),
            "baseline_hash": text_hash(base),
            "games": games,
            "invalid": any(game["label"] is None for game in games),
            **({"invalid_drops": "game"} if protocol.drops_invalid_game else {}),
            "tstamp": time.time(),
        }

    def outcomes(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        return battles_from_judgment(record, strong_weight=self.strong_weight)


OUTCOME: OutcomeKind = PairwiseJudge.outcome
"""What this kind's judgments become, known before any judge is built
(:func:`jurist.judging.kinds.judge_kind_outcome`)."""


def judge_kind(setup: JudgeKindSetup) -> PairwiseJudge:
    """The ``pairwise`` kind of the registry: the protocol ``--judge-protocol`` names, else the
    benchmark's; "arena-hard" brings upstream's per-category system prompts with it (:func:`protocol_set`);
    ``--judge-prompt`` replaces the texts and keeps the protocol's reading."""
    try:
        chosen, by_category = protocol_set(
            setup.protocol, setup.spec, setup.prompt_file, setup.default_protocol
        )
    except KeyError:
        hint = did_you_mean(str(setup.protocol), PROTOCOLS)
        raise JuristError(f"--judge-protocol: unknown protocol {setup.protocol!r}{hint}") from None
    return PairwiseJudge(chosen, setup.spec, strong_weight=setup.strong_weight, by_category=by_category)
