"""inspect_evals' IFEval task read from a local file: the task file bench/bench_e2e.py hands to ``inspect
eval`` for its IFEval leg, in the Inspect venv (never jurist's interpreter; this file imports no jurist).

inspect_evals' own ``ifeval`` task loads ``google/IFEval`` from the Hugging Face hub; this one is the same
task (its ``record_to_sample``, its ``generate()`` solver, its ``instruction_following`` scorer) with the
dataset read from ``$IFEVAL_INPUT`` (upstream's ``input_data.jsonl``: the same 541 prompts and fields),
so that nothing is downloaded and every system answers the same prompts.

Run: ``inspect eval bench/e2e_inspect_ifeval.py@ifeval_local --model openai-api/mock/bench-model
--model-base-url URL --max-connections N`` with ``IFEVAL_INPUT`` and ``MOCK_API_KEY`` set.
"""

from __future__ import annotations

import os

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.solver import generate
from inspect_evals.ifeval.ifeval import instruction_following, record_to_sample


@task
def ifeval_local() -> Task:
    """inspect_evals' IFEval, its data from ``$IFEVAL_INPUT`` instead of the hub."""
    dataset = json_dataset(os.environ["IFEVAL_INPUT"], sample_fields=record_to_sample)
    return Task(dataset=dataset, solver=[generate()], scorer=instruction_following())
