"""Benchmarks as data plus choices: each module builds a :class:`Benchmark` (questions, shipped answers,
baselines, its judge kind and the prompt it hands that kind, metrics, default samples); the registry maps
names to them. Nothing here sends a request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.benchmarks.alpaca_eval import OfficialLC, official_lc_for, question_uid
    from jurist.benchmarks.answers_file import read_answers_file, with_answers_file
    from jurist.benchmarks.arena_hard import default_baseline
    from jurist.benchmarks.arena_hard_named import official_arena_scoring
    from jurist.benchmarks.base import (
        Benchmark,
        BenchmarkOptions,
        Question,
        RubricSuite,
        register_rubric_suite,
        rubric_suite,
        shuffled_order,
        take_options,
    )
    from jurist.benchmarks.baseline_file import baseline_from
    from jurist.benchmarks.catalog import BenchmarkCard, Found, Need, card_record, kind_of, package_file
    from jurist.benchmarks.judgebench import (
        BASELINE,
        CANDIDATE,
        Pair,
        field_error,
        pair_from_record,
        pair_of,
        read_jsonl_any,
    )
    from jurist.benchmarks.judgebench_scoring import (
        LABELS,
        ROW_FIELDS,
        Decision,
        Group,
        JudgeScore,
        Label,
        normalize_decision,
        score_decisions,
        score_games,
        score_row,
        source_group,
        unswap,
    )
    from jurist.benchmarks.presets import JudgePreset, judge_preset, reference_sampling
    from jurist.benchmarks.registry import (
        benchmark_card,
        benchmark_names,
        benchmark_provider,
        is_benchmark_name,
        load_benchmark,
    )

_HOMES = {
    "OfficialLC": "alpaca_eval",
    "official_lc_for": "alpaca_eval",
    "question_uid": "alpaca_eval",
    "read_answers_file": "answers_file",
    "with_answers_file": "answers_file",
    "default_baseline": "arena_hard",
    "official_arena_scoring": "arena_hard_named",
    "Benchmark": "base",
    "BenchmarkOptions": "base",
    "Question": "base",
    "RubricSuite": "base",
    "register_rubric_suite": "base",
    "rubric_suite": "base",
    "shuffled_order": "base",
    "take_options": "base",
    "BenchmarkCard": "catalog",
    "Found": "catalog",
    "Need": "catalog",
    "card_record": "catalog",
    "kind_of": "catalog",
    "package_file": "catalog",
    "baseline_from": "baseline_file",
    "BASELINE": "judgebench",
    "CANDIDATE": "judgebench",
    "Pair": "judgebench",
    "field_error": "judgebench",
    "pair_from_record": "judgebench",
    "pair_of": "judgebench",
    "read_jsonl_any": "judgebench",
    "Decision": "judgebench_scoring",
    "Group": "judgebench_scoring",
    "JudgeScore": "judgebench_scoring",
    "LABELS": "judgebench_scoring",
    "Label": "judgebench_scoring",
    "ROW_FIELDS": "judgebench_scoring",
    "normalize_decision": "judgebench_scoring",
    "score_decisions": "judgebench_scoring",
    "score_games": "judgebench_scoring",
    "score_row": "judgebench_scoring",
    "source_group": "judgebench_scoring",
    "unswap": "judgebench_scoring",
    "JudgePreset": "presets",
    "judge_preset": "presets",
    "reference_sampling": "presets",
    "benchmark_card": "registry",
    "benchmark_names": "registry",
    "benchmark_provider": "registry",
    "is_benchmark_name": "registry",
    "load_benchmark": "registry",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "shuffled_order",
    "BASELINE",
    "Benchmark",
    "BenchmarkCard",
    "BenchmarkOptions",
    "Found",
    "Need",
    "CANDIDATE",
    "Decision",
    "Group",
    "JudgePreset",
    "JudgeScore",
    "LABELS",
    "Label",
    "OfficialLC",
    "Pair",
    "Question",
    "ROW_FIELDS",
    "RubricSuite",
    "baseline_from",
    "benchmark_card",
    "benchmark_names",
    "benchmark_provider",
    "is_benchmark_name",
    "card_record",
    "default_baseline",
    "field_error",
    "judge_preset",
    "kind_of",
    "load_benchmark",
    "normalize_decision",
    "official_arena_scoring",
    "official_lc_for",
    "package_file",
    "pair_from_record",
    "pair_of",
    "question_uid",
    "read_answers_file",
    "read_jsonl_any",
    "reference_sampling",
    "register_rubric_suite",
    "rubric_suite",
    "score_decisions",
    "score_games",
    "score_row",
    "source_group",
    "take_options",
    "unswap",
    "with_answers_file",
]
