"""The checker contract: one pure function per instruction id.

A checker answers one question, "does this response follow this instruction with these arguments?", the
way the reference evaluator's ``check_following`` does after ``build_description(**kwargs)``. Arguments
arrive with ``None`` values dropped (IFBench's and the HF IFEval rows pad every field with ``null``), and
``prompt`` is the question's own text, which a few instructions (repeat the request...) compare against.
Strict and loose evaluation, and what a crash counts as, live in :mod:`jurist.rules.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Checker = Callable[[str, Mapping[str, Any], str], bool]
"""``checker(response, kwargs, prompt) -> followed``; must not mutate ``kwargs``; may raise on bad input."""


class CheckerRegistry(dict[str, Checker]):
    """Instruction id -> checker, filled by the ``register`` decorator of each checker module."""

    def register(self, instruction_id: str) -> Callable[[Checker], Checker]:
        def add(checker: Checker) -> Checker:
            if instruction_id in self:
                raise ValueError(f"instruction id {instruction_id!r} registered twice")
            self[instruction_id] = checker
            return checker

        return add
