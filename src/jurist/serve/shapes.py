"""The wire shapes trainers send and expect, read strictly into :class:`RewardItem` and written back.

- NeMo-Gym's ``resources_servers/arena_judge`` ``POST /verify``: the policy's Responses-API object in
  ``response`` (its text: every ``output_text`` part of every ``message`` output, joined), the row's
  ``question``, ``baseline_answer``, ``category``, ``uid``; answered with the request's fields and
  ``reward``, ``judgement_gen_base``/``_base_gen``, ``verdict_gen_base``/``_base_gen``, ``category``,
  ``invalid_gen_base``/``_base_gen`` ("gen_base": the candidate shown as A), plus NeMo-Gym's
  ``mask_sample``/``failure_kind``/``failure_reason`` so a failed judge is never a reward.
- OpenRLHF's remote reward model (``--remote_rm_url``) ``POST /get_reward``: ``{"query", "prompts",
  "labels"}`` lists, ``query`` = prompt + response as decoded; answered ``{"rewards", "scores",
  "extra_logs"}``. Or the explicit variant: ``responses`` instead of ``query``.
- jurist's own ``POST /v1/reward``: ``{"items": [{uid | question, answer, baseline_answer?, sample?,
  step?, category?, instruction_id_list?, kwargs?}], "step"?}``.

Every body is untrusted: a field of the wrong type is refused with one line naming it (a 400), never
coerced, and no text from a body is ever evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jurist.families import AnswerReward, baseline_first_game, candidate_first_game
from jurist.serve.service import BUDGET_REFUSED, RewardItem, RewardOutcome

MAX_SAMPLE = 1 << 20
_END_TOKENS = re.compile(
    r"(?:\s*(?:<\|[A-Za-z0-9_.\-]{1,48}\|>|<｜[^｜<>]{1,48}｜>|</s>|<eos>|<pad>|<end_of_turn>))+\s*\Z"
)
"""Special tokens a decoded OpenRLHF query ends with (``<|im_end|>``, ``<|eot_id|>``, ``</s>``, ...)."""


class BadRequest(ValueError):
    """A body the server refuses: answered 400 with this one line."""


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{where}: expected a JSON object")
    return value


def _text(body: Mapping[str, Any], name: str, where: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise BadRequest(f"{where}: {name} is missing")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{where}: {name} must be a string")
    return value


def _count(body: Mapping[str, Any], name: str, where: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_SAMPLE:
        raise BadRequest(f"{where}: {name} must be a whole number from 0 to {MAX_SAMPLE - 1}")
    return value


def _list(body: Mapping[str, Any], name: str, where: str, max_items: int) -> list[Any]:
    value = body.get(name)
    if not isinstance(value, list):
        raise BadRequest(f"{where}: {name} must be a list")
    if not value:
        raise BadRequest(f"{where}: {name} is empty")
    if len(value) > max_items:
        raise BadRequest(f"{where}: {len(value)} items; at most {max_items} per request")
    return value


def _instructions(
    body: Mapping[str, Any], where: str
) -> tuple[tuple[str, ...], tuple[dict[str, Any], ...]] | None:
    ids, kwargs = body.get("instruction_id_list"), body.get("kwargs")
    if ids is None and kwargs is None:
        return None
    if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
        raise BadRequest(f"{where}: instruction_id_list must be a list of strings")
    if not (isinstance(kwargs, list) and len(kwargs) == len(ids)):
        raise BadRequest(f"{where}: kwargs must be a list as long as instruction_id_list")
    if not all(k is None or isinstance(k, dict) for k in kwargs):
        raise BadRequest(f"{where}: each kwargs entry must be an object or null")
    return tuple(ids), tuple(dict(k or {}) for k in kwargs)


def item_of(body: Any, where: str, *, answer: str | None = None, step: int | None = None) -> RewardItem:
    """One /v1/reward item (or the fields of a /verify row, ``answer`` given)."""
    fields = _object(body, where)
    text = answer if answer is not None else _text(fields, "answer", where, required=True)
    assert text is not None
    uid = fields.get("uid")
    if isinstance(uid, bool) or (uid is not None and not isinstance(uid, (str, int))):
        raise BadRequest(f"{where}: uid must be a string")
    own_step = _count(fields, "step", where)
    return RewardItem(
        answer=text,
        uid=None if uid is None else str(uid),
        question=_text(fields, "question", where),
        category=_text(fields, "category", where),
        baseline_answer=_text(fields, "baseline_answer", where),
        sample=_count(fields, "sample", where) or 0,
        step=own_step if own_step is not None else step,
        instructions=_instructions(fields, where),
    )


def reward_items(body: Any, max_items: int) -> list[RewardItem]:
    """The items of a /v1/reward body."""
    fields = _object(body, "body")
    step = _count(fields, "step", "body")
    items = _list(fields, "items", "body", max_items)
    return [item_of(entry, f"items[{n}]", step=step) for n, entry in enumerate(items)]


# -- NeMo-Gym ---------------------------------------------------------------------------------------------
def responses_text(response: Any) -> str:
    """The candidate's text in a Responses-API object: ``output_text`` parts of ``message`` outputs."""
    fields = _object(response, "response")
    output = fields.get("output")
    if not isinstance(output, list):
        raise BadRequest("response: output must be a list")
    parts: list[str] = []
    for n, entry in enumerate(output):
        entry = _object(entry, f"response.output[{n}]")
        if entry.get("type") != "message":
            continue
        content = entry.get("content")
        if not isinstance(content, list):
            raise BadRequest(f"response.output[{n}]: content must be a list")
        for m, part in enumerate(content):
            part = _object(part, f"response.output[{n}].content[{m}]")
            if part.get("type") == "output_text":
                text = part.get("text")
                if not isinstance(text, str):
                    raise BadRequest(f"response.output[{n}].content[{m}]: text must be a string")
                parts.append(text)
    return "".join(parts)


