"""The graders of rubric benchmarks: upstream's prompts as data, how one item is asked, how a reply is read.

The prompt texts are upstream's (HealthBench's ``GRADER_TEMPLATE`` and system message from
openai/simple-evals, WritingBench's ``evaluate_system`` / ``evaluate_prompt``), so jurist does not ship them:
they are read at run time from the pinned upstream files the benchmark hands its grader
(:class:`~jurist.judging.kinds.JudgePromptSource`: ``healthbench/healthbench_eval.py`` and
``chat_completion_sampler.py``, ``writingbench/prompt.py`` from ``$JURIST_DATA_DIR``, else the cache, else one
download; sha256-checked), or from ``--judge-prompt FILE`` in the same form. Those files are Python
*source*; nothing in them runs: only module-level ``NAME = "literal"`` (or ``"literal".strip()``)
assignments are read (:mod:`jurist.judging.python_strings`).

Replies are read strictly and never evaluated: JSON with the fields the reference checks, else no grade
(the kind then re-asks once and records the item "unscored").
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from jurist.errors import JuristError
from jurist.judging.answer_cuts import writingbench_cut
from jurist.judging.kinds import JudgePromptSource
from jurist.judging.python_strings import read_python_strings
from jurist.judging.rubric_readers import read_criteria_met, read_criteria_met_ef, read_score
from jurist.rules import visible_text
from jurist.store import Question

READER_VERSION = 1
"""Bump when a reader accepts or refuses other replies, so stored grades are asked again."""

CONVERSATION, RUBRIC_ITEM = "<<conversation>>", "<<rubric_item>>"
_HB_FIELDS = re.compile(re.escape(CONVERSATION) + "|" + re.escape(RUBRIC_ITEM))
WB_FIELDS = ("query", "response", "criteria")

HEALTHBENCH_REASK = (
    "Your reply could not be read. Reply with only a JSON object with two fields: "
    '"explanation" (a string) and "criteria_met" (true or false).'
)
WRITINGBENCH_REASK = (
    "Your reply could not be read. Reply with only a JSON object with two fields: "
    '"score" (an integer from 1 to 10) and "reason" (a string).'
)


class RubricGrader(Protocol):
    """What the rubric judge kind needs of a benchmark's grader."""

    @property
    def name(self) -> str:
        """The protocol name (run.json, judgments)."""
        ...

    @property
    def metric(self) -> str:
        """The points' metric: which scoring reads them."""
        ...

    @property
    def reask_text(self) -> str: ...

    @property
    def presets(self) -> Mapping[str, Any]:
        """The reference grader's sampling settings."""
        ...

    @property
    def source(self) -> str:
        """Where the prompt texts came from."""
        ...

    @property
    def fingerprint(self) -> str: ...

    def items(self, question: Question) -> list[dict[str, Any]]:
        """The facts of each rubric item or criterion that scoring needs, in order."""
        ...

    def facts(self, question: Question) -> dict[str, Any]:
        """The facts of the whole question that scoring needs (tags, domains, requirements)."""
        ...

    @property
    def reads_written(self) -> bool:
        """Whether the grader cuts the answer as written itself (:meth:`shown`)."""
        ...

    def shown(self, answer: str, written: str | None) -> str:
        """What of the answer the grader sees: ``answer`` is the stored one, ``written`` the content as
        the model wrote it (None where not read)."""
        ...

    def messages(self, question: Question, answer: str, index: int) -> list[dict[str, str]]:
        """The request that grades item ``index`` of ``answer``."""
        ...

    def read(self, text: str) -> dict[str, Any] | None:
        """The grade in a reply, or None when the reply cannot be read."""
        ...

    def value(self, grade: Mapping[str, Any]) -> float:
        """A grade as a point value in [0, 1]."""
        ...


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class HealthBenchGrader:
    """One request per rubric item: the conversation plus the answer, and the item, in one user message.

    ``simple_evals``: turns joined by a blank line, the item as ``[points] criterion``, the sampler's
    system message first, simple-evals' reader; else eval_framework's: one newline, the criterion alone,
    no system message, its more lenient reader. The placeholders are filled in one pass, so text in the
    conversation that looks like a placeholder stays text.
    """

    template: str
    system: str | None
    simple_evals: bool
    source: str
    presets: Mapping[str, Any] = field(default_factory=dict)
    metric: str = "healthbench"
    reask_text: str = HEALTHBENCH_REASK
    protocol: str | None = None
    """The protocol's name where it is not the variant's (``healthbench-gpt-5.4``: no system message)."""

    @property
    def name(self) -> str:
        if self.protocol is not None:
            return self.protocol
        return "healthbench" if self.simple_evals else "healthbench-eval-framework"

    @property
    def fingerprint(self) -> str:
        return _digest(
            [self.name, self.template, self.system, self.reask_text, dict(self.presets), READER_VERSION]
        )

    def items(self, question: Question) -> list[dict[str, Any]]:
        return [dict(item) for item in question.metadata["rubrics"]]

    def facts(self, question: Question) -> dict[str, Any]:
        return {"example_tags": list(question.metadata.get("example_tags", []))}

    reads_written = False

    def shown(self, answer: str, written: str | None) -> str:
        return visible_text(answer)[0]  # the answer, never a leading thought

    def conversation(self, question: Question, answer: str) -> str:
        turns = [*question.metadata["messages"], {"role": "assistant", "content": answer}]
        return ("\n\n" if self.simple_evals else "\n").join(f"{t['role']}: {t['content']}" for t in turns)

    def rubric_item(self, item: Mapping[str, Any]) -> str:
        return f"[{item['points']}] {item['criterion']}" if self.simple_evals else str(item["criterion"])

    def messages(self, question: Question, answer: str, index: int) -> list[dict[str, str]]:
        values = {
            CONVERSATION: self.conversation(question, answer),
            RUBRIC_ITEM: self.rubric_item(question.metadata["rubrics"][index]),
        }
        user = _HB_FIELDS.sub(lambda m: values[m.group(0)], self.template)
        system = [{"role": "system", "content": self.system}] if self.system else []
        return [*system, {"role": "user", "content": user}]

    def read(self, text: str) -> dict[str, Any] | None:
        return read_criteria_met(text) if self.simple_evals else read_criteria_met_ef(text)

    def value(self, grade: Mapping[str, Any]) -> float:
        return 1.0 if grade["met"] else 0.0


