"""jurist's o200k counts (jurist.tokens.pieces: the C one and the Python one) against tiktoken's encoding of
the same ranks, text by text: the shared data's answers and prompts, degenerate text, random Unicode, and
each merge on random bytes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurist.tokens import o200k_encoding, pieces
from jurist.tokens.encoding import o200k_ranks, read_o200k_ranks
from jurist.tokens.pieces import (
    COMPILED_LONG_PIECE,
    LONG_PIECE,
    CompiledO200kCounter,
    O200kCounter,
    compiled_counting,
    merged_parts,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SHARED_FILES = [
    DATA / "arena-hard" / "data" / "arena-hard-v2.0" / "model_answer" / "o3-mini-2025-01-31.jsonl",
    DATA / "arena-hard" / "data" / "arena-hard-v2.0" / "question.jsonl",
    *sorted((DATA / "writingbench").rglob("*.jsonl"))[:2],  # Chinese and English writing prompts
]


def tiktoken_count(text: str) -> int:
    return len(o200k_encoding().encode_ordinary(text))


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    return o200k_ranks()


@pytest.fixture(params=["compiled", "python"])
def counter(
    request: pytest.FixtureRequest, ranks: dict[bytes, int], monkeypatch: pytest.MonkeyPatch
) -> Iterator[CompiledO200kCounter | O200kCounter]:
    """Each of jurist's counts, one that never hands over to tiktoken: every count below is its own."""
    monkeypatch.setattr(pieces, "NATIVE_AFTER", 1 << 40)
    made = (
        CompiledO200kCounter(read_o200k_ranks()) if request.param == "compiled" else O200kCounter(dict(ranks))
    )
    yield made
    assert not made.handed_over


def test_this_install_counts_in_c() -> None:
    """./dev installs jurist with its C module compiled (a C compiler is part of its set-up), so the C
    count is what these tests, and every run here, use; a build that failed would show here."""
    assert compiled_counting()
    assert isinstance(pieces.build_o200k_counter(), CompiledO200kCounter)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def shared_texts() -> list[str]:
    texts: list[str] = []
    for path in SHARED_FILES:
        if not path.is_file():
            pytest.skip(f"shared data missing: {path}")
        lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        for line in lines[:400]:  # ~3M characters in all
            texts.extend(strings(json.loads(line)))
    return texts


def test_every_shared_text_counts_what_tiktoken_counts(counter: CompiledO200kCounter | O200kCounter) -> None:
    texts = shared_texts()
    assert len(texts) > 1500 and any("\u4e00" <= ch <= "\u9fff" for ch in "".join(texts))
    mismatched = [text[:80] for text in texts if counter.count(text) != tiktoken_count(text)]
    assert mismatched == []


DEGENERATE = [
    "",
    " ",
    "a" * (LONG_PIECE * 3),  # one piece, no token: tiktoken's merge
    "a" * (LONG_PIECE - 1),  # just under: merged here
    "b" * (COMPILED_LONG_PIECE + 1),  # over the C merge's bound
    "\u4e2d\u6587" * 600,  # CJK over the Python merge's bound, under the C one's
    "ascii then \u00e9t\u00e9 caf\u00e9 then ascii again" * 30,  # in and out of the C scan
    "\u00e9 " * 5000,  # dense outside ASCII: the regex module cuts the rest in one call
    "\u043f\u0440\u0438 \u0432\u0435\u0442 " * 3000 + "then ascii",
    "a\u2014b " * 3000,
    "x\u00a0y\u3000z \u00a0 \n\u0085 end",  # whitespace outside ASCII after ASCII whitespace
    "word\u0301 1\u0662\u0663 12\u00b2 ',\u2014, 'r\u00e9 'l\u013e",  # marks, digits, punctuation
    " " * 5000 + "x",
    "\n" * 3000,
    " \n" * 1000 + "   ",
    "\u4e2d\u6587" * 2000,  # CJK without a break: one long piece
    "\U0001f600" * 700,  # 4-byte characters
    "12345678901234567890" * 50,
    "x\x00\x01\x1c\x1f\x7f y \t\t\tz \r\n\r\n \n /\n// ///\r\n  (( ))x\n",  # ASCII controls, runs
    "don't WON'T I'M they'Ll we'VE 'ſ x'S",  # contractions, case-insensitive (long s folds to s)
    "<|endoftext|> and <|endofprompt|> as text",
    "tab\tvertical\x0bform\x0cfeed\x1cfile\x1dgroup\x85next\u2028line\u3000ideographic",
    "lone \ud83d surrogate \udc00 halves \ud83d\ude00 paired",
    "e\u0301\u0302 combining marks \u0915\u094d\u0937 \u0627\u0644\u0639\u0631\u0628\u064a\u0629",
]


