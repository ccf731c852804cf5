"""The small failures of a bad day, each with its one line or its fix: a signal before the command's own
handlers, a cache on a read-only disk, an empty ``--judge`` list, a ``<think>`` never closed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jurist.engine.cache import store as cache_module
from jurist.engine.cache.store import RequestCache, open_cache
from jurist.engine.wire.reply_parse import parse_completion
from jurist.errors import JuristError
from jurist.run.task_options import TaskFlags, task_settings


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (Linux: SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(mask, 16) >> (signum - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("after_s", [0.0, 0.3])
def test_a_signal_while_the_command_starts_ends_it_in_one_line(signum: int, after_s: float) -> None:
    """From the first line of jurist's own code (its handler is there: the interpreter's start before it
    is no code of jurist's), through the imports of the commands, to the command: one line, no trace."""
    process = subprocess.Popen(
        [sys.executable, "-m", "jurist", "show", "/nonexistent-run-dir"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    # SIGTERM: Python itself catches SIGINT from its start, jurist's code both, at once
    while (
        not _catches(process.pid, signal.SIGTERM) and process.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.001)
    time.sleep(after_s)
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err  # said, in one line
    if process.returncode == 2:  # the command ended before the signal came, or said its error through it
        assert "no such run directory" in lines[0], err
        return
    assert process.returncode in (130, 128 + signum, -signum, -signal.SIGINT), err
    # the signal came while it started (stopped, interrupted), or once it had said its own one line and was
    # exiting (a loaded machine: the interpreter's teardown is slow), which is one line all the same
    assert "stopped by" in lines[0] or "interrupted" in lines[0] or "no such run directory" in lines[0]


SIGNAL_WHILE_SAYING = """
import os, signal, sys
import jurist.cli as cli
say = cli._error_line
def interrupted_while_saying(text, *, exit_code):
    os.kill(os.getpid(), int(os.environ["SIGNAL"]))  # its handler runs before the line is said
    say(text, exit_code=exit_code)
cli._error_line = interrupted_while_saying
sys.argv[0] = "jurist"
cli.main()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_the_error_is_said_leaves_the_error_in_one_line(signum: int) -> None:
    """The command's ending is settled once it is known: a signal while its error line is being said (rich
    is imported then) neither changes the exit code nor adds a second traceback (CI once saw 63 lines)."""
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_WHILE_SAYING, "show", "/nonexistent-run-dir"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "SIGNAL": str(int(signum))},
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0] == "error: /nonexistent-run-dir: no such run directory"


def test_main_called_in_process_puts_the_callers_signal_handlers_back() -> None:
    """``jurist.cli.main`` ignores signals while it says its last line; a caller in the same process
    (a notebook, a script) must get its own Ctrl-C handling back, not a process that ignores Ctrl-C."""
    code = (
        "import signal, sys\n"
        "def mine(signum, frame):\n"
        "    raise SystemExit('mine')\n"
        "signal.signal(signal.SIGINT, mine)\n"
        "from jurist.cli import main\n"
        "sys.argv = ['jurist', 'show', '/nonexistent-run-dir']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "print(signal.getsignal(signal.SIGINT) is mine, signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["exit", "2", "True", "True"], done.stdout + done.stderr


def _stored(path: Path) -> None:
    cache = RequestCache(path)
    cache.put(f"{1:064x}", {"text": "kept", "prompt_tokens": 1, "completion_tokens": 1})
    cache.close()


def test_a_cache_that_cannot_be_written_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "requests.sqlite"
    _stored(path)

    def read_only_disk(db: sqlite3.Connection) -> None:  # what sqlite says on a read-only filesystem
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(RequestCache, "_setup", staticmethod(read_only_disk))
    cache = open_cache(path)
    assert cache is not None and cache.read_only
    value = cache.get(f"{1:064x}")
    assert value is not None and value["text"] == "kept"
    cache.put(f"{2:064x}", {"text": "new"})  # not stored: the file cannot take it
    cache.flush()
    cache.close()
    monkeypatch.undo()
    again = RequestCache(path)
    assert again.get(f"{2:064x}") is None and again.get(f"{1:064x}") is not None
    again.close()
    assert "cannot be written" in caplog.text and "its answers are read" in caplog.text
    assert cache_module.CACHE_FILE == "requests.sqlite"


def test_a_read_only_cache_file_opens_immutable(tmp_path: Path) -> None:
    path = tmp_path / "requests.sqlite"
    _stored(path)
    for leftover in tmp_path.glob("requests.sqlite-*"):
        leftover.unlink()
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        cache = RequestCache(path, read_only=True)
        value = cache.get(f"{1:064x}")
        assert value is not None and value["text"] == "kept"
        cache.close()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["requests.sqlite"]  # nothing written beside it
    finally:
        tmp_path.chmod(0o755)


def test_an_empty_judge_list_is_an_error() -> None:
    for given in (",,,", " , "):
        with pytest.raises(JuristError, match="names nothing"):
            task_settings(["starter"], TaskFlags(judges=[given]))


def _reply(content: str, finish: str) -> bytes:
    choice = {"message": {"role": "assistant", "content": content}, "finish_reason": finish}
    return json.dumps({"choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 9}}).encode()


def test_an_unclosed_think_keeps_its_text_unless_the_token_limit_cut_it() -> None:
    ended = parse_completion(_reply("<think>Paris is the capital. Answer: Paris", "stop"))
    assert ended.text == "<think>Paris is the capital. Answer: Paris" and not ended.truncated_thought
    assert ended.notes and "never closed" in ended.notes[0]  # counted by the ledger as malformed
    cut = parse_completion(_reply("<think>Let me weigh the", "length"))
    assert cut.text == "" and cut.truncated_thought and cut.reasoning == "Let me weigh the"


def test_a_judge_that_parrots_its_prompt_gives_no_verdict() -> None:
    from jurist.judging.protocols import simple_protocol

    protocol = simple_protocol()
    legend = protocol.system_prompt
    for start in range(0, len(legend), 20):  # any tail of the prompt, as a judge cut by max_tokens copies it
        assert protocol.read(legend[start:], None, ())[0] is None, legend[start:]
    assert protocol.read(legend[:-12], None, ())[0] is None  # a copy cut short
    assert protocol.read("[[B>>A]]", None, ())[0] == "B>>A"  # a verdict is still a verdict
    assert protocol.read("A is clearer.\n[[A>B]]", None, ())[0] == "A>B"


def test_weights_overwritten_in_place_with_their_old_size_and_time_are_new_weights(tmp_path: Path) -> None:
    import os

    from jurist.engine.cache.identity import managed_identity

    checkpoint = tmp_path / "step_100"
    checkpoint.mkdir()
    weights = checkpoint / "model.safetensors"
    weights.write_bytes(b"A" * 64)
    (checkpoint / "config.json").write_text("{}")
    single = tmp_path / "model.gguf"
    single.write_bytes(b"G" * 64)
    before = [managed_identity("vllm", str(checkpoint), "m"), managed_identity("llama.cpp", str(single), "m")]
    time.sleep(0.01)
    for path, byte in ((weights, b"B"), (single, b"H")):  # as cp -p does: same size, same mtime
        stat = path.stat()
        path.write_bytes(byte * 64)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = [managed_identity("vllm", str(checkpoint), "m"), managed_identity("llama.cpp", str(single), "m")]
    assert [a.weights != b.weights for a, b in zip(after, before, strict=True)] == [True, True]
