"""Judge protocols: the prompts a judge sees and how its reply is read.

A protocol is data (system prompt, user template, follow-up, whether the verdict is schema-constrained),
so a user-supplied template is just another protocol.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from jurist.config import ModelSpec
from jurist.judging.verdict import VERDICT_SCHEMA


def _prompt_text(name: str) -> str:
    return files("jurist.judging").joinpath(f"prompts/{name}").read_text(encoding="utf-8").rstrip("\n")


REASK_TEXT = (
    "Your reply did not end with a verdict label. Give your final verdict now, as exactly one of: "
    "[[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]."
)
STRUCTURED_REASK_TEXT = (
    'Reply with only the JSON object {"verdict": LABEL}, LABEL being one of the five labels.'
)


@dataclass(frozen=True)
class JudgeProtocol:
    """How a pairwise game is put to a judge."""

    name: str
    system_prompt: str
    user_template: str
    reask_text: str = REASK_TEXT
    structured: bool = False

    def user_message(self, question: str, answer_a: str, answer_b: str) -> str:
        # str.replace rather than str.format: answers are full of braces (code, JSON).
        return (
            self.user_template.replace("{question}", question)
            .replace("{answer_a}", answer_a)
            .replace("{answer_b}", answer_b)
        )

    def fingerprint(self, judge: ModelSpec) -> str:
        """Hash of everything that shapes a verdict besides the answers, so a change forces re-judging."""
        blob = json.dumps(
            {
                "protocol": self.name,
                "system": self.system_prompt,
                "user": self.user_template,
                "reask": self.reask_text,
                "structured": self.structured and judge.structured_output,
                "judge_model": judge.model,
                "temperature": judge.temperature,
                "max_tokens": judge.max_tokens,
                "params": judge.passthrough_params(),
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def arena_hard_protocol() -> JudgeProtocol:
    return JudgeProtocol(
        "arena-hard", _prompt_text("arena_hard_system.txt"), _prompt_text("pairwise_user.txt")
    )


def arena_hard_creative_protocol() -> JudgeProtocol:
    return JudgeProtocol(
        "arena-hard-creative",
        _prompt_text("arena_hard_creative_system.txt"),
        _prompt_text("pairwise_user.txt"),
    )


def structured_protocol() -> JudgeProtocol:
    return JudgeProtocol(
        "structured",
        _prompt_text("structured_system.txt"),
        _prompt_text("pairwise_user.txt"),
        reask_text=STRUCTURED_REASK_TEXT,
        structured=True,
    )


PROTOCOLS = {
    "arena-hard": arena_hard_protocol,
    "arena-hard-creative": arena_hard_creative_protocol,
    "structured": structured_protocol,
}


def protocol_for(name: str | None, judge: ModelSpec) -> JudgeProtocol:
    """The named protocol; by default the schema-constrained one for judges whose server supports it."""
    if name is None:
        name = "structured" if judge.structured_output != "none" else "arena-hard"
    if name not in PROTOCOLS:
        raise KeyError(name)
    return PROTOCOLS[name]()


def response_format(dialect: str) -> dict[str, Any] | None:
    """The ``response_format`` that makes a server emit only a valid verdict object, per server dialect.

    llama-cpp-python's server wants its own ``json_object`` + ``schema`` form and rejects ``json_schema``
    with HTTP 500; vLLM and OpenAI take ``json_schema``.
    """
    if dialect == "llama_cpp":
        return {"type": "json_object", "schema": VERDICT_SCHEMA}
    if dialect in ("vllm", "openai"):
        return {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": VERDICT_SCHEMA, "strict": True},
        }
    return None
