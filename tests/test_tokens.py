"""jurist.tokens: tiktoken's o200k counts, exact where a long text is cut at piece ends, bounded and flagged
on degenerate text, never holding a signal back; markdown counts as upstream's own patterns give them."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import jurist.tokens.count as counting
import jurist.tokens.style as style
from jurist.tokens import (
    answer_style_metadata,
    markdown_counts,
    measure_tokens,
    o200k_counter,
    o200k_encoding,
)
from jurist.tokens import strip_code_blocks as strip

ROOT = Path(__file__).resolve().parents[1]
O3_MINI = (
    ROOT.parent / "shared" / "data" / "arena-hard" / "data" / "arena-hard-v2.0" / "model_answer"
) / "o3-mini-2025-01-31.jsonl"
MB20 = 20_000_000
HANG_S = 30.0  # a guard against a hang, not a timing: each case takes well under 2 s


def whole(text: str) -> int:
    """tiktoken's count of the text in one call: what the segments must add up to."""
    return len(o200k_encoding().encode_ordinary(text))


class Spy:
    """The count, recording the length of every text handed to it in one call."""

    def __init__(self) -> None:
        self.lengths: list[int] = []

    def __call__(self, text: str) -> int:
        self.lengths.append(len(text))
        return o200k_counter()(text)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    watched = Spy()
    monkeypatch.setattr(counting, "o200k_counter", lambda: watched)
    return watched


@pytest.fixture
def small_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments of 40 characters, a piece end looked for in the last 20: many cuts in any text."""
    monkeypatch.setattr(counting, "SEGMENT_CHARS", 40)
    monkeypatch.setattr(counting, "SEARCH_CHARS", 20)


# Characters around which the pattern's rules differ: every Unicode space (and U+001C..U+001F, spaces to
# Python, not to tiktoken), line breaks and '/', letters of several scripts, marks, numbers that are not
# decimal digits, apostrophes and contractions, punctuation, an emoji and a lone surrogate.
ALPHABET = (
    [chr(c) for c in range(0x110000) if chr(c).isspace()]
    + list("aZé\u0301\u0308中カ한ßĲ7٣²Ⅻ½/'’\"!?.,;:-_#*`()[]{}<>@$%&+=|~\\，。、：（）…")
    + ["'s", "'LL", "'ve", "hello", "HTTP", "camelCase", "12345", "😀", "\ud83d", "\x00", "\r\n", "  "]
)


def random_text(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(parts))


@pytest.mark.usefixtures("small_segments")
def test_texts_cut_where_pieces_end_count_what_tiktoken_counts_in_one_call() -> None:
    rng = random.Random(25)
    texts = [random_text(rng, rng.randrange(20, 200)) for _ in range(3000)]
    counted = [(text, measure_tokens(text)) for text in texts]
    wrong = [text for text, count in counted if count.exact and count.tokens != whole(text)]
    assert wrong == []
    assert sum(count.exact for _, count in counted) > len(texts) // 3  # the rules found many cuts


@pytest.mark.skipif(not O3_MINI.is_file(), reason="shared Arena-Hard data not present")
def test_real_answers_cut_every_100_characters_keep_their_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counting, "SEGMENT_CHARS", 100)
    monkeypatch.setattr(counting, "SEARCH_CHARS", 50)
    with O3_MINI.open(encoding="utf-8") as handle:
        answers = [json.loads(line)["messages"][-1]["content"]["answer"] for line in handle]
    counted = [(answer, measure_tokens(answer)) for answer in answers]
    assert [a[:60] for a, count in counted if count.exact and count.tokens != whole(a)] == []
    assert sum(count.exact for _, count in counted) >= 0.9 * len(answers)  # ~20k cuts among them


def test_each_space_character_cut_after_a_word_keeps_the_count(small_segments: None) -> None:
    for space in [chr(c) for c in range(0x110000) if chr(c).isspace()]:
        text = ("word" + space) * 40 + ("12ab" + space + "\n/") * 20
        count = measure_tokens(text)
        assert count.tokens == whole(text) or not count.exact, repr(space)


def test_short_texts_are_one_call_and_exact(spy: Spy) -> None:
    assert measure_tokens("") == (0, True)
    assert measure_tokens("hello world") == (2, True)
    assert measure_tokens("<|endoftext|>").tokens > 1  # special-token text is ordinary text
    assert spy.lengths == [0, 11, 13]


@pytest.mark.parametrize("char", ["a", " ", "\n", "中", "1", "!", "`"])
def test_twenty_mb_of_one_character_is_counted_bounded_and_flagged(spy: Spy, char: str) -> None:
    text = char * MB20
    started = time.monotonic()
    count = measure_tokens(text)
    assert time.monotonic() - started < HANG_S
    assert not count.exact
    assert max(spy.lengths) <= counting.SEGMENT_CHARS  # tiktoken never saw more than a segment
    assert len(spy.lengths) <= 3  # the repeated segment was counted once
    segment = counting.SEGMENT_CHARS
    per_segment = whole(char * segment)
    assert abs(count.tokens - MB20 * per_segment / segment) <= MB20 // segment + 2


@pytest.mark.parametrize("chars", [200_000, 1_000_000])
def test_cjk_characters_without_a_break(spy: Spy, chars: int) -> None:
    """200k in one call, exact; five times as many in segments, flagged, close to tiktoken's count."""
    rng = random.Random(7)
    text = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(chars))
    started = time.monotonic()
    count = measure_tokens(text)
    assert time.monotonic() - started < HANG_S
    assert count.exact == (chars <= counting.SEGMENT_CHARS)
    assert max(spy.lengths) <= counting.SEGMENT_CHARS
    assert 0 <= count.tokens - whole(text) <= len(text) // counting.SEGMENT_CHARS + 1