def verify_item(body: Any) -> tuple[dict[str, Any], RewardItem]:
    """A /verify body and its item (the row's ``question`` is used only when its ``uid`` is unknown)."""
    fields = _object(body, "body")
    if "response" not in fields:
        raise BadRequest("body: response is missing")
    return fields, item_of(fields, "body", answer=responses_text(fields["response"]))


def verify_response(
    body: Mapping[str, Any], outcome: RewardOutcome, category: str, invalid_reward: float
) -> dict[str, Any]:
    """NeMo-Gym's ArenaJudgeVerifyResponse: the request's fields, then the judgment's, field for field."""
    echoed = {k: v for k, v in body.items() if k not in ("category", "_ng_rollout_id")}
    record = outcome.record or {}
    gen_base, base_gen = candidate_first_game(record), baseline_first_game(record)
    failed = outcome.error is not None
    reward = outcome.reward
    result: dict[str, Any] = {
        **echoed,
        "reward": float(invalid_reward if reward is None else reward),
        "judgement_gen_base": _judgement(gen_base),
        "judgement_base_gen": _judgement(base_gen),
        "verdict_gen_base": None if gen_base is None else gen_base.get("label"),
        "verdict_base_gen": None if base_gen is None else base_gen.get("label"),
        "category": category,
        "invalid_gen_base": gen_base is None or gen_base.get("label") is None,
        "invalid_base_gen": base_gen is None or base_gen.get("label") is None,
        "mask_sample": failed or reward is None,
        "failure_kind": _failure_kind(outcome),
        "failure_reason": outcome.error if failed else "no readable verdict" if reward is None else None,
    }
    return result


def _failure_kind(outcome: RewardOutcome) -> str | None:
    """NeMo-Gym's failure vocabulary: a failed judge, the budget spent, no readable verdict."""
    if outcome.error is not None:
        return "provider_quota_exhausted" if outcome.error_kind == BUDGET_REFUSED else "judge_failed"
    return "judge_unparseable" if outcome.reward is None else None


def _judgement(game: Mapping[str, Any] | None) -> str | None:
    """The judge reply the game's verdict was read from (the re-ask's, when there was one)."""
    if game is None:
        return None
    text = game.get("reask_raw", game.get("raw"))
    return text if isinstance(text, str) else None


