"""AlpacaEval 2.0's weighted judge: one game per answer, the preference read from the first token's logprobs.

As ``weighted_alpaca_eval_gpt4_turbo`` does it (tatsu-lab/alpaca_eval @ cd543a1; the reading below gives
back every one of the 12,040 stored preferences of the shared data's 20 models that keep their raw reply):

- the prompt is upstream's ChatML text, read at run time (never shipped); ``{instruction}``, ``{output_1}``
  and ``{output_2}`` are filled, the text is split into messages at ``<|im_start|>``/``<|im_end|>`` (the
  first line names the role) and each message is stripped;
- output_1 is the reference and output_2 the model's answer, swapped on a coin flip seeded by the
  instruction: ``random.Random("is_switched_outputs" + instruction + "0").choices([False, True])``;
- the judge answers one token with its top 5 logprobs; ``p = P(m) / (P(m) + P(M))`` over the first
  position's ``top_logprobs`` (a label missing there has probability 0; both missing: no preference);
  ``2 - p`` is the preference as shown (1: the first output wins, 2: the second), ``3 - x`` undoes a swap;
- stored is that preference in [1, 2] and ``p_model = preference - 1``; identical outputs are 1.5 unasked.

A server that returns no logprobs is read from its text (``m`` or ``M``, so p is 1 or 0), and the judgment
says ``verdict_source: "text"``: a hard verdict where the reference reads a probability.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.config import ModelSpec
from jurist.engine import ModelClient
from jurist.errors import InputError, JuristError
from jurist.judging.base import CacheMode, JudgeItem, OutcomeKind
from jurist.judging.kinds import JudgeKindSetup, JudgePromptSource
from jurist.judging.pairwise import cap_raw, judgment_key
from jurist.store import sample_of, text_hash

PROTOCOL = "alpaca-eval"
SWITCH_SEED = "is_switched_outputs"
"""The string upstream's order coin is seeded with, before the instruction and the seed (0)."""
SEED = 0
FIRST, SECOND = "m", "M"
"""The labels of output_1 and output_2 in upstream's prompt."""
TOP_LOGPROBS = 5
READER_VERSION = 1
PLACEHOLDERS = ("instruction", "output_1", "output_2")
_START, _END = "<|im_start|>", "<|im_end|>"
_FIELD = re.compile(r"\{(instruction|output_1|output_2)\}")
_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class AlpacaTemplate:
    """A ChatML judge prompt split into (role, text with placeholders) messages."""

    messages: tuple[tuple[str, str], ...]
    source: str
    sha256: str
    custom: bool = False
    """A ``--judge-prompt`` file rather than upstream's text."""

    def render(self, instruction: str, output_1: str, output_2: str) -> list[dict[str, str]]:
        """The messages sent: each placeholder filled once, in one pass (a placeholder-like text inside an
        instruction or output stays as it is), then each message stripped as upstream strips it."""
        values = {"instruction": instruction, "output_1": output_1, "output_2": output_2}
        return [
            {"role": role, "content": _FIELD.sub(lambda m: values[m.group(1)], text).strip()}
            for role, text in self.messages
        ]


def parse_template(text: str, origin: str) -> tuple[tuple[str, str], ...]:
    """Split a ChatML prompt into messages; each placeholder must appear exactly once in all of it."""
    body = text.strip()
    if not (body.startswith(_START) and body.endswith(_END)):
        raise InputError(
            Path(origin), "", f"not a ChatML prompt: it must start with {_START} and end with {_END}"
        )
    messages: list[tuple[str, str]] = []
    for number, part in enumerate(body.split(_START)[1:], start=1):
        head, _, rest = part.partition("\n")
        role = head.strip()
        if role not in _ROLES:
            raise InputError(
                Path(origin), f"message {number}", f"role {role!r} is not one of {', '.join(_ROLES)}"
            )
        messages.append((role, rest.split(_END, 1)[0]))
    found = [m.group(1) for _, content in messages for m in _FIELD.finditer(content)]
    for name in PLACEHOLDERS:
        if found.count(name) != 1:
            raise InputError(
                Path(origin),
                "",
                f"placeholder {{{name}}} appears {found.count(name)} times (it must appear once)",
            )
    return tuple(messages)


