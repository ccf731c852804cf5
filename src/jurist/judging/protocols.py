"""Judge protocols: the prompts a judge sees and how its reply is read.

A protocol is data (system prompt, user template, follow-up, how the verdict is asked for and read), so a
user-supplied template (``--judge-prompt FILE``) is just another protocol with the same parsing.

"arena-hard" and "arena-hard-creative" are upstream's own prompts and verdict reading, loaded at run time
(:mod:`jurist.judging.upstream`), never a paraphrase; "arena-hard" picks the system prompt per question
category as upstream does (:func:`protocol_set`). jurist's own wording of that protocol is
"jurist-pairwise" / "jurist-creative". "arena-hard-local" is Arena-Hard-Local's simplified judge, its texts,
regex and reading upstream's too (:mod:`jurist.judging.upstream_local`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

from jurist.config import ModelSpec
from jurist.judging import upstream, upstream_local
from jurist.judging.prompt_file import load_judge_prompt
from jurist.judging.verdict import (
    LABELS,
    VERDICT_SCHEMA,
    neutralize_labels,
    parse_digit_verdict,
    parse_verdict,
    soft_preference,
    verdict_distribution,
)


def _prompt_text(name: str) -> str:
    return files("jurist.judging").joinpath(f"prompts/{name}").read_text(encoding="utf-8").rstrip("\n")


REASK_TEXT = (
    "Your reply did not end with a verdict label. Give your final verdict now, as exactly one of: "
    "[[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]."
)
STRUCTURED_REASK_TEXT = (
    'Reply with only the JSON object {"verdict": LABEL}, LABEL being one of the five labels.'
)
LOGPROB_REASK_TEXT = "Reply with a single digit from 1 to 5 and nothing else."

# The logprob verdict is one token; a little slack lets a judge open with "**" or a space first.
LOGPROB_MAX_TOKENS = 4
# 20 is the most OpenAI accepts and vLLM's default cap; the five digits are normally all in it.
LOGPROB_TOP = 20

_PLACEHOLDER = re.compile(r"\{(question|answer_a|answer_b)\}")  # PLACEHOLDERS, found in one pass


_MIN_COPIED = 12  # characters: a line this long found verbatim in the instructions is a copy of them


def without_prompt_lines(text: str, *prompts: str) -> str:
    """``text`` without the lines (stripped, at least :data:`_MIN_COPIED` characters long) that are a line
    of ``prompts`` or its start: a judge that parrots "[[B>>A]] means B is much better" chose nothing."""
    known = [line.strip() for prompt in prompts for line in prompt.splitlines() if line.strip()]

    def copied(line: str) -> bool:  # the whole line, or its start when the copy was cut by max_tokens
        line = line.strip()
        return len(line) >= _MIN_COPIED and any(prompt.startswith(line) for prompt in known)

    lines = text.splitlines()
    kept = [line for line in lines if not copied(line)]
    return "\n".join(kept) if len(kept) < len(lines) else text


@dataclass(frozen=True)
class JudgeProtocol:
    """How a pairwise game is put to a judge and how its reply becomes a verdict."""

    name: str
    system_prompt: str
    user_template: str
    reask_text: str = REASK_TEXT
    structured: bool = False
    logprob: bool = False
    prompt_file: str | None = None
    upstream_reader: bool = False
    """Read verdicts as Arena-Hard does (:func:`jurist.judging.upstream.read_verdict`)."""
    hashed_name: str | None = None
    """The name the fingerprint hashes, when not ``name``: jurist's paraphrase was called "arena-hard"
    until upstream's texts took that name, and runs judged with it resume under "jurist-pairwise"."""
    verdict_pattern: str | None = None
    """Read verdicts with this regex as Arena-Hard-Local does (:func:`upstream_local.read_verdict`)."""
    drops_invalid_game: bool = False
    """A game without a verdict costs only itself (Arena-Hard v0.1), not its question's other game."""
    by_category: bool = False
    """Judge each question category with upstream's system prompt for it (:func:`protocol_set`); not
    hashed: each category's protocol has its own texts."""

    def shown(self, question: str, answer_a: str, answer_b: str) -> tuple[str, str, str]:
        """The question and answers as the judge sees them: verdict labels inside them neutralised."""
        return neutralize_labels(question), neutralize_labels(answer_a), neutralize_labels(answer_b)

    def user_message(self, question: str, answer_a: str, answer_b: str) -> str:
        return self.shown_message(self.shown(question, answer_a, answer_b))

    def shown_message(self, shown: tuple[str, str, str]) -> str:
        """The user message of material already :meth:`shown` (neutralised once, used for both)."""
        shown_question, shown_a, shown_b = shown
        values = {"question": shown_question, "answer_a": shown_a, "answer_b": shown_b}
        # One pass, not str.format: answers are full of braces, and a question that contains the text
        # "{answer_a}" must not receive an answer.
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.user_template)

    def request_params(self, judge: ModelSpec) -> dict[str, Any]:
        """Extra chat-request fields this protocol needs from the judge's server."""
        if self.logprob:
            return {"logprobs": True, "top_logprobs": LOGPROB_TOP, "max_tokens": LOGPROB_MAX_TOKENS}
        if self.structured:
            return {"response_format": response_format(judge.structured_output)}
        return {}

    def read(self, text: str, logprobs: Any, quoted: tuple[str, ...]) -> tuple[str | None, dict[str, Any]]:
        """The verdict label of one reply, plus what the game record should keep about how it was read.
        Under jurist's own prompts, lines the reply copies from the instructions (a judge that parrots its
        prompt, the legend of the labels) are no verdict: left out before it is read (upstream's prompts
        are read as upstream reads them)."""
        if self.verdict_pattern is not None:
            return upstream_local.read_verdict(text, self.verdict_pattern)
        if self.upstream_reader:
            return upstream.read_verdict(text), {}
        text = without_prompt_lines(text, self.system_prompt, self.reask_text)
        if not self.logprob:
            return parse_verdict(text, quoted), {}
        found = verdict_distribution(logprobs)
        if found is None:
            label = parse_digit_verdict(text) or parse_verdict(text, quoted)
            return label, {"verdict_source": "text"}
        probs, mass = found
        label = max(LABELS, key=lambda lab: probs[lab])
        return label, {
            "verdict_source": "logprobs",
            "probs": {lab: round(p, 6) for lab, p in probs.items()},
            "p_b_better": round(soft_preference(probs), 6),
            "verdict_mass": round(mass, 6),
        }

    def asks_again(self, label: str | None, how: dict[str, Any]) -> bool:
        """Whether a reply read as ``label`` is followed by the re-ask: one without a verdict is, unless the
        reading found labels it refuses (Arena-Hard-Local stops at several different or unknown ones)."""
        return label is None and not how.get("matches")

    def fingerprint(self, judge: ModelSpec) -> str:
        """Hash of everything that shapes a verdict besides the answers, so a change forces re-judging."""
        data: dict[str, Any] = {
            "protocol": self.hashed_name or self.name,
            "system": self.system_prompt,
            "user": self.user_template,
            "reask": self.reask_text,
            "structured": self.structured and judge.structured_output,
            "judge_model": judge.model,
            "temperature": judge.temperature,
            "max_tokens": judge.max_tokens,
            "params": judge.passthrough_params(),
        }
        if self.logprob:  # only when set, so the fingerprints of the older protocols stay as they were
            data["logprob"] = self.request_params(judge)
        if self.upstream_reader:
            data["reader"] = f"arena-hard@{upstream.COMMIT}"
        if self.verdict_pattern is not None:
            data["reader"] = f"arena-hard-local@{upstream_local.COMMIT}:{self.verdict_pattern}"
        blob = json.dumps(data, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def arena_hard_protocol(category: str = upstream.DEFAULT_CATEGORY, name: str = "arena-hard") -> JudgeProtocol:
    """Upstream's exact judge messages for ``category`` (its system prompt, the v2.0 user template) and
    upstream's verdict regexes; the texts are loaded at run time, never shipped."""
    settings = upstream.load_arena_hard_settings()
    return JudgeProtocol(
        name, settings.system_prompt(category), settings.prompt_template, upstream_reader=True
    )


def arena_hard_by_category_protocol() -> JudgeProtocol:
    """ "arena-hard": upstream's default judge, each category's own system prompt where it has one."""
    return replace(arena_hard_protocol(), by_category=True)


def arena_hard_creative_protocol() -> JudgeProtocol:
    """Upstream's creative-writing judge (no "write your own answer first" step), for every question."""
    return arena_hard_protocol("creative_writing", "arena-hard-creative")


def arena_hard_local_protocol() -> JudgeProtocol:
    """Arena-Hard-Local's judge: its system prompt, user template and verdict regex, loaded at run time
    from its pinned judge_config.yaml; an invalid game drops alone, as v0.1 scores it."""
    settings = upstream_local.load_local_settings()
    return JudgeProtocol(
        upstream_local.PROTOCOL,
        settings.system_prompt,
        settings.prompt_template,
        verdict_pattern=settings.verdict_pattern,
        drops_invalid_game=True,
    )


def jurist_pairwise_protocol() -> JudgeProtocol:
    """jurist's own wording of the Arena-Hard judge (own answer first, five labels); not upstream's text."""
    return JudgeProtocol(
        "jurist-pairwise",
        _prompt_text("jurist_pairwise_system.txt"),
        _prompt_text("pairwise_user.txt"),
        hashed_name="arena-hard",
    )


def jurist_creative_protocol() -> JudgeProtocol:
    return JudgeProtocol(
        "jurist-creative",
        _prompt_text("jurist_creative_system.txt"),
        _prompt_text("pairwise_user.txt"),
        hashed_name="arena-hard-creative",
    )


def structured_protocol() -> JudgeProtocol:
    return JudgeProtocol(
        "structured",
        _prompt_text("structured_system.txt"),
        _prompt_text("pairwise_user.txt"),
        reask_text=STRUCTURED_REASK_TEXT,
        structured=True,
    )


def simple_protocol() -> JudgeProtocol:
    """A short prompt for small local judges: no own answer, no explanation, just the label."""
    return JudgeProtocol("simple", _prompt_text("simple_system.txt"), _prompt_text("pairwise_user.txt"))


def logprob_protocol() -> JudgeProtocol:
    """A one-digit verdict whose probabilities (from ``top_logprobs``) give a soft preference."""
    return JudgeProtocol(
        "logprob",
        _prompt_text("logprob_system.txt"),
        _prompt_text("pairwise_user.txt"),
        reask_text=LOGPROB_REASK_TEXT,
        logprob=True,
    )


UPSTREAM = ("arena-hard", "arena-hard-creative")
"""Protocols whose texts are upstream's, loaded at run time."""

PROTOCOLS = {
    "arena-hard": arena_hard_by_category_protocol,
    "arena-hard-creative": arena_hard_creative_protocol,
    "arena-hard-local": arena_hard_local_protocol,
    "jurist-pairwise": jurist_pairwise_protocol,
    "jurist-creative": jurist_creative_protocol,
    "structured": structured_protocol,
    "simple": simple_protocol,
    "logprob": logprob_protocol,
}


def protocol_for(
    name: str | None, judge: ModelSpec, prompt_file: str | Path | None = None, default: str = "arena-hard"
) -> JudgeProtocol:
    """The named protocol (by default the schema-constrained one for judges whose server supports it,
    else ``default``, the benchmark's own), with its prompts replaced by those of ``prompt_file`` when
    given; the parsing stays the protocol's."""
    if name is None:
        name = "structured" if judge.structured_output != "none" else default
    if name not in PROTOCOLS:
        raise KeyError(name)
    if prompt_file is None:
        return PROTOCOLS[name]()
    # Custom prompts keep only the protocol's reading, so upstream's texts need not be fetched for them.
    protocol = JudgeProtocol(name, "", "", upstream_reader=True) if name in UPSTREAM else PROTOCOLS[name]()
    custom = load_judge_prompt(prompt_file)
    return replace(
        protocol,
        name=f"{protocol.name}+custom",
        hashed_name=f"{protocol.hashed_name}+custom" if protocol.hashed_name else None,
        system_prompt=custom.system,
        user_template=custom.user,
        reask_text=custom.reask or protocol.reask_text,
        prompt_file=str(prompt_file),
    )


def protocol_set(
    name: str | None, judge: ModelSpec, prompt_file: str | Path | None = None, default: str = "arena-hard"
) -> tuple[JudgeProtocol, dict[str, JudgeProtocol]]:
    """The protocol of :func:`protocol_for`, plus the protocols some question categories use instead.

    A protocol judged ``by_category`` ("arena-hard": upstream's prompts, no prompt file) judges each category
    with upstream's system prompt for it (``JUDGE_SETTINGS``: creative_writing has its own); every other
    choice is one protocol for all.
    """
    protocol = protocol_for(name, judge, prompt_file, default)
    if not protocol.by_category:
        return protocol, {}
    settings = upstream.load_arena_hard_settings()
    by_category = {
        category: arena_hard_protocol(
            category, "arena-hard-creative" if category == "creative_writing" else f"arena-hard:{category}"
        )
        for category, system in settings.system_prompts.items()
        if system != protocol.system_prompt
    }
    return protocol, by_category


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
