"""IFBench (Pyatkin et al. 2025): 58 out-of-distribution verifiable instructions, checked by rule.

``-B version`` is the upstream commit whose scoring code jurist reproduces: ``db69a6f`` (2026-08-19,
upstream's newest, the default) or ``c94da02`` (2025-10-17, the code of the shipped reference results).
They differ in their checkers (:mod:`jurist.rules.ifbench_db69a6f`) and in ``--answers``: ``db69a6f``
counts a prompt the file does not answer as failed and matches prompts after trimming whitespace, where
``c94da02`` (which stops on a missing prompt) leaves it out and matches exactly.

``-B data`` is the question file: ``current`` is allenai/IFBench's 300-prompt test file; ``v1`` the
294-prompt file of July 2025 that upstream's shipped ``sample_output.jsonl`` and reference results
answer. The paper reports prompt-level loose accuracy.
"""

from __future__ import annotations

import dataclasses

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, take_options
from jurist.benchmarks.catalog import BenchmarkCard, nltk_data
from jurist.benchmarks.data_files import PinnedFile
from jurist.benchmarks.rule_data import rule_benchmark, rule_card
from jurist.errors import JuristError

_REPO = "https://raw.githubusercontent.com/allenai/IFBench"
VERSIONS = {
    "current": PinnedFile(
        "ifbench",
        "current",
        ("ifbench/IFBench_test.jsonl", "IFBench_test.jsonl"),
        f"{_REPO}/db69a6f05689830b0068b8f1529ebcfd2f3b164c/data/IFBench_test.jsonl",
        "a2bf7b8e7ed11d39c65b4ec781da8b99663ed0121f97033d70fcecb61f8a9d85",
        "allenai/IFBench@db69a6f data/IFBench_test.jsonl",
    ),
    "v1": PinnedFile(
        "ifbench",
        "v1",
        ("ifbench/reference/IFBench_test_v1_8a66c06.jsonl", "IFBench_test_v1_8a66c06.jsonl"),
        f"{_REPO}/8a66c069755e98b8d0871829751da9fd7b6ce8f0/data/IFBench_test.jsonl",
        "11c3d683dcc7f4908a4d3cacd05c9a8bbd5484af2f8fde969e7abe2b8bad3e34",
        "allenai/IFBench@8a66c06 data/IFBench_test.jsonl",
    ),
}


UPSTREAM = {
    "db69a6f": "allenai/IFBench@db69a6f05689830b0068b8f1529ebcfd2f3b164c",
    "c94da02": "allenai/IFBench@c94da0204a1552be9e5c206b732e29f7d279f0c7",
}
"""``-B version`` -> the upstream commit whose scoring code the checkers reproduce."""
DEFAULT_VERSION = "db69a6f"

UNANSWERED = {"db69a6f": "failed", "c94da02": "left out"}
"""What a prompt that ``--answers`` does not answer counts as, per version (read in scoring)."""

PROMPT_MATCH = {"db69a6f": "trimmed", "c94da02": "exact"}
"""How ``--answers`` lines are matched to prompts by text, per version (``answers_file``)."""

OPTIONS = {
    "version": f"the upstream scoring code reproduced: {' or '.join(UPSTREAM)} (default {DEFAULT_VERSION})",
    "data": f"which pinned question file: {' or '.join(VERSIONS)} (default current)",
    "file": "your own question file in the reference format, instead of the pinned data",
}


def benchmark(options: BenchmarkOptions) -> Benchmark:
    from jurist.rules import checkers

    chosen = take_options("ifbench", options, OPTIONS)
    version = chosen.pop("version", DEFAULT_VERSION)
    if version not in UPSTREAM:
        hint = " (the question file is -B data= now)" if version in VERSIONS else ""
        raise JuristError(
            f"-B version: ifbench has no version {version!r}{hint}: it takes an upstream commit, "
            f"{' or '.join(UPSTREAM)}"
        )
    data = chosen.pop("data", None)
    if data is not None:
        if "file" in chosen:
            raise JuristError("-B file and -B data: ifbench takes one or the other")
        if data not in VERSIONS:
            raise JuristError(f"-B data: ifbench has no data {data!r} (it has: {', '.join(VERSIONS)})")
        chosen["version"] = data  # rule_benchmark's name for the pinned file
    suite = f"ifbench@{version}"
    bench = rule_benchmark("ifbench", suite, VERSIONS, "current", chosen, checkers(suite))
    info = dict(bench.info)
    info["data"] = info.pop("version")
    info |= {
        "suite": "ifbench",
        "version": version,
        "upstream": UPSTREAM[version],
        "unanswered": UNANSWERED[version],
        "prompt_match": PROMPT_MATCH[version],
    }
    return dataclasses.replace(bench, info=info)


def catalog_card(name: str) -> BenchmarkCard:
    from jurist.rules import PUNKT_RESOURCE, STOPWORDS_RESOURCE, TAGGER_RESOURCE

    note = " (stopwords: only ratio:stop_words prompts; the tagger: only words:start_verb ones)"
    checker_data = nltk_data(PUNKT_RESOURCE, STOPWORDS_RESOURCE, TAGGER_RESOURCE, note=note)
    about = "300 prompts with out-of-distribution verifiable instructions, checked by rule"
    return rule_card(name, VERSIONS["current"], checker_data, about)