# -- OpenRLHF ---------------------------------------------------------------------------------------------
def cut_response(query: str, prompt: str, where: str) -> str:
    """The response in an OpenRLHF ``query``: what follows its prompt, less the special tokens it ends
    with. A query that does not start with its prompt is refused (guessing would judge the wrong text)."""
    if not query.startswith(prompt):
        raise BadRequest(f"{where}: query does not start with its prompt (send responses instead)")
    return _END_TOKENS.sub("", query[len(prompt) :])


def _label_fields(label: Any, where: str) -> dict[str, Any]:
    """An OpenRLHF label: a uid (``--label_key uid``), a JSON object (as text or not), or nothing."""
    if label is None:
        return {}
    if isinstance(label, dict):
        return label
    if isinstance(label, (int, str)) and not isinstance(label, bool):
        text = str(label)
        if text.lstrip().startswith("{"):
            try:
                return _object(json.loads(text), where)
            except ValueError:
                raise BadRequest(f"{where}: label is not valid JSON") from None
        return {"uid": text}
    raise BadRequest(f"{where}: a label must be a uid, a JSON object or null")


def openrlhf_items(body: Any, max_items: int, known_uid: Any) -> list[RewardItem]:
    """The items of a /get_reward body; ``known_uid(uid)``: whether a label names a question."""
    fields = _object(body, "body")
    explicit = "responses" in fields
    texts = _list(fields, "responses" if explicit else "query", "body", max_items)
    prompts = _list(fields, "prompts", "body", max_items)
    labels: Sequence[Any] = fields.get("labels") or [None] * len(texts)
    if not isinstance(labels, list) or not len(texts) == len(prompts) == len(labels):
        raise BadRequest("body: query (or responses), prompts and labels must be lists of one length")
    items = []
    for n, (text, prompt, label) in enumerate(zip(texts, prompts, labels, strict=True)):
        where = f"item {n}"
        if not isinstance(text, str) or not isinstance(prompt, str):
            raise BadRequest(f"{where}: query, responses and prompts hold strings")
        answer = text if explicit else cut_response(text, prompt, where)
        extra = _label_fields(label, where)
        plain = isinstance(label, (str, int)) and not str(label).lstrip().startswith("{")
        if plain and not known_uid(str(extra["uid"])):
            extra = {}  # a label that names no question (a reference answer...): the prompt is the question
        row = {"question": prompt, **{k: v for k, v in extra.items() if k != "answer"}}
        items.append(item_of(row, where, answer=answer))
    return items


def openrlhf_response(
    outcomes: Sequence[RewardOutcome], invalid_reward: float, scale: float
) -> dict[str, Any]:
    """``rewards`` (the family's reward), ``scores`` (the same in [0, 1], for dynamic filtering) and
    ``extra_logs`` (per sample: invalid, judge requests sent, cache hits)."""
    rewards = [invalid_reward if o.reward is None else o.reward for o in outcomes]
    return {
        "rewards": rewards,
        "scores": [min(max(r / scale, 0.0), 1.0) for r in rewards],
        "extra_logs": {
            "jurist_invalid": [float(o.reward is None) for o in outcomes],
            "jurist_judge_requests": [float(o.cost.requests) for o in outcomes],
            "jurist_cache_hits": [float(o.cost.cache_hits) for o in outcomes],
        },
    }


# -- jurist's own -----------------------------------------------------------------------------------------
def outcome_dict(outcome: RewardOutcome, reward: AnswerReward) -> dict[str, Any]:
    """One /v1/reward item: the reward, and what decided it as ``reward``'s family shows it (games,
    preference, rubric items, rules)."""
    result: dict[str, Any] = {
        "uid": outcome.uid,
        "family": outcome.family,
        "reward": outcome.reward,
        "invalid": outcome.invalid,
    }
    if outcome.error is not None:
        result.update(error=outcome.error, error_kind=outcome.error_kind)
    result.update(reward.shown(outcome.record or {}))
    result["cost"] = outcome.cost.as_dict()
    result["seconds"] = round(outcome.seconds, 6)
    return result


__all__ = [
    "BadRequest",
    "cut_response",
    "item_of",
    "openrlhf_items",
    "openrlhf_response",
    "outcome_dict",
    "responses_text",
    "reward_items",
    "verify_item",
    "verify_response",
]
