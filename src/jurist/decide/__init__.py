"""Decisions between runs: paired comparisons (``jurist compare``), release gates (``--gate``) and adaptive
evaluation that stops once the answer is known (``--adaptive``). Statistics are :mod:`jurist.ratings`'
(``paired``, ``confseq``); the runs' outcomes come through :mod:`jurist.families` (``paired``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.decide.adaptive import AdaptiveSettings, run_adaptive
    from jurist.decide.adaptive_sweep import run_adaptive_sweep, sweep_settings
    from jurist.decide.compare import CompareSettings, check_same, compare_sides, compare_task, decide
    from jurist.decide.gate import GATE_FAILED, GatePolicy, check_gate, read_policy
    from jurist.decide.gating import gate_directories
    from jurist.decide.head_to_head import head_to_head_sides
    from jurist.decide.report import (
        comparison_document,
        print_comparisons,
        print_gate,
        render_json,
        render_page,
    )
    from jurist.decide.sides import Side, TaskRun, read_sides

_HOMES = {
    "AdaptiveSettings": "adaptive",
    "run_adaptive": "adaptive",
    "run_adaptive_sweep": "adaptive_sweep",
    "sweep_settings": "adaptive_sweep",
    "CompareSettings": "compare",
    "check_same": "compare",
    "compare_sides": "compare",
    "compare_task": "compare",
    "decide": "compare",
    "GATE_FAILED": "gate",
    "GatePolicy": "gate",
    "check_gate": "gate",
    "read_policy": "gate",
    "comparison_document": "report",
    "print_comparisons": "report",
    "print_gate": "report",
    "render_json": "report",
    "render_page": "report",
    "head_to_head_sides": "head_to_head",
    "Side": "sides",
    "TaskRun": "sides",
    "read_sides": "sides",
    "gate_directories": "gating",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "AdaptiveSettings",
    "run_adaptive",
    "run_adaptive_sweep",
    "sweep_settings",
    "GATE_FAILED",
    "CompareSettings",
    "GatePolicy",
    "Side",
    "TaskRun",
    "check_gate",
    "check_same",
    "compare_sides",
    "compare_task",
    "comparison_document",
    "decide",
    "gate_directories",
    "head_to_head_sides",
    "print_comparisons",
    "print_gate",
    "read_policy",
    "read_sides",
    "render_json",
    "render_page",
]
