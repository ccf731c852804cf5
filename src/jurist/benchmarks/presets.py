"""A benchmark's reference judge: the grader and sampling its own leaderboard used, and where a run differs.

Numbers from one judge are not comparable with numbers from another, so every named benchmark says which
judge its published scores came from (``Benchmark.info["reference_judge"]``, written to run.json with the
rest of ``bench_info``). ``--judge`` may still name any model: the run then says, at its start, at its end
and in run.json (``judge_preset``), in which ways each judge departs from the reference. A sampling field
that the judge's models-file entry leaves unset is sent as the reference's (:func:`with_reference_sampling`),
so "nothing said" means "as the benchmark does", never a server's own default.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.config import PASSTHROUGH_PARAMS, REPLACE_HINT, ModelSpec, retirement_phrase

REFERENCE_KEY = "reference_judge"
"""Where a benchmark keeps its :class:`ReferenceJudge` (as :meth:`ReferenceJudge.as_info`) in ``info``."""

SAMPLING_FIELDS = ("temperature", "max_tokens")
"""The ModelSpec fields a reference fills when unset; other settings travel in ``params``."""


@dataclass(frozen=True)
class ReferenceJudge:
    """The judge (or grader) and sampling behind a benchmark's published numbers."""

    model: str | None
    """The grader model; None where the benchmark names none (any judge is the reference's)."""
    temperature: float | None
    max_tokens: int | None
    prompt_version: str
    """Which prompt text, pinned where it comes from (repository@commit file)."""
    protocol: str
    """The judge protocol or grader that sends that prompt (``--judge-protocol`` names another)."""
    source: str
    """Where these settings are stated (a config file at a commit, a README)."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Other request fields of the reference (``top_p``; AlpacaEval's ``logprobs``, ``top_logprobs``)."""
    fixed: tuple[str, ...] = ()
    """Fields the protocol always sends itself whatever the judge's entry says (AlpacaEval: max_tokens 1)."""
    notes: tuple[str, ...] = ()
    """What else the benchmark's authors use (another official judge, an ensemble for one category)."""

    def as_info(self) -> dict[str, Any]:
        """The reference as JSON for ``Benchmark.info`` and run.json."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "prompt_version": self.prompt_version,
            "protocol": self.protocol,
            "source": self.source,
            "params": dict(self.params),
            "fixed": list(self.fixed),
            "notes": list(self.notes),
        }

    @classmethod
    def from_info(cls, value: Any) -> ReferenceJudge | None:
        """The reference recorded by :meth:`as_info` (None when ``value`` is not one)."""
        if not isinstance(value, Mapping) or not isinstance(value.get("prompt_version"), str):
            return None
        temperature, max_tokens = value.get("temperature"), value.get("max_tokens")
        return cls(
            model=str(value["model"]) if value.get("model") is not None else None,
            temperature=float(temperature) if temperature is not None else None,
            max_tokens=int(max_tokens) if max_tokens is not None else None,
            prompt_version=value["prompt_version"],
            protocol=str(value.get("protocol") or ""),
            source=str(value.get("source") or ""),
            params=dict(value.get("params") or {}),
            fixed=tuple(str(name) for name in value.get("fixed") or ()),
            notes=tuple(str(note) for note in value.get("notes") or ()),
        )


def reference_of(info: Mapping[str, Any]) -> ReferenceJudge | None:
    """The reference judge a benchmark's ``info`` declares, if any."""
    return ReferenceJudge.from_info(info.get(REFERENCE_KEY))


def with_reference_sampling(spec: ModelSpec, reference: ReferenceJudge) -> ModelSpec:
    """``spec`` with the reference's temperature, max_tokens and pass-through parameters wherever the
    models-file entry leaves them unset; what the entry says always wins."""
    update: dict[str, Any] = {}
    for name in SAMPLING_FIELDS:
        if (
            getattr(spec, name) is None
            and getattr(reference, name) is not None
            and name not in reference.fixed
        ):
            update[name] = getattr(reference, name)
    own = spec.model_extra or {}
    for name, value in reference.params.items():
        if name in PASSTHROUGH_PARAMS and name not in own and name not in reference.fixed:
            update[name] = value
    return spec.model_copy(update=update) if update else spec


def _model_name(name: str) -> str:
    """A model id without a provider prefix (``openai/gpt-4.1`` -> ``gpt-4.1``), compared case-blind."""
    return name.rsplit("/", 1)[-1].lower()


def same_model(reference: str, used: str) -> bool:
    """Whether ``used`` is the reference model or a dated snapshot of it (``gpt-4.1-2025-04-14``; not
    ``gpt-4.1-mini``, another model)."""
    ref, own = _model_name(reference), _model_name(used)
    return re.fullmatch(re.escape(ref) + r"(-\d{4}(-\d{2}-\d{2})?|-\d{8})?", own) is not None