@dataclass(frozen=True)
class WritingBenchGrader:
    """One request per criterion: upstream's system prompt, and its user template filled as ``str.format``
    fills it (the criterion as Python writes the dict), the response cut as upstream cuts it
    (:func:`~jurist.judging.answer_cuts.writingbench_cut` of the answer as written)."""

    system: str
    template: str
    source: str
    presets: Mapping[str, Any] = field(default_factory=dict)
    name: str = "writingbench"
    metric: str = "writingbench"
    reask_text: str = WRITINGBENCH_REASK

    @property
    def fingerprint(self) -> str:
        cut = (
            "process_gen_field@ae2d517"  # what of the answer the critic sees: judgments of another cut redone
        )
        return _digest(
            [self.name, self.system, self.template, self.reask_text, dict(self.presets), READER_VERSION, cut]
        )

    reads_written = True

    def shown(self, answer: str, written: str | None) -> str:
        return writingbench_cut(answer if written is None else written)  # upstream's cut, exactly

    def items(self, question: Question) -> list[dict[str, Any]]:
        named = question.metadata["requirements"]["C"]
        return [
            {"name": c["name"], "c": [dim for dim, names in named.items() if c["name"] in names]}
            for c in question.metadata["checklist"]
        ]

    def facts(self, question: Question) -> dict[str, Any]:
        meta = question.metadata
        return {
            "domain1": meta.get("domain1"),
            "domain2": meta.get("domain2"),
            "r": list(meta["requirements"]["R"]),
        }

    def messages(self, question: Question, answer: str, index: int) -> list[dict[str, str]]:
        values = {
            "query": question.prompt,
            "response": answer,
            "criteria": str(question.metadata["checklist"][index]),
        }
        parts = []
        for literal, name, _, _ in string.Formatter().parse(self.template):
            parts.append(literal)
            if name is not None:
                parts.append(values[name])
        return [{"role": "system", "content": self.system}, {"role": "user", "content": "".join(parts)}]

    def read(self, text: str) -> dict[str, Any] | None:
        return read_score(text)

    def value(self, grade: Mapping[str, Any]) -> float:
        return float(grade["score"]) / 10.0


