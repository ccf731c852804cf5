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
    "arena-hard" brings upstream's per-category system prompts with it (:func:`protocol_set`)."""
    if name == "pairwise":
        try:
            chosen, by_category = protocol_set(protocol, spec, prompt_file, default_protocol)
        except KeyError:
            raise JuristError(f"--judge-protocol: unknown protocol {protocol!r}") from None
        return PairwiseJudge(chosen, spec, strong_weight=strong_weight, by_category=by_category)
    raise JuristError(f"unknown judge kind {name!r}")
