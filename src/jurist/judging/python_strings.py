"""String constants read out of upstream Python source, which is data here and never runs.

Upstream keeps some judge prompts as module-level strings in its code (simple-evals' ``GRADER_TEMPLATE``,
WritingBench's ``evaluate_prompt``); jurist reads those assignments with :mod:`ast` and executes nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from jurist.errors import InputError


def read_python_strings(path: Path, names: Sequence[str], required: Sequence[str]) -> dict[str, str]:
    """The string values of module-level assignments ``NAME = "..."`` or ``NAME = "...".strip()`` in the
    Python source ``path``; other statements are ignored, none is executed. A ``required`` name that is
    missing, or any of ``names`` bound to something else, is an error naming the file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, "", f"cannot read: {exc}") from None
    except SyntaxError as exc:
        raise InputError(path, f"line {exc.lineno}", f"not Python source ({exc.msg})") from None
    found: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id in names):
            continue
        value = _string_value(node.value)
        if value is None:
            raise InputError(path, f"line {node.lineno}", f"{target.id} is not a string literal")
        found[target.id] = value
    missing = [name for name in required if name not in found]
    if missing:
        raise InputError(path, "", f'no {missing[0]} = "..." string assignment')
    return found


def _string_value(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    call = node
    if (
        isinstance(call, ast.Call)
        and not call.args
        and not call.keywords
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "strip"
        and isinstance(call.func.value, ast.Constant)
        and isinstance(call.func.value.value, str)
    ):
        return call.func.value.value.strip()
    return None