def check_writingbench_template(template: str, origin: str) -> None:
    """``evaluate_prompt`` must be a ``str.format`` template of exactly query, response and criteria."""
    try:
        fields = [
            (name, spec, conv)
            for _, name, spec, conv in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError as exc:
        raise JuristError(f"{origin}: evaluate_prompt is not a format template ({exc})") from None
    for name, spec, conv in fields:
        if name not in WB_FIELDS or spec or conv:
            raise JuristError(f"{origin}: evaluate_prompt has a field {{{name}}} (it takes {WB_FIELDS})")
    absent = [name for name in WB_FIELDS if name not in {f[0] for f in fields}]
    if absent:
        raise JuristError(f"{origin}: evaluate_prompt has no {{{absent[0]}}} placeholder")


def _pinned(source: JudgePromptSource | None, protocol: str, count: int) -> tuple[Sequence[Path], str]:
    """The ``count`` pinned files the benchmark hands ``protocol``'s grader, found now, and their origin."""
    if source is None:
        raise JuristError(
            f"the {protocol} grader needs its benchmark's prompt files; pass --judge-prompt FILE"
        )
    paths = source.files()
    if len(paths) != count:
        raise JuristError(
            f"the {protocol} grader reads {count} prompt files; its benchmark handed {len(paths)}"
        )
    return paths, source.origin


def _presets(source: JudgePromptSource | None) -> dict[str, Any]:
    return dict(source.presets) if source is not None else {}


def healthbench_grader(
    simple_evals: bool,
    prompt_file: Path | None,
    source: JudgePromptSource | None,
    protocol: str | None = None,
) -> HealthBenchGrader:
    """The HealthBench grader of one variant; its texts from ``prompt_file`` (``GRADER_TEMPLATE``, optional
    ``OPENAI_SYSTEM_MESSAGE_API``) or the pinned simple-evals files the benchmark hands it (``source``:
    ``healthbench_eval.py``, then, for simple-evals, ``chat_completion_sampler.py``)."""
    name = protocol or ("healthbench" if simple_evals else "healthbench-eval-framework")
    with_system = simple_evals and protocol is None  # the GPT-5.4 grader is sent no system message
    names = ("GRADER_TEMPLATE", "OPENAI_SYSTEM_MESSAGE_API")
    if prompt_file is not None:
        texts = read_python_strings(prompt_file, names if with_system else names[:1], names[:1])
        origin = f"{prompt_file} (--judge-prompt)"
    else:
        paths, origin = _pinned(source, name, 2 if with_system else 1)
        texts = read_python_strings(paths[0], names[:1], names[:1])
        if with_system:
            texts |= read_python_strings(paths[1], names[1:], names[1:])
    template = texts["GRADER_TEMPLATE"]
    for placeholder in (CONVERSATION, RUBRIC_ITEM):
        if placeholder not in template:
            raise JuristError(f"{origin}: GRADER_TEMPLATE has no {placeholder} placeholder")
    system = texts.get("OPENAI_SYSTEM_MESSAGE_API") if with_system else None
    return HealthBenchGrader(template, system, simple_evals, origin, _presets(source), protocol=protocol)


def writingbench_grader(prompt_file: Path | None, source: JudgePromptSource | None) -> WritingBenchGrader:
    """The WritingBench critic; its texts from ``prompt_file`` or the pinned upstream ``prompt.py`` the
    benchmark hands it (``source``)."""
    names = ("evaluate_system", "evaluate_prompt")
    if prompt_file is not None:
        path, origin = prompt_file, f"{prompt_file} (--judge-prompt)"
    else:
        (path,), origin = _pinned(source, "writingbench", 1)
    texts = read_python_strings(path, names, names)
    check_writingbench_template(texts["evaluate_prompt"], origin)
    return WritingBenchGrader(texts["evaluate_system"], texts["evaluate_prompt"], origin, _presets(source))


GraderFactory = Callable[[Path | None, JudgePromptSource | None], RubricGrader]
"""Builds a grader from ``--judge-prompt FILE`` (or None) and the prompt its benchmark hands it."""

GRADERS: Mapping[str, GraderFactory] = {
    "healthbench": functools.partial(healthbench_grader, True),
    "healthbench-gpt-5.4": lambda prompt_file, source: healthbench_grader(
        True, prompt_file, source, "healthbench-gpt-5.4"
    ),
    "healthbench-eval-framework": functools.partial(healthbench_grader, False),
    "writingbench": writingbench_grader,
}
"""jurist's own graders by protocol name (a benchmark's ``judge_protocol``); a benchmark with a grader of
its own hands it in its prompt source (:attr:`JudgePromptSource.grader`)."""
PROTOCOLS = tuple(GRADERS)


def rubric_grader(
    protocol: str, prompt_file: Path | None = None, source: JudgePromptSource | None = None
) -> RubricGrader:
    """The grader of a benchmark's ``judge_protocol``: the one its prompt ``source`` brings, else jurist's
    grader of that name, reading the prompt its benchmark hands it (``source``) or ``prompt_file``."""
    if source is not None and source.grader is not None:
        grader: RubricGrader = source.grader(prompt_file, source)
        return grader
    factory = GRADERS.get(protocol)
    if factory is None:
        raise JuristError(f"unknown rubric protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    return factory(prompt_file, source)