def load_template(prompt_file: Path | None, source: JudgePromptSource | None) -> AlpacaTemplate:
    """``prompt_file`` (``--judge-prompt``), else the pinned prompt the benchmark hands its judge
    (``source``: upstream's, from ``$JURIST_DATA_DIR``, the cache or one download; one error naming the
    variable and the file when none can be had)."""
    if prompt_file is not None:
        path = Path(prompt_file)
        if not path.is_file():
            raise InputError(path, "", "judge prompt file not found")
        custom = True
    elif source is not None:
        (path,) = source.files()
        custom = False
    else:
        raise JuristError(
            "the preference judge kind needs its benchmark's judge prompt; pass --judge-prompt FILE"
        )
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return AlpacaTemplate(
        parse_template(text, str(path)), str(path), hashlib.sha256(data).hexdigest(), custom
    )


def is_switched(instruction: str, seed: int = SEED) -> bool:
    """Whether the model's answer is shown first for ``instruction`` (upstream's seeded coin)."""
    return bool(random.Random(f"{SWITCH_SEED}{instruction}{seed}").choices([False, True], k=1)[0])


def _top_logprobs(logprobs: Any) -> list[tuple[str, float]] | None:
    """(token, logprob) of the first generated position's alternatives; None without logprobs."""
    if not isinstance(logprobs, dict):
        return None
    content = logprobs.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        alternatives = content[0].get("top_logprobs")
        if isinstance(alternatives, list):
            return [
                (str(alt["token"]), float(alt["logprob"]))
                for alt in alternatives
                if isinstance(alt, dict) and isinstance(alt.get("logprob"), (int, float)) and "token" in alt
            ]
    legacy = logprobs.get("top_logprobs")  # completions shape: [{token: logprob}] per position
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        return [
            (str(token), float(value))
            for token, value in legacy[0].items()
            if isinstance(value, (int, float))
        ]
    return None


def first_label_probability(logprobs: Any) -> tuple[float | None, dict[str, float]] | None:
    """P(the first output is better) from the first token's alternatives, with the two labels' logprobs;
    ``(None, {})`` when neither label is among them; None when the reply carries no logprobs at all."""
    alternatives = _top_logprobs(logprobs)
    if alternatives is None:
        return None
    found: dict[str, float] = {}
    for token, value in alternatives:
        if token in (FIRST, SECOND):
            found.setdefault(token, value)
    if not found:
        return None, {}
    first, second = found.get(FIRST, -math.inf), found.get(SECOND, -math.inf)
    top = max(first, second)
    share = math.exp(first - top) / (math.exp(first - top) + math.exp(second - top))
    return share, found


def text_probability(text: str) -> float | None:
    """The text fallback: a reply that is exactly one label gives P(first output better) 1 or 0."""
    label = text.strip()
    return 1.0 if label == FIRST else 0.0 if label == SECOND else None


def preference_of(p_first: float, switched: bool) -> float:
    """AlpacaEval's stored preference (1: the reference wins, 2: the model wins) from P(first is better)."""
    shown = 2.0 - p_first
    return 3.0 - shown if switched else shown