@pytest.mark.parametrize("text", DEGENERATE, ids=range(len(DEGENERATE)))
def test_degenerate_and_odd_text_counts_what_tiktoken_counts(
    counter: CompiledO200kCounter | O200kCounter, text: str
) -> None:
    assert counter.count(text) == tiktoken_count(text)


def test_random_unicode_counts_what_tiktoken_counts(counter: CompiledO200kCounter | O200kCounter) -> None:
    rng = random.Random(7)
    alphabet = [chr(code) for code in range(0x20, 0x3000) if not 0xD800 <= code < 0xE000]
    alphabet += list(" \t\n\r'sStTdDmM0123456789") * 40 + ["\U0001f600", "\u4e2d", "\u0301"]
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 120)))
        assert counter.count(text) == tiktoken_count(text), repr(text)


def test_each_merge_leaves_as_many_tokens_as_tiktokens_merge() -> None:
    """On random bytes (any bytes, not only UTF-8), short and up to the long-piece bound."""
    ranks, encoding = o200k_ranks(), o200k_encoding()
    rng = random.Random(3)
    common = b" etaoinshrdlu\n."
    for size in [*range(2, 40), 100, 300, LONG_PIECE]:
        for _ in range(20):
            drawn = (rng.choice(common) if rng.random() < 0.7 else rng.randrange(256) for _ in range(size))
            data = bytes(drawn)
            assert merged_parts(data, ranks) == len(encoding._encode_single_piece(data))


def test_only_a_long_piece_that_is_no_token_builds_tiktokens_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[bytes] = []
    real = o200k_encoding()

    class Watched:
        def _encode_single_piece(self, data: bytes) -> list[int]:
            built.append(data)
            return real._encode_single_piece(data)

    monkeypatch.setattr(pieces, "o200k_encoding", lambda: Watched())
    counter = O200kCounter(o200k_ranks())
    counter.count("an ordinary sentence, with unusualwordsjoinedtogether and numbers 123456")
    assert built == []
    assert counter.count("z" * (LONG_PIECE + 1)) == tiktoken_count("z" * (LONG_PIECE + 1))
    assert built == [b"z" * (LONG_PIECE + 1)]


def test_merged_counts_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces, "CACHED_PIECES", 8)
    counter = O200kCounter(o200k_ranks())
    words = [f"qzx{index}vbn" for index in range(50)]
    assert counter.count(" ".join(words)) == tiktoken_count(" ".join(words))
    assert 0 < len(counter._merged) <= 8
    again = O200kCounter(o200k_ranks())
    text = " qzx1vbn, qzx2vbn."
    first = again.count(text)
    kept = dict(again._merged)
    assert 0 < len(kept) <= 8  # every piece of the text kept: counted again from the kept counts alone
    assert again.count(text) == first == tiktoken_count(text) and again._merged == kept


