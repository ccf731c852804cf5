"""``--gate POLICY.yaml``: a release gate of per-task rules, checked on what a run, a sweep or a comparison
saved, every rule's outcome printed; the command then exits 4 when any rule fails.

The policy is strict YAML (a key twice, an unknown field, a wrong type: one line naming file, line and
field)::

    reference: runs/release-1      # the run the difference rules compare with (relative to this file)
    level: 0.95                    # the interval level of the difference rules (default 0.95)
    rules:
      - task: ifeval
        min_score: 80              # the task's headline score must be at least 80
      - task: ifeval
        max_drop: 1.0              # no regression larger than 1 point against the reference
        test: estimate             # estimate (default) | significant | non-inferior

A ``max_drop`` rule fails, with ``test: estimate``, when the paired difference's estimate is below
``-max_drop``; with ``significant``, only when its whole interval is (a regression shown at the level);
with ``non-inferior``, unless its whole interval lies above ``-max_drop`` (no regression shown absent).
``task: "*"`` applies a rule to every task of the run.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurist.decide.compare import CompareSettings, compare_task, model_cells
from jurist.decide.sides import Side
from jurist.errors import InputError, JuristError

TOP_FIELDS = ("reference", "level", "rules")
RULE_FIELDS = ("task", "judge", "min_score", "max_drop", "test", "level")
TESTS = ("estimate", "significant", "non-inferior")
GATE_FAILED = 4
"""The exit code of a command whose gate failed (after everything was saved)."""


@dataclass(frozen=True)
class GateRule:
    task: str
    where: str
    judge: str | None = None
    min_score: float | None = None
    max_drop: float | None = None
    test: str = "estimate"
    level: float = 0.95

    def describe(self) -> str:
        if self.min_score is not None:
            return f"{self.task}: score >= {self.min_score:g}"
        return f"{self.task}: drop <= {self.max_drop:g} vs reference ({self.test}, {self.level:.0%})"


@dataclass(frozen=True)
class GatePolicy:
    path: Path
    rules: tuple[GateRule, ...]
    reference: Path | None = None


def _fail(path: Path, node: yaml.Node, field: str, message: str) -> InputError:
    return InputError(
        path,
        f"line {node.start_mark.line + 1}: {field}" if field else f"line {node.start_mark.line + 1}",
        message,
    )


def _pairs(path: Path, node: yaml.Node, where: str, known: tuple[str, ...]) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise _fail(path, node, where, "expected a mapping (KEY: VALUE lines)")
    found: dict[str, yaml.Node] = {}
    for key_node, value in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str) or key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
            raise _fail(path, key_node, where, f"unknown field {key!r}{hint}")
        if key in found:
            raise _fail(path, key_node, where, f"{key!r} is given twice")
        found[key] = value
    return found


def _scalar(path: Path, node: yaml.Node, field: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise _fail(path, node, field, "expected a single value")
    return yaml.constructor.SafeConstructor().construct_object(node)


def _number(
    path: Path, node: yaml.Node, field: str, low: float | None = None, high: float | None = None
) -> float:
    value = _scalar(path, node, field)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(path, node, field, f"{value!r} is not a number")
    if (low is not None and value < low) or (high is not None and value > high):
        raise _fail(path, node, field, f"{value} is outside [{low}, {high}]")
    return float(value)


def _text(path: Path, node: yaml.Node, field: str) -> str:
    value = _scalar(path, node, field)
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, node, field, f"{value!r} is not a name")
    return value


def _rule(path: Path, node: yaml.Node, index: int, level: float) -> GateRule:
    where = f"rules[{index}]"
    fields = _pairs(path, node, where, RULE_FIELDS)
    if "task" not in fields:
        raise _fail(path, node, where, "field 'task' is missing")
    limits = [name for name in ("min_score", "max_drop") if name in fields]
    if len(limits) != 1:
        raise _fail(path, node, where, "give exactly one of min_score, max_drop")
    test = _text(path, fields["test"], f"{where}.test") if "test" in fields else "estimate"
    if test not in TESTS:
        raise _fail(path, fields["test"], f"{where}.test", f"{test!r} is not one of {', '.join(TESTS)}")
    if "test" in fields and "min_score" in fields:
        raise _fail(path, fields["test"], f"{where}.test", "applies to max_drop rules only")
    return GateRule(
        task=_text(path, fields["task"], f"{where}.task"),
        where=f"{path}: line {node.start_mark.line + 1}",
        judge=_text(path, fields["judge"], f"{where}.judge") if "judge" in fields else None,
        min_score=_number(path, fields["min_score"], f"{where}.min_score") if "min_score" in fields else None,
        max_drop=_number(path, fields["max_drop"], f"{where}.max_drop", 0.0)
        if "max_drop" in fields
        else None,
        test=test,
        level=_number(path, fields["level"], f"{where}.level", 0.5, 0.999) if "level" in fields else level,
    )


def read_policy(path: Path) -> GatePolicy:
    """A gate policy file, strictly read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JuristError(f"--gate: {path}: cannot read ({exc.strerror or exc})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"line {mark.line + 1}" if mark is not None else ""
        raise InputError(path, line, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if root is None:
        raise InputError(path, "", "the policy is empty: give rules")
    top = _pairs(path, root, "", TOP_FIELDS)
    level = _number(path, top["level"], "level", 0.5, 0.999) if "level" in top else 0.95
    rules_node = top.get("rules")
    if rules_node is None:
        raise _fail(path, root, "rules", "field 'rules' is missing")
    if not isinstance(rules_node, yaml.SequenceNode) or not rules_node.value:
        raise _fail(path, rules_node, "rules", "expected a list of rules (- task: ...)")
    rules = tuple(_rule(path, node, k, level) for k, node in enumerate(rules_node.value))
    reference = None
    if "reference" in top:
        reference = (path.parent / _text(path, top["reference"], "reference")).resolve()
    return GatePolicy(path, rules, reference)


def check_gate(policy: GatePolicy, side: Side, reference: Side | None) -> list[dict[str, Any]]:
    """Every rule's outcome on ``side`` (one entry per task it applies to): passed or failed, and why."""
    from jurist.families import read_outcomes

    results: list[dict[str, Any]] = []
    for rule in policy.rules:
        tasks = list(side.tasks) if rule.task == "*" else [rule.task]
        for task in tasks:
            entry: dict[str, Any] = {
                "rule": rule.describe(),
                "where": rule.where,
                "run": side.name,
                "task": task,
            }
            run = side.tasks.get(task)
            if run is None:
                results.append(entry | {"passed": False, "why": f"no run of task {task} in {side.name}"})
                continue
            if rule.min_score is not None:
                outcomes = read_outcomes(run.root)
                judges = [rule.judge] if rule.judge else outcomes.judges()
                for judge in judges:
                    _, cells = model_cells(outcomes, run, judge)
                    count = sum(cells.counts.values())
                    score = outcomes.scale * sum(cells.sums.values()) / count if count else float("nan")
                    passed = score >= rule.min_score
                    results.append(
                        entry
                        | {"judge": judge or None, "value": score, "passed": passed,
                           "why": f"score {score:.2f} {'>=' if passed else '<'} {rule.min_score:g}"}
                    )  # fmt: skip
                continue
            if reference is None or task not in reference.tasks:
                results.append(
                    entry | {"passed": False, "why": "no reference run of this task to compare with"}
                )
                continue
            settings = CompareSettings(level=rule.level)
            for row in compare_task(
                reference.tasks[task], run, settings, name_a=reference.name, name_b=side.name
            ):
                if rule.judge and row["judge"] != rule.judge:
                    continue
                results.append(entry | _drop_outcome(rule, row))
    return results


def _drop_outcome(rule: GateRule, row: dict[str, Any]) -> dict[str, Any]:
    assert rule.max_drop is not None
    estimate = row["difference"]["estimate"]
    low, high = row["difference"]["ci"]
    floor = -rule.max_drop
    if rule.test == "estimate":
        passed, shown = estimate >= floor, f"difference {estimate:+.2f}"
    elif rule.test == "significant":
        passed, shown = high >= floor, f"interval [{low:+.2f}, {high:+.2f}]"
    else:
        passed, shown = low >= floor, f"interval [{low:+.2f}, {high:+.2f}]"
    return {
        "judge": row["judge"],
        "value": estimate,
        "difference": row["difference"],
        "n": row["n"],
        "passed": passed,
        "why": f"{shown} {'within' if passed else 'beyond'} -{rule.max_drop:g} ({row['units']})",
    }
