"""``batches.jsonl`` read strictly: a line of wrong types, random bytes, an emptied or cut journal, a
directory in its place are each a one-line refusal naming the file, the line and the field (exit 2 from
the command line, before any request), never read as "no batches"; a torn last line (a crash mid-write)
is still skipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_models_file
from jurist.engine.batch import Batching, JournalUnreadable
from jurist.engine.batch.journal import BatchJournal
from mock_batch import MockBatchServer

CID = f"{7:064x}"


def _journal(tmp: Path) -> Path:
    path = tmp / "batches.jsonl"
    journal = BatchJournal(path)
    journal.submitting("openai", "judge", "i1", [CID], input_file_id="file-1")
    journal.submitted("openai", "judge", "batch_1", [CID], intent="i1", input_file_id="file-1")
    return path


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _rewrite(path: Path, lines: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_journal_starts_with_a_header_and_reads_back(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    assert _lines(path)[0]["event"] == "journal"
    journal = BatchJournal(path)
    assert journal.versioned and [b.batch_id for b in journal.open_batches("openai", "judge")] == ["batch_1"]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("at", "yesterday", "line 3: field 'at' (submitted) is \"yesterday\", not a number"),
        ("custom_ids", 5, "line 3: field 'custom_ids' (submitted) is 5, not a list of text"),
        ("batch_id", None, "line 3: field 'batch_id' (submitted) is null, not non-empty text"),
        ("event", "exploded", "line 3: field 'event' \"exploded\" is no journal event"),
    ],
)
def test_a_line_of_wrong_types_is_refused_with_its_line_and_field(
    tmp_path: Path, field: str, value: object, said: str
) -> None:
    path = _journal(tmp_path)
    lines = _lines(path)
    lines[2][field] = value
    _rewrite(path, lines)
    with pytest.raises(JournalUnreadable) as caught:
        BatchJournal(path)
    message = str(caught.value)
    assert said in message and str(path) in message and "\n" not in message
    assert "not read as 'no batches'" in message


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda p: p.write_bytes(bytes(range(256)) * 4), "line 1: is not JSON"),
        (lambda p: p.write_bytes(b""), "is empty"),
        (lambda p: p.write_bytes(p.read_bytes()[:30]), "line 1: is cut short"),
        (lambda p: p.write_bytes(b'{"hello": 1}\n'), "line 1: does not start a batch journal"),
        (lambda p: (p.unlink(), p.mkdir()), "is a directory"),
    ],
    ids=["random-bytes", "emptied", "truncated", "not-a-journal", "directory"],
)
def test_a_damaged_journal_is_refused_never_read_as_no_batches(
    tmp_path: Path, damage: object, said: str
) -> None:
    path = _journal(tmp_path)
    damage(path)  # type: ignore[operator]
    with pytest.raises(JournalUnreadable, match=said):
        BatchJournal(path)


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    with open(path, "ab") as out:
        out.write(b'{"event": "status", "batch_id": "batch_1", "sta')
    assert BatchJournal(path).batches["batch_1"].status == "submitted"


def test_a_journal_that_lost_a_booked_batch_is_refused(tmp_path: Path) -> None:
    """Cut at a line boundary (no torn line to tell): the usage log's booked lines name a batch the
    journal no longer has."""
    path = _journal(tmp_path)
    batching = Batching(path, {"judge": frozenset({"judge"})}, booked={f"batch_0/{CID}"})
    with pytest.raises(JournalUnreadable, match="has no line for batch batch_0"):
        batching.journal  # noqa: B018


def test_the_command_refuses_a_damaged_journal_in_one_line_before_any_request(tmp_path: Path) -> None:
    server = MockBatchServer()
    server.start()
    try:
        write_models_file(tmp_path / "models.yaml", server.base_url, {"strong": {}, "judge-good": {}})
        run_dir = tmp_path / "runs" / "starter"
        run_dir.mkdir(parents=True)
        (run_dir / "batches.jsonl").write_bytes(b"\x00\xffgarbage\n")
        args = [sys.executable, "-m", "jurist", "run", "--models-file", "models.yaml", "--model", "strong"]
        args += ["--judge", "judge-good", "--limit", "2", "--no-progress", "--no-check", "--batch", "judges"]
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "batches.jsonl: line 1: is not JSON" in lines[0], done.stderr
    assert server.stats.requests == 0 and server.batch_stats.batches.total() == 0


def test_a_lost_journal_finds_its_openai_batches_by_their_metadata(tmp_path: Path) -> None:
    """The journal moved away (as the refusal advises) while a batch runs: the next run lists the
    directory's batches by the mark in their metadata, polls the one it finds, and submits nothing."""
    import asyncio

    from jurist.engine.batch import BatchSettings, dispatcher_for
    from test_batch_faults import body, spec_of

    server = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01)
    server.start()
    server.hold = True
    settings = BatchSettings(poll_s=0.02, max_age_s=0.05)

    async def ask(texts: list[str], wait: bool) -> list[object]:
        batching = Batching(
            tmp_path / "batches.jsonl", {"judge": frozenset({"judge"})}, settings, tag="dir-1"
        )
        dispatcher = dispatcher_for(spec_of(server, "openai"), batching, None)
        try:
            asked = [dispatcher.request(f"{i:064x}", body(t)) for i, t in enumerate(texts)]
            running = asyncio.gather(*asked, return_exceptions=True)
            if wait:
                return await asyncio.wait_for(running, 30)
            while not server.batch_stats.batches["openai"]:
                await asyncio.sleep(0.01)
            running.cancel()
            return []
        finally:
            await dispatcher.aclose()

    try:
        asyncio.run(ask(["one", "two"], wait=False))
        assert server.batch_stats.batches["openai"] == 1
        (tmp_path / "batches.jsonl").rename(tmp_path / "batches.jsonl.lost")
        server.release()
        got = asyncio.run(ask(["one", "two"], wait=True))
    finally:
        server.stop()
    assert [g.text for g in got] == ["[judge] one", "[judge] two"]  # type: ignore[attr-defined]
    assert server.batch_stats.batches["openai"] == 1 and max(server.batch_stats.lines.values()) == 1
    lines = _lines(tmp_path / "batches.jsonl")
    assert any(line.get("recovered") for line in lines if line["event"] == "submitted")