def test_a_process_that_has_counted_enough_counts_the_rest_with_tiktoken(
    ranks: dict[bytes, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pieces, "NATIVE_AFTER", 1000)
    counter = O200kCounter(dict(ranks))
    texts = shared_texts()[:40]
    assert [counter.count(text) for text in texts] == [tiktoken_count(text) for text in texts]
    assert counter.handed_over and counter._ranks == {}  # the Python tables are let go


def test_threads_counting_across_the_hand_over_count_what_tiktoken_counts(
    ranks: dict[bytes, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers are counted in worker threads: one thread may hand over while others are mid-count."""
    import threading

    monkeypatch.setattr(pieces, "NATIVE_AFTER", 20_000)
    counter = O200kCounter(dict(ranks))
    texts = shared_texts()[:300]
    expected = [tiktoken_count(text) for text in texts]
    results: list[list[int]] = [[] for _ in range(4)]

    def work(slot: int) -> None:
        results[slot] = [counter.count(text) for text in texts]

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.handed_over and results == [expected] * 4


def test_each_c_merge_leaves_as_many_tokens_as_tiktokens_merge() -> None:
    """On random bytes (any bytes, not only UTF-8), short and up to the C merge's long-piece bound."""
    compiled = CompiledO200kCounter(read_o200k_ranks())._ranks
    encoding = o200k_encoding()
    rng = random.Random(5)
    common = b" etaoinshrdlu\n."
    assert compiled.merged(b"") == 0  # (tiktoken's own merge panics on an empty piece)
    for size in [*range(1, 40), 255, 256, 257, 1000, COMPILED_LONG_PIECE]:
        for _ in range(20 if size < 1000 else 3):
            drawn = (rng.choice(common) if rng.random() < 0.7 else rng.randrange(256) for _ in range(size))
            data = bytes(drawn)
            assert compiled.merged(data) == len(encoding._encode_single_piece(data)), data


def test_the_c_tables_hold_every_rank_of_the_file_in_a_few_megabytes(ranks: dict[bytes, int]) -> None:
    compiled = CompiledO200kCounter(read_o200k_ranks())._ranks
    assert len(compiled) == len(ranks) == 199_998
    assert all(compiled.rank(token) == rank for token, rank in ranks.items())
    assert compiled.rank(b"no such token here at all") is None and compiled.rank(b"") is None
    assert compiled.__sizeof__() < 5_000_000  # the Python dict of the same ranks: ~17 MB


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (b"IQ== 0\nIg== 2\n", 2),  # a rank that is not its line number
        (b"IQ== 0\nIQ== 1\n", 2),  # a token ranked twice
        (b"IQ== 0\nI*== 1\n", 2),  # not base64
        (b"IQ== 0\n\nIg== 1\n", 2),  # an empty line
        (b"IQ==0\n", 1),  # no space
    ],
)
def test_a_malformed_ranks_file_is_refused_naming_its_line(text: bytes, line: int) -> None:
    from jurist.tokens._o200k import Ranks

    with pytest.raises(ValueError, match=f"line {line}:"):
        Ranks(text, COMPILED_LONG_PIECE, len)


def test_only_a_piece_over_the_c_bound_that_is_no_token_goes_to_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handed: list[bytes] = []
    real = pieces._tiktoken_piece_count
    monkeypatch.setattr(pieces, "_tiktoken_piece_count", lambda data: handed.append(data) or real(data))
    counter = CompiledO200kCounter(read_o200k_ranks())
    text = (
        "an ordinary sentence, unusualwordsjoinedtogether \u4e2d\u6587" * 20
        + "\n"
        + "y" * COMPILED_LONG_PIECE
    )
    assert counter.count(text) == tiktoken_count(text) and handed == []
    assert counter.count("z" * (COMPILED_LONG_PIECE + 1)) == tiktoken_count("z" * (COMPILED_LONG_PIECE + 1))
    assert handed == [b"z" * (COMPILED_LONG_PIECE + 1)]


def test_threads_counting_at_once_in_c_count_what_tiktoken_counts() -> None:
    import threading

    counter = CompiledO200kCounter(read_o200k_ranks())
    texts = shared_texts()[:300]
    expected = [tiktoken_count(text) for text in texts]
    results: list[list[int]] = [[] for _ in range(4)]

    def work(slot: int) -> None:
        results[slot] = [counter.count(text) for text in texts]

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


@pytest.mark.parametrize("why", ["missing", "older"])
def test_an_install_without_the_c_module_counts_in_python(why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed where no C compiler was (the extension is optional), or with a build older than this
    module calls (an editable install whose C source changed since): the Python count, same counts."""
    import sys
    import types

    if why == "missing":
        monkeypatch.setitem(sys.modules, "jurist.tokens._o200k", None)  # import raises ImportError
    else:
        monkeypatch.setitem(sys.modules, "jurist.tokens._o200k", types.SimpleNamespace(ABI_VERSION=0))
    assert not compiled_counting()
    counter = pieces.build_o200k_counter()
    assert isinstance(counter, O200kCounter)
    text = "fallback: ordinary text, caf\u00e9 and \u4e2d\u6587, 12345"
    assert counter.count(text) == tiktoken_count(text)


def test_text_dense_outside_ascii_is_cut_by_the_regex_module_in_one_call() -> None:
    """Each hand-over from the C scan to the regex module costs more than the regex module's own cut of
    a few characters: a text where they come every few characters is cut whole from there (the same
    pieces findall gives), an ordinary text with a character outside ASCII now and then is not."""
    counter = CompiledO200kCounter(read_o200k_ranks())
    cuts: list[int] = []
    split = counter._split

    def watched(text: str, at: int, **options: Any) -> list[str]:
        cuts.append(at)
        return split(text, at, **options)

    counter._split = watched  # type: ignore[method-assign]
    ordinary = "An answer, mostly ASCII, with a caf\u00e9 now and then and plain words between them. " * 40
    assert counter.count(ordinary) == tiktoken_count(ordinary) and cuts == []
    dense = "lead-in " * 10 + "\u00e9 " * 2000
    assert counter.count(dense) == tiktoken_count(dense)
    assert len(cuts) == 1 and 80 <= cuts[0] < 80 + pieces.HANDOVER_WINDOW * 2


def test_random_ascii_counts_what_tiktoken_counts(counter: CompiledO200kCounter | O200kCounter) -> None:
    """The C scan's own cut of ASCII text, alternative by alternative, on every ASCII character (controls,
    the apostrophes of contractions, runs of spaces and line breaks, digits against letters), with a
    character outside ASCII now and then where the scan hands over."""
    rng = random.Random(11)
    alphabet = [chr(code) for code in range(128)] + list("   \n\n\r\t'sSlLtTdDmMrReEvV0123/") * 6
    alphabet += ["\u00e9", "\u00a0", "\u2014", "\u0301", "\u4e2d", "\u00b2"]
    for _ in range(1500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 200)))
        assert counter.count(text) == tiktoken_count(text), repr(text)
