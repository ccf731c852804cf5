"""``--gate`` after ``jurist run`` and ``jurist sweep``: the policy checked on what they saved, written to
``gate.json`` beside it, every outcome printed; the exit code becomes 4 when a rule failed (a run that
already failed keeps its own code)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from jurist.decide.gate import GATE_FAILED, check_gate, read_policy
from jurist.decide.report import print_gate, render_json
from jurist.decide.sides import read_sides
from jurist.store import write_json_atomic


def gate_directories(policy_path: Path, directories: list[Path], exit_code: int) -> int:
    """Check ``policy_path`` on each directory (a run, a --tasks OUT, a sweep: each checkpoint) and return
    the exit code the command ends with."""
    policy = read_policy(policy_path)
    reference = read_sides([str(policy.reference)])[0] if policy.reference is not None else None
    outcomes = []
    for directory in directories:
        sides = read_sides([str(directory)])
        for side in sides:
            outcomes.extend(check_gate(policy, side, reference))
        own = [o for o in outcomes if any(o["run"] == side.name for side in sides)]
        passed = all(o["passed"] for o in own)
        document = {"schema": "jurist.gate/1", "policy": str(policy_path), "passed": passed, "rules": own}
        write_json_atomic(directory / "gate.json", json.loads(render_json(document)))
    print_gate(Console(stderr=True, highlight=False), outcomes)
    if exit_code == 0 and not all(o["passed"] for o in outcomes):
        return GATE_FAILED
    return exit_code
