"""``python -m jurist``: the command line, with Ctrl-C and SIGTERM said in one line even while it is
still importing (before the command's own handlers are installed)."""

import os
import signal
import sys


def _stopped_early(signum: int, frame: object) -> None:
    name = signal.Signals(signum).name
    sys.stderr.write(f"jurist: stopped by {name} before the command began; nothing was done\n")
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, _stopped_early)
signal.signal(signal.SIGINT, _stopped_early)
from jurist.cli import entry  # noqa: E402  # after the handlers: imports take a moment

if __name__ == "__main__":  # vLLM's --local workers are spawned and import the main module again
    entry()
