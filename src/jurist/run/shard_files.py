"""What a shard writes of the whole run it is part of: ``shard.json`` beside its run.json (the shared facts
that ``jurist merge`` compares field by field, and every question's owner), and its first line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jurist.run.shards import SHARD_FILE, ShardPlan
from jurist.store import RunDir, write_json_atomic

if TYPE_CHECKING:
    from jurist.run.plan import RunPlan

SHARED_FIELDS = (
    "bench",
    "bench_name",
    "bench_options",
    "samples",
    "models",
    "baselines",
    "judges",
    "judge_kind",
    "rule_suite",
    "mode",
    "judge_protocol",
    "judge_prompt",
    "protocols",
    "judge_preset",
    "score_family",
)
"""run.json fields every shard of one run has equal (engine settings such as concurrency may differ from
node to node, and so may the URL a model is served at)."""

SPEC_FIELDS = (
    "model", "api_type", "max_tokens", "temperature", "system_prompt", "structured_output", "logprobs",
)  # fmt: skip
"""What of a model's spec decides its answers (not where it is served)."""


def shared_facts(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of a run that every shard of it shares, taken from a shard's run.json fields."""
    facts = {name: fields.get(name) for name in SHARED_FIELDS}
    scoring = dict(fields.get("scoring") or {})
    official = dict(scoring.get("official") or {})
    official.pop("categories", None)  # a shard's own (those it holds); the whole run's are in the plan
    facts["scoring"] = {**scoring, "official": official}
    info = dict(fields.get("bench_info") or {})
    info.pop("shard", None)
    facts["bench_info"] = info
    facts["model_specs"] = {
        alias: _spec_facts(spec) for alias, spec in (fields.get("model_specs") or {}).items()
    }
    return facts


def _spec_facts(spec: Mapping[str, Any]) -> dict[str, Any]:
    facts = {name: spec.get(name) for name in SPEC_FIELDS}
    serve = spec.get("serve")
    if isinstance(serve, Mapping):
        facts["serve"] = {"kind": serve.get("kind"), "model": serve.get("model")}
    return facts


def write_shard_file(run_dir: RunDir, shard: ShardPlan, fields: Mapping[str, Any]) -> dict[str, Any]:
    """``RUN/shard.json`` written (atomically, again at every start: the plan cannot change under a
    directory, a changed one is refused by the merge); returns run.json's ``shard`` field."""
    document = shard.document(shared_facts(fields))
    write_json_atomic(run_dir.root / SHARD_FILE, document)
    return {
        "index": shard.choice.index,
        "count": shard.choice.count,
        "source": shard.choice.source,
        "fingerprint": document["fingerprint"],
        "questions": sum(1 for owner in shard.owners.values() if owner == shard.choice.index),
        "of": shard.n_questions,
    }


def shard_line(plan: RunPlan) -> str:
    """``shard 1/4 (SLURM_ARRAY_TASK_ID=1): 188 of 750 questions -> runs/x/shards/1-of-4``."""
    shard = plan.shard
    assert shard is not None
    choice = shard.choice
    where = "" if choice.source == "--shard" else f" ({choice.source})"
    return (
        f"shard {choice.label()}{where}: {len(plan.bench.questions)} of {shard.n_questions} questions "
        f"-> {plan.run_dir.root} (join the shards with jurist merge)"
    )


__all__ = ["shard_line", "shared_facts", "write_shard_file"]