def _differs(value: Any, reference: Any) -> bool:
    if isinstance(value, (int, float)) and isinstance(reference, (int, float)):
        return not math.isclose(float(value), float(reference), rel_tol=0.0, abs_tol=1e-9)
    return bool(value != reference)


def deviations(
    reference: ReferenceJudge, spec: ModelSpec, protocol: str, prompt_file: str | Path | None = None
) -> list[str]:
    """How one judge departs from the reference, one short phrase each (empty: it is the reference).

    ``spec`` is the judge's entry as sent (reference sampling filled in); ``protocol`` the protocol its
    judge kind uses; ``prompt_file`` a ``--judge-prompt`` replacing the reference's texts.
    """
    found: list[str] = []
    if reference.model is not None and not same_model(reference.model, spec.model):
        found.append(f"model {spec.model} (reference {reference.model})")
    for name in SAMPLING_FIELDS:
        if name in reference.fixed:
            continue
        value, wanted = getattr(spec, name), getattr(reference, name)
        if wanted is not None and value is None:
            found.append(f"{name} left to the server (reference {wanted})")
        elif wanted is not None and _differs(value, wanted):
            found.append(f"{name} {value} (reference {wanted})")
    params = spec.passthrough_params()
    for name, wanted in reference.params.items():
        if name in PASSTHROUGH_PARAMS and name not in reference.fixed and _differs(params.get(name), wanted):
            found.append(f"{name} {params.get(name)} (reference {wanted})")
    if prompt_file is not None:
        found.append(f"prompt {prompt_file} (reference {reference.prompt_version})")
    elif protocol.split("+", 1)[0] != reference.protocol:
        found.append(f"protocol {protocol} (reference {reference.protocol})")
    return found


@dataclass(frozen=True)
class JudgePreset:
    """A run's judges measured against its benchmark's reference: what run.json records, what is said."""

    reference: ReferenceJudge | None
    judges: Mapping[str, Mapping[str, Any]]
    """Per judge alias: model, temperature, max_tokens, protocol and the list of deviations."""

    @property
    def follows_reference(self) -> bool | None:
        """True when every judge is the reference; None when the benchmark names no reference."""
        if self.reference is None:
            return None
        return all(not entry["deviations"] for entry in self.judges.values())

    def record(self) -> dict[str, Any] | None:
        """run.json's ``judge_preset`` (None for a benchmark without a reference judge)."""
        if self.reference is None:
            return None
        return {
            "reference": self.reference.as_info(),
            "judges": {alias: dict(entry) for alias, entry in self.judges.items()},
            "follows_reference": self.follows_reference,
        }

    def lines(self, bench: str) -> list[str]:
        """One line per judge that departs from the reference (one line when all follow it)."""
        if self.reference is None or not self.judges:
            return []
        ref = self.reference
        retired = retirement_phrase(ref.model) if ref.model is not None else None
        if retired is not None and any(same_model(ref.model or "", e["model"]) for e in self.judges.values()):
            return [
                f"{bench}: the reference judge {retired}; {REPLACE_HINT.format(bench=bench)}",
                *self._judge_lines(bench),
            ]
        return self._judge_lines(bench)

    def _judge_lines(self, bench: str) -> list[str]:
        assert self.reference is not None
        ref = self.reference
        if self.follows_reference:
            return [f"{bench}: judged as the reference ({ref.model or 'any model'}, {ref.prompt_version})"]
        return [
            f"{bench}: judge {alias} deviates from the reference judge: {'; '.join(entry['deviations'])}; "
            "its scores are not comparable with the published ones"
            for alias, entry in self.judges.items()
            if entry["deviations"]
        ]


def judge_preset(
    info: Mapping[str, Any],
    specs: Mapping[str, ModelSpec],
    protocols: Mapping[str, str],
    prompt_file: str | Path | None = None,
) -> JudgePreset:
    """The judges ``specs`` (as sent) with the protocols their kinds use, against ``info``'s reference."""
    reference = reference_of(info)
    if reference is None:
        return JudgePreset(None, {})
    judges: dict[str, dict[str, Any]] = {}
    for alias, spec in specs.items():
        sent = with_reference_sampling(spec, reference)
        protocol = protocols.get(alias, reference.protocol)
        judges[alias] = {
            "model": sent.model,
            "temperature": sent.temperature,
            "max_tokens": sent.max_tokens,
            "params": sent.passthrough_params(),
            "protocol": protocol,
            "deviations": deviations(reference, sent, protocol, prompt_file),
        }
    return JudgePreset(reference, judges)


def reference_sampling(
    info: Mapping[str, Any], judges: Sequence[str], specs: Mapping[str, ModelSpec]
) -> dict[str, ModelSpec]:
    """The judges' specs with the reference's sampling filled in where unset (unchanged without one)."""
    reference = reference_of(info)
    if reference is None:
        return {}
    return {alias: with_reference_sampling(specs[alias], reference) for alias in judges if alias in specs}
