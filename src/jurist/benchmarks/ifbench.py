"""IFBench (Pyatkin et al. 2025): 58 out-of-distribution verifiable instructions, checked by rule.

Versions: ``current`` is allenai/IFBench's 300-prompt test file; ``v1`` the 294-prompt file of July 2025
that upstream's shipped ``sample_output.jsonl`` and reference results answer. The paper reports
prompt-level loose accuracy.
"""

from __future__ import annotations

from jurist.benchmarks.base import Benchmark, BenchmarkOptions
from jurist.benchmarks.catalog import BenchmarkCard, nltk_data
from jurist.benchmarks.data_files import PinnedFile
from jurist.benchmarks.rule_data import rule_benchmark, rule_card

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


def benchmark(options: BenchmarkOptions) -> Benchmark:
    from jurist.rules.registry import checkers

    return rule_benchmark("ifbench", "ifbench", VERSIONS, "current", options, checkers("ifbench"))


def catalog_card(name: str) -> BenchmarkCard:
    from jurist.rules import PUNKT_RESOURCE, STOPWORDS_RESOURCE, TAGGER_RESOURCE

    note = " (stopwords: only ratio:stop_words prompts; the tagger: only words:start_verb ones)"
    checker_data = nltk_data(PUNKT_RESOURCE, STOPWORDS_RESOURCE, TAGGER_RESOURCE, note=note)
    about = "300 prompts with out-of-distribution verifiable instructions, checked by rule"
    return rule_card(name, VERSIONS["current"], checker_data, about)
