"""jurist.tokens.o200k counts exactly what tiktoken counts, text by text: on real answers and prompts in many
languages from ../shared/data, on edge cases of the split pattern, and with its cache cut short."""

from __future__ import annotations

import json
import random
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import jurist.tokens.o200k as o200k
from jurist.tokens.style import count_tokens, o200k_counter
from o200k_oracle import tiktoken_count

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CORPUS = [  # (file, texts taken from it): answers, prompts and rubrics in English, Chinese, Russian, more
    ("arena-hard/data/arena-hard-v2.0/model_answer/o3-mini-2025-01-31.jsonl", 150),
    ("arena-hard/data/arena-hard-v2.0/question.jsonl", 750),
    ("arena-hard-local/question_ru.jsonl", 300),
    ("arena-hard-local/model_answer/Phi-3-medium-128k-instruct.jsonl", 300),
    ("writingbench/benchmark_all.jsonl", 400),
    ("healthbench/healthbench_500_subset.jsonl", 400),
    ("judgebench/data/dataset=judgebench,response_model=gpt-4o-2024-05-13.jsonl", 300),
    ("ifbench/IFBench_test.jsonl", 300),
]

EDGE_CASES = [
    "",
    " ",
    "\n\n\n",
    "   \n  \t\n ",
    "\r\n\r\nx\r\n",
    "hello world",
    "Hello World's DON'T I'M they'RE we'Ve it'LL he'd",
    "1234567890 3.14159 1,000,000 000 12a34",
    "👍🏽 family 👨‍👩‍👧‍👦 🇫🇷",
    "e\u0301te\u0301 Z\u0351\u0354a\u0337l\u0336g\u0334o",
    "日本語のテキスト、한국어 텍스트, ภาษาไทย, العربية, עברית, हिन्दी, Ελληνικά, Русский",
    "<|endoftext|>text<|endofprompt|>",
    "\x00\x01\x1c\x1d\x1e\x1f\x0b\x0c\u2028\u2029\u00a0\u3000\u200b",
    "a" * 5000,
    " " * 1000 + "x",
    "=" * 300 + "\n" + "-" * 257,
    "def f(x):\n    return {'a': [1, 2, 3]}  # comment\n\tif x != 0x1F: pass\n",
    "https://example.com/path?q=1&r=%20x#frag user@example.org",
    "ALLCAPS WORDS ThenCamelCase mIxEd lower",
    "".join(chr(c) for c in range(32, 0x250)),
]


def corpus() -> Iterator[str]:
    for relative, limit in CORPUS:
        path = DATA / relative
        if not path.is_file():
            continue
        taken = 0
        with path.open(encoding="utf-8") as handle:  # not splitlines(): texts contain U+2028
            for line in handle:
                for text in strings(json.loads(line)):
                    yield text
                    taken += 1
                if taken >= limit:
                    break


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str) and len(value) > 1:
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@pytest.mark.skipif(not DATA.is_dir(), reason="shared data not present")
def test_counts_equal_tiktoken_on_real_texts_in_many_languages() -> None:
    texts = list(corpus())
    assert len(texts) > 2500
    joined = "".join(texts)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in joined)  # Chinese
    assert any("\u0400" <= ch <= "\u04ff" for ch in joined)  # Russian
    mismatched = [text[:60] for text in texts if count_tokens(text) != tiktoken_count(text)]
    assert mismatched == []


def test_counts_equal_tiktoken_on_edge_cases() -> None:
    assert [count_tokens(text) for text in EDGE_CASES] == [tiktoken_count(text) for text in EDGE_CASES]
    assert count_tokens("") == 0 and count_tokens("hello world") == 2


def test_counts_equal_tiktoken_on_random_text() -> None:
    """Seeded random strings over letters, digits, marks, punctuation and spaces of many scripts."""
    rng = random.Random(7)
    ranges = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x52F), (0x590, 0x6FF), (0x900, 0x97F)]
    ranges += [(0xE00, 0xE7F), (0x3040, 0x30FF), (0x4E00, 0x4FFF), (0xAC00, 0xAD00), (0x2000, 0x206F)]
    ranges += [(0x1F300, 0x1F64F), (0x9, 0xD)]
    texts = []
    for _ in range(400):
        chosen = [rng.choice(ranges) for _ in range(rng.randint(1, 4))]
        texts.append("".join(chr(rng.randint(*rng.choice(chosen))) for _ in range(rng.randint(1, 300))))
    assert [count_tokens(text) for text in texts] == [tiktoken_count(text) for text in texts]


def test_lone_surrogates_are_replaced_as_tiktoken_replaces_them() -> None:
    for text in ("a\ud800b", "\udfff", "x \ud83d y \ude00 z"):
        assert count_tokens(text) == tiktoken_count(text)


def test_a_cache_that_fills_up_starts_afresh_and_counts_stay_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(o200k, "CACHE_PIECES", 16)
    counter = o200k_counter()
    monkeypatch.setattr(counter, "_cache", {})
    texts = [text for text in EDGE_CASES if text] * 2
    assert [counter.count(text) for text in texts] == [tiktoken_count(text) for text in texts]
    assert 0 < len(counter._cache) <= 16


def test_threads_counting_at_once_agree() -> None:
    texts = [f"{text} {i} Zählwörter{i}" for i, text in enumerate(EDGE_CASES * 5)]
    expected = [tiktoken_count(text) for text in texts]
    counter = o200k_counter()
    results: list[list[int]] = []

    def count_all() -> None:
        results.append([counter.count(text) for text in texts])

    threads = [threading.Thread(target=count_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_the_tables_stay_small() -> None:
    """The point of the module: the vocabulary held in a few MB of arrays, not 200k Python objects."""
    counter = o200k_counter()
    arrays = sum(len(table[0]) + table[1].itemsize * len(table[1]) for table in counter._tables if table)
    short = sys.getsizeof(counter._short) + sum(sys.getsizeof(key) for key in counter._short)
    assert arrays + short < 8_000_000
    assert len(counter._short) + sum(table[2] for table in counter._tables if table) > 200_000


def test_a_ranks_file_without_tokens_is_refused() -> None:
    with pytest.raises(ValueError, match="no tokens"):
        o200k.tokens_by_length(b"\n")
