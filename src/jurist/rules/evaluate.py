"""Strict and loose instruction checking, as the IFEval reference evaluator defines them.

*strict*: the response is not blank and the checker passes. *loose*: the checker passes on any of eight
variants: the response, without its first line, without its last line, without both (each stripped), and
each of those four with every ``*`` removed; a blank variant never passes. A checker that raises counts as
not followed (eval_framework's rule; the reference evaluator would crash the whole run) and the error is
kept with the result so reports can show it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.rules import ahead
from jurist.rules.base import Checker
from jurist.rules.needs import NLTK_NEEDS
from jurist.rules.nltk_data import MissingNltkData, require_installed


@dataclass(frozen=True, slots=True)
class InstructionResult:
    """One instruction's outcome on one response."""

    instruction_id: str
    strict: bool
    loose: bool | None
    """None: not computed (a strict-only check, :func:`check_response` with ``loose=False``)."""
    error: str | None = None


def clean_kwargs(kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments a checker sees: ``None`` padding dropped."""
    return {key: value for key, value in (kwargs or {}).items() if value is not None}


def loose_variants(response: str) -> list[str]:
    """The eight responses the loose mode tries, in the reference's order."""
    lines = response.split("\n")
    remove_first = "\n".join(lines[1:]).strip()
    remove_last = "\n".join(lines[:-1]).strip()
    remove_both = "\n".join(lines[1:-1]).strip()
    return [
        response,
        response.replace("*", ""),
        remove_first,
        remove_last,
        remove_both,
        remove_first.replace("*", ""),
        remove_last.replace("*", ""),
        remove_both.replace("*", ""),
    ]


def check_instruction(
    checker: Checker,
    instruction_id: str,
    response: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    *,
    loose: bool = True,
) -> InstructionResult:
    """Strict and loose outcome of one instruction (``loose`` False: strict only, no variant tried, so
    ``error`` is the strict check's own); a missing NLTK resource is raised, not scored."""
    args = clean_kwargs(kwargs)
    error: str | None = None

    def passes(text: str) -> bool:
        nonlocal error
        if not text.strip():
            return False
        try:
            return bool(checker(text, args, prompt))
        except MissingNltkData:
            raise
        except Exception as exc:  # noqa: BLE001 - a crashing checker is "not followed", recorded
            error = error or f"{type(exc).__name__}: {exc}"[:300]
            return False

    strict = passes(response)
    if not loose:
        return InstructionResult(instruction_id, strict, None, error)
    followed = strict or any(passes(variant) for variant in _new_variants(response))
    return InstructionResult(instruction_id, strict, followed, error)


def _new_variants(response: str) -> list[str]:
    """The loose variants after the response itself, each text once: a checker is a pure function of
    its text, so a variant equal to one already tried (no ``*`` to remove, one line...) cannot change the
    outcome, and checking it again would only repeat the work (a langdetect run, a tokenisation)."""
    seen = {response}
    fresh = []
    for variant in loose_variants(response)[1:]:
        if variant not in seen:
            seen.add(variant)
            fresh.append(variant)
    return fresh


def check_response(
    checkers: Mapping[str, Checker],
    response: str,
    instruction_ids: Sequence[str],
    kwargs_list: Sequence[Mapping[str, Any] | None],
    prompt: str,
    *,
    loose: bool = True,
) -> list[InstructionResult]:
    """Every instruction of one prompt checked on one response, in the prompt's order; the result of
    :func:`start_checking` on the same inputs when there is one (waited for if still running).
    ``loose`` False: the strict outcome only (a reward that counts strict needs no variant checked);
    checks started ahead are always both, so such a call never takes one."""
    if not loose:
        with ahead.RUNNING:
            return _check_all(checkers, response, instruction_ids, kwargs_list, prompt, loose=False)
    key = ahead.check_key(checkers, response, instruction_ids, kwargs_list, prompt)
    started = ahead.checked_ahead(key)
    if started is not None:
        return list(started.result())
    with ahead.RUNNING:
        return _check_all(checkers, response, instruction_ids, kwargs_list, prompt)


def start_checking(
    checkers: Mapping[str, Checker],
    response: str,
    instruction_ids: Sequence[str],
    kwargs_list: Sequence[Mapping[str, Any] | None],
    prompt: str,
) -> None:
    """Begin :func:`check_response` on these inputs in the background (:mod:`jurist.rules.ahead`): the
    generate stage calls it as each answer arrives, so the run's end finds the checks done."""
    key = ahead.check_key(checkers, response, instruction_ids, kwargs_list, prompt)
    args = (checkers, response, list(instruction_ids), list(kwargs_list), prompt)
    ahead.check_ahead(key, checkers, functools.partial(_check_all, *args))


def _check_all(
    checkers: Mapping[str, Checker],
    response: str,
    instruction_ids: Sequence[str],
    kwargs_list: Sequence[Mapping[str, Any] | None],
    prompt: str,
    *,
    loose: bool = True,
) -> list[InstructionResult]:
    results = []
    for instruction_id, kwargs in zip(instruction_ids, kwargs_list, strict=True):
        checker = checkers.get(instruction_id)
        if checker is None:
            raise KeyError(f"no checker for instruction id {instruction_id!r}")
        results.append(
            check_instruction(checker, instruction_id, response, kwargs or {}, prompt, loose=loose)
        )
    return results


def require_resources(
    checkers: Mapping[str, Checker], uses: Iterable[tuple[str, str, Mapping[str, Any]]]
) -> None:
    """The NLTK data the instructions in ``uses`` read (:data:`jurist.rules.needs.NLTK_NEEDS`) is
    installed, or a missing resource stops the run with its one-line message before any request is sent,
    not after the answers were paid for; found without importing nltk where it lies unpacked, and no
    checker is run (that loaded nltk, scipy and langdetect's profiles before the first request).
    ``uses``: (prompt key, instruction id, kwargs) of the prompts the run keeps, so only their
    instructions are asked; the message names the first prompt that needs what is missing."""
    found: set[str] = set()
    for key, instruction_id, _kwargs in uses:
        if instruction_id not in checkers:
            continue
        for resource in NLTK_NEEDS.get(instruction_id, ()):
            if resource in found:
                continue
            try:
                require_installed(resource)
            except MissingNltkData as exc:
                raise MissingNltkData(f"prompt {key} ({instruction_id}): {exc}") from None
            found.add(resource)
