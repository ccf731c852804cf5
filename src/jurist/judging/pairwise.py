"""Pairwise judging with position swap: game 1 puts the baseline in position A, game 2 swaps them.

A reply without a valid label is re-asked once; if the second reply has none either, the game is recorded
as invalid (a result, counted and reported). A transport failure is not a result: it propagates as
:class:`~jurist.engine.client.RequestFailed` and the question is judged again on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any

from jurist.engine.client import ModelClient
from jurist.judging.protocols import JudgeProtocol
from jurist.judging.verdict import LABEL_OUTCOME


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def judgment_key(
    judge: str, model: str, baseline: str, uid: str, answer_hash: str, baseline_hash: str, prompt_hash: str
) -> str:
    """Identity of a judgment: a changed answer, baseline answer or judge prompt makes a new key."""
    blob = json.dumps([judge, model, baseline, uid, answer_hash, baseline_hash, prompt_hash])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


async def judge_game(
    client: ModelClient, protocol: JudgeProtocol, question: str, answer_a: str, answer_b: str
) -> dict[str, Any]:
    """Ask one judge for one verdict (with one re-ask); returns the game record.

    The judge sees the question and answers with their verdict labels neutralised, and its reply is read
    against that shown material, so a label inside an answer cannot become the verdict (see verdict.py).
    """
    shown = protocol.shown(question, answer_a, answer_b)
    messages: list[dict[str, Any]] = []
    if protocol.system_prompt:
        messages.append({"role": "system", "content": protocol.system_prompt})
    messages.append({"role": "user", "content": protocol.user_message(question, answer_a, answer_b)})
    params = protocol.request_params(client.spec)
    first = await client.complete(messages, **params)
    label, how = protocol.read(first.text, first.logprobs, shown)
    game: dict[str, Any] = {"label": label, "raw": first.text, "usage": first.usage(), **how}
    if label is None:
        follow_up = messages + [
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": protocol.reask_text},
        ]
        second = await client.complete(follow_up, **params)
        label, how = protocol.read(second.text, second.logprobs, shown)
        game.update({"label": label, "reask_raw": second.text, "reask_usage": second.usage(), **how})
    return game


async def judge_question(
    client: ModelClient,
    protocol: JudgeProtocol,
    *,
    uid: str,
    category: str,
    question: str,
    model: str,
    answer: str,
    baseline: str,
    baseline_answer: str,
    prompt_hash: str,
) -> dict[str, Any]:
    """Both games for one question, run concurrently; returns the judgment record to store."""
    game1, game2 = await asyncio.gather(
        judge_game(client, protocol, question, baseline_answer, answer),
        judge_game(client, protocol, question, answer, baseline_answer),
    )
    game1 = {"game": 1, "a": baseline, "b": model, **game1}
    game2 = {"game": 2, "a": model, "b": baseline, **game2}
    answer_hash, baseline_hash = text_hash(answer), text_hash(baseline_answer)
    return {
        "key": judgment_key(client.alias, model, baseline, uid, answer_hash, baseline_hash, prompt_hash),
        "uid": uid,
        "category": category,
        "judge": client.alias,
        "model": model,
        "baseline": baseline,
        "protocol": protocol.name,
        "prompt_hash": prompt_hash,
        "answer_hash": answer_hash,
        "baseline_hash": baseline_hash,
        "games": [game1, game2],
        "invalid": game1["label"] is None or game2["label"] is None,
        "tstamp": time.time(),
    }


def battles_from_judgment(record: dict[str, Any], *, strong_weight: int = 3) -> list[dict[str, Any]]:
    """One battle per game; a question with an invalid game yields none (Arena-Hard v2 drops it)."""
    if record.get("invalid"):
        return []
    battles = []
    for game in record["games"]:
        side, strong = LABEL_OUTCOME[game["label"]]
        winner = "tie" if side is None else ("model_a" if side == "A" else "model_b")
        battles.append(
            {
                "model_a": game["a"],
                "model_b": game["b"],
                "winner": winner,
                "weight": strong_weight if strong else 1,
                "uid": record["uid"],
                "category": record.get("category", "default"),
                "judge": record["judge"],
                "source": "llm-judge",
            }
        )
    return battles
