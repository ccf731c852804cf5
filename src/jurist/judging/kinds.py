"""Judge kind names -> the judge kind that serves one judge alias in one run."""

from __future__ import annotations

from pathlib import Path

from jurist.benchmarks.base import JudgeKindName
from jurist.config import ModelSpec
from jurist.errors import JuristError
from jurist.judging.base import JudgeKind
from jurist.judging.pairwise import PairwiseJudge
from jurist.judging.protocols import protocol_set


def judge_kind_for(
    name: JudgeKindName,
    *,
    protocol: str | None,
    default_protocol: str,
    spec: ModelSpec,
    prompt_file: Path | None = None,
    strong_weight: int = 3,
) -> JudgeKind:
    """The judge kind ``name`` for the judge ``spec``; ``protocol`` (from --judge-protocol) else the
    benchmark's ``default_protocol`` (the judge's own models-file preference still applies inside).
    "arena-hard" brings upstream's per-category system prompts with it (:func:`protocol_set`). A rubric
    benchmark's grader is fixed by the benchmark (HealthBench's variant is ``-B variant=``); ``prompt_file``
    then replaces upstream's prompt texts (:mod:`jurist.judging.rubric_prompts`)."""
    if name == "rubric":
        from jurist.judging.rubric import RubricJudge
        from jurist.judging.rubric_prompts import rubric_grader

        if protocol is not None and protocol != default_protocol:
            raise JuristError(
                f"--judge-protocol {protocol!r} does not apply: this benchmark grades with its own rubric "
                f"grader ({default_protocol}); HealthBench's variant is chosen with -B variant="
            )
        return RubricJudge(rubric_grader(default_protocol, prompt_file), spec)
    if name == "preference":
        from jurist.judging.alpaca_protocol import AlpacaJudge, load_template

        if protocol is not None and protocol != default_protocol:
            raise JuristError(
                f"--judge-protocol {protocol!r} does not apply: this benchmark judges with its own protocol "
                f"({default_protocol}); --judge-prompt replaces its prompt"
            )
        return AlpacaJudge(load_template(prompt_file), spec)
    if name == "pairwise":
        try:
            chosen, by_category = protocol_set(protocol, spec, prompt_file, default_protocol)
        except KeyError:
            raise JuristError(f"--judge-protocol: unknown protocol {protocol!r}") from None
        return PairwiseJudge(chosen, spec, strong_weight=strong_weight, by_category=by_category)
    raise JuristError(f"unknown judge kind {name!r}")
