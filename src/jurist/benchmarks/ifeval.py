"""IFEval (Zhou et al. 2023): 541 prompts with 25 kinds of verifiable instructions, checked by rule.

Versions: ``current`` is google-research's ``input_data.jsonl``; ``gpt4-2023`` is the archived input the
published GPT-4 responses were made for (key 2785 asks for "at least one placeholder").
"""

from __future__ import annotations

from jurist.benchmarks.base import Benchmark, BenchmarkOptions
from jurist.benchmarks.catalog import BenchmarkCard, nltk_data
from jurist.benchmarks.data_files import PinnedFile
from jurist.benchmarks.rule_data import rule_benchmark, rule_card

_REPO = "https://raw.githubusercontent.com/google-research/google-research"
VERSIONS = {
    "current": PinnedFile(
        "ifeval",
        "current",
        ("ifeval/input_data.jsonl", "input_data.jsonl"),
        f"{_REPO}/19638399cc9e03623c5b9087a1d6fa8813974ce9/instruction_following_eval/data/input_data.jsonl",
        "67ffeee0fcb87c317c5b08a2de85557b4a7e96ada6178aa645b4954fe4b53d49",
        "google-research/google-research@1963839 instruction_following_eval/data/input_data.jsonl",
    ),
    "gpt4-2023": PinnedFile(
        "ifeval",
        "gpt4-2023",
        ("ifeval/input_data_gpt4_20231107_145030.jsonl", "input_data_gpt4_20231107_145030.jsonl"),
        f"{_REPO}/fe0241392b11f0c2e7fa5ba0c3e98b6d220cf163/instruction_following_eval/data/"
        "input_data_gpt4_20231107_145030.jsonl",
        "86ea91641ee9e6b891330f3f019e82c481abddbdea5945106df1dfe59757fbc2",
        "google-research/google-research@fe02413 instruction_following_eval/data/"
        "input_data_gpt4_20231107_145030.jsonl",
    ),
}


def benchmark(options: BenchmarkOptions) -> Benchmark:
    from jurist.rules import checkers

    return rule_benchmark("ifeval", "ifeval", VERSIONS, "current", options, checkers("ifeval"))


def catalog_card(name: str) -> BenchmarkCard:
    from jurist.rules import PUNKT_RESOURCE

    about = "541 prompts with verifiable instructions, checked by rule"
    return rule_card(name, VERSIONS["current"], nltk_data(PUNKT_RESOURCE), about)