def test_a_long_ordinary_text_is_counted_in_segments_exactly(spy: Spy) -> None:
    rng = random.Random(3)
    words = ["the", "Judge's", "answer", "2025", "(see", "§3)", "naïve", "中文，", "x/y\n", "—", "  "]
    text = " ".join(rng.choice(words) for _ in range(120_000))
    assert measure_tokens(text) == (whole(text), True)
    assert len(spy.lengths) >= 3 and max(spy.lengths) <= counting.SEGMENT_CHARS


@pytest.mark.parametrize("char", ["a", "\n", " ", "`", "#", "*", "_", "1", "中"])
def test_style_metadata_of_twenty_mb_of_one_character(char: str) -> None:
    started = time.monotonic()
    metadata = answer_style_metadata(char * MB20)
    assert time.monotonic() - started < HANG_S
    assert metadata["token_len"] > 0 and metadata["approximate"] is True
    assert list(metadata)[:4] == ["token_len", "header_count", "list_count", "bold_count"]


# -- markdown counts: the same as upstream's patterns, which are quadratic on blank lines --------------------
UPSTREAM_HEADERS = [re.compile(rf"^#{{{level}}}\s", re.MULTILINE) for level in range(1, 7)]
UPSTREAM_ORDERED = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
UPSTREAM_UNORDERED = re.compile(r"^\s*[-*+]\s", re.MULTILINE)


def upstream_counts(text: str) -> dict[str, dict[str, int]]:
    return {
        "header_count": {f"h{n}": len(p.findall(text)) for n, p in enumerate(UPSTREAM_HEADERS, start=1)},
        "list_count": {
            "ordered": len(UPSTREAM_ORDERED.findall(text)),
            "unordered": len(UPSTREAM_UNORDERED.findall(text)),
        },
        "bold_count": {
            "**": len(re.findall(r"\*\*[^*\n]+\*\*", text)),
            "__": len(re.findall(r"__[^_\n]+__", text)),
        },
    }


def upstream_strip(text: str) -> str:
    for body in re.findall(r"```([^`]*)```", text):
        text = text.replace(body, "")
    return text


MARKDOWN = ["#", "##", "###", "#######", " ", "\n", "\n\n", "\t", "\r", "\x0b", "\u2028", "\x1c", "1", "12"]
MARKDOWN += [".", "-", "*", "**", "+", "_", "__", "a", "b", "`", "```", "ab", "1. ", "- ", "# "]


def test_markdown_counts_and_stripped_code_equal_upstreams() -> None:
    rng = random.Random(11)
    for _ in range(20_000):
        text = "".join(rng.choice(MARKDOWN) for _ in range(rng.randrange(0, 40)))
        assert markdown_counts(text) == upstream_counts(text), repr(text)
        assert strip(text) == upstream_strip(text), repr(text)


