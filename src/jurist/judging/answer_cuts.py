"""What of an answer a grader is shown: each upstream cuts a reasoning model's thought its own way.

The engine moves a leading ``<think>…</think>`` out of the stored answer and keeps what it moved
(``content_head`` in the answer record), so the content as the model wrote it can be put back together;
a server's ``reasoning_content`` is never part of it. A grader whose upstream cuts that content itself is
handed it and cuts it exactly so:

* **WritingBench** (X-PLUG/WritingBench@ae2d517, ``evaluate_benchmark.py``, ``process_gen_field``): the
  text after the *first* ``</think>`` followed by two newlines, else the whole text — case-sensitive, no
  opening tag needed, an unclosed ``<think>`` sent whole.
* **HealthBench** and the rest see the stored answer without a leading thought
  (:func:`jurist.rules.answers.visible_text`).
"""

from __future__ import annotations

WRITINGBENCH_MARKER = "</think>\n\n"
"""The marker ``process_gen_field`` looks for (upstream's, as a fact; its code is not copied)."""


def writingbench_cut(written: str) -> str:
    """The response WritingBench's critic is shown: after the first :data:`WRITINGBENCH_MARKER`, if any."""
    at = written.find(WRITINGBENCH_MARKER)
    return written if at < 0 else written[at + len(WRITINGBENCH_MARKER) :]