def preference_battles(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A soft preference p = P(model beats baseline) as two battles weighted p and 1 - p: the same
    likelihood as the soft label, so every win-rate and rating method sees AlpacaEval's number."""
    p = record.get("p_model")
    if record.get("invalid") or p is None:
        return []
    common = {
        "kind": "battle",
        "model_a": record["baseline"],
        "model_b": record["model"],
        "uid": record["uid"],
        "sample": sample_of(record),
        "category": record.get("category", "default"),
        "judge": record["judge"],
        "source": "llm-judge",
    }
    if record.get("verdict_source") == "text":  # no logprobs: a hard 1/0, named under the table
        common["verdict_source"] = "text"
    return [
        {**common, "winner": winner, "weight": weight}
        for winner, weight in (("model_b", float(p)), ("model_a", 1.0 - float(p)))
        if weight > 0.0
    ]


class AlpacaJudge:
    """The ``preference`` judge kind: one AlpacaEval game per answer against the baseline's answer."""

    name = "preference"
    outcome: OutcomeKind = "battle"

    def __init__(self, template: AlpacaTemplate, spec: ModelSpec, *, seed: int = SEED) -> None:
        self.template = template
        self.spec = spec
        self.seed = seed
        data = {
            "protocol": self.protocol_name,
            "template": template.sha256,
            "judge_model": spec.model,
            "temperature": spec.temperature,
            "params": spec.passthrough_params(),
            "request": self.request_params(),
            "seed": seed,
            "reader": READER_VERSION,
        }
        self._fingerprint = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def protocol_name(self) -> str:
        return f"{PROTOCOL}+custom" if self.template.custom else PROTOCOL

    @staticmethod
    def request_params() -> dict[str, Any]:
        """One token and its alternatives; the judge entry's temperature is sent as it is."""
        return {"max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS}

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
            self._fingerprint,
            item.sample,
            (1,),
        )

    def _record(self, item: JudgeItem, preference: float | None, **how: Any) -> dict[str, Any]:
        assert item.baseline is not None and item.baseline_answer is not None
        return {
            "kind": "preference",
            "key": self.key(item),
            "uid": item.question.uid,
            "sample": item.sample,
            "category": item.question.category,
            "judge": item.judge,
            "model": item.model,
            "baseline": item.baseline,
            "protocol": self.protocol_name,
            "prompt_hash": self._fingerprint,
            "answer_hash": text_hash(item.answer),
            "baseline_hash": text_hash(item.baseline_answer),
            "preference": preference,
            "p_model": None if preference is None else preference - 1.0,
            "invalid": preference is None,
            **how,
            "tstamp": time.time(),
        }

    async def judge(
        self,
        client: ModelClient,
        item: JudgeItem,
        *,
        cache: CacheMode,
        earlier: dict[int, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Ask once; a reply with neither label is an invalid judgment (no preference), as upstream."""
        assert item.baseline_answer is not None
        if item.answer == item.baseline_answer:
            return self._record(item, 1.5, verdict_source="identical")
        instruction = item.question.prompt
        switched = is_switched(instruction, self.seed)
        first, second = (
            (item.answer, item.baseline_answer) if switched else (item.baseline_answer, item.answer)
        )
        messages = self.template.render(instruction, first, second)
        reply = await client.complete(
            messages, sample=item.sample, cache=cache, phase="judge", **self.request_params()
        )
        read = first_label_probability(reply.logprobs)
        labels: dict[str, float] = {}
        if read is None:
            p_first, source = text_probability(reply.text), "text"
        else:
            (p_first, labels), source = read, "logprobs"
        raw, chars = cap_raw(reply.text)
        how: dict[str, Any] = {
            "switched": switched,
            "verdict_source": source,
            "raw": raw,
            "usage": reply.usage(),
        }
        if labels:
            how["label_logprobs"] = labels
        if p_first is not None:
            how["p_first"] = p_first
        if chars is not None:
            how["raw_chars"] = chars
        return self._record(item, None if p_first is None else preference_of(p_first, switched), **how)

    def outcomes(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        return preference_battles(record)


OUTCOME: OutcomeKind = AlpacaJudge.outcome
"""What this kind's judgments become, known before any judge is built
(:func:`jurist.judging.kinds.judge_kind_outcome`)."""


def judge_kind(setup: JudgeKindSetup) -> AlpacaJudge:
    """The ``preference`` kind of the registry: AlpacaEval's protocol and no other; ``--judge-prompt``
    replaces the prompt the benchmark hands it."""
    if setup.protocol is not None and setup.protocol != setup.default_protocol:
        raise JuristError(
            f"--judge-protocol {setup.protocol!r} does not apply: this benchmark judges with its own "
            f"protocol ({setup.default_protocol}); --judge-prompt replaces its prompt"
        )
    return AlpacaJudge(load_template(setup.prompt_file, setup.prompt_source), setup.spec)