def test_blank_lines_and_repeated_code_blocks_are_linear() -> None:
    text = "\n" * 2_000_000 + "1. item\n" + "```a```" * 300_000
    started = time.monotonic()
    counts, stripped = markdown_counts(text), strip(text)
    assert time.monotonic() - started < HANG_S  # upstream's patterns take minutes on this
    assert counts["list_count"] == {"ordered": 1, "unordered": 0}
    assert stripped == "\n" * 2_000_000 + "1. item\n" + "``````" * 300_000


def test_too_many_distinct_code_blocks_are_removed_in_place_and_flagged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "".join(f"```{i}```**b{i}**" for i in range(50))
    exact = answer_style_metadata(text)
    assert "approximate" not in exact and exact["bold_count"]["**"] == 50
    monkeypatch.setattr(style, "REPLACE_BUDGET_CHARS", 10 * len(text))
    cut = answer_style_metadata(text)
    assert cut["approximate"] is True and cut["bold_count"] == exact["bold_count"]


# -- signals and the run ------------------------------------------------------------------------------------
COUNTING_CHILD = r"""
import random, sys, threading
from jurist.run.interrupts import GracefulInterrupt
from jurist.tokens import count_tokens, o200k_counter

o200k_counter()
rng = random.Random(1)
words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randrange(1, 9))) for _ in range(5000)]
text = (" ".join(rng.choice(words) for _ in range(200_000)) + "\n") * 200  # ~200 MB, ~20 s to count
with GracefulInterrupt(on_force=lambda: None):  # jurist's handlers: KeyboardInterrupt outside a run
    print("counting", flush=True)
    if sys.argv[1] == "thread":  # as the answer stage counts: in a worker, the main thread waiting
        worker = threading.Thread(target=count_tokens, args=(text,), daemon=True)
        worker.start()
        worker.join()
    else:
        count_tokens(text)
    print("counted", flush=True)
"""


@pytest.mark.parametrize("where", ["main", "thread"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_a_huge_text_is_counted_stops_it_promptly(where: str, signum: int) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", COUNTING_CHILD, where],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "counting\n"
        time.sleep(0.5)
        child.send_signal(signum)
        out, err = child.communicate(timeout=HANG_S)
    finally:
        child.kill()
    assert "counted" not in out  # it stopped during the count, not after it
    assert child.returncode != 0 and "KeyboardInterrupt" in err


def test_o200k_ranks_are_tiktokens_own_reading_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token column read alone, ranks by line number, is exactly the dict tiktoken's loader parses from
    the rank column: the shortcut holds for the verified file."""
    from tiktoken.load import load_tiktoken_bpe

    from jurist.tokens.encoding import o200k_ranks, read_o200k_ranks

    path = tmp_path / "o200k_base.tiktoken"
    path.write_bytes(read_o200k_ranks())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file itself, cache nothing
    assert o200k_ranks() == load_tiktoken_bpe(str(path))


def test_a_caller_that_holds_the_tables_builds_them_at_its_first_count_in_its_own_thread() -> None:
    """``hold_o200k`` (a run about to answer) builds nothing and starts no thread: a build ahead held the
    GIL while the run's first answer requests went out; the first count builds them, once, where it runs."""
    code = (
        "import threading\n"
        "from jurist.tokens import hold_o200k, pieces\n"
        "built = []\n"
        "real = pieces.build_o200k_counter\n"
        "pieces.build_o200k_counter = lambda: built.append(threading.current_thread().name) or real()\n"
        "hold_o200k()\n"
        "print(threading.active_count(), built)\n"
        "from jurist.tokens import measure_tokens\n"
        "count = lambda: print(measure_tokens('hello world').tokens)\n"
        "counted = threading.Thread(target=count, name='writer')\n"
        "counted.start(); counted.join()\n"
        "print(measure_tokens('hello').tokens, built)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == ["1 []", "2", "1 ['writer']"]


def test_tables_that_cannot_be_built_fail_the_first_count_and_say_why() -> None:
    code = (
        "from jurist.tokens import encoding, hold_o200k\n"
        "def missing():\n"
        "    raise RuntimeError('no offline copy of the o200k_base token ranks was found')\n"
        "encoding.find_o200k_ranks_file = missing\n"
        "hold_o200k()\n"
        "from jurist.tokens import measure_tokens\n"
        "measure_tokens('hello')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.count("no offline copy") == 1
