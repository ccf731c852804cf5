"""Which checkers a suite uses: IFEval's 25 instruction ids, or IFBench's 58 plus IFEval's (83).

IFBench's suite names its upstream version: ``ifbench@db69a6f`` or ``ifbench@c94da02``
(:mod:`jurist.rules.ifbench_checks`); plain ``ifbench`` is the default version. The checker modules import
nltk, langdetect and emoji, so they load only when a rule task runs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from jurist.rules.base import Checker

SUITES = ("ifeval", "ifbench", "ifbench@db69a6f", "ifbench@c94da02")


@functools.cache
def checkers(suite: str) -> Mapping[str, Checker]:
    """Instruction id -> checker for ``suite`` (one of :data:`SUITES`)."""
    from jurist.rules.ifeval_checks import IFEVAL

    if suite not in SUITES:
        raise KeyError(f"no rule suite {suite!r} (there are: {', '.join(SUITES)})")
    if suite == "ifeval":
        return dict(IFEVAL)
    from jurist.rules.ifbench_checks import DEFAULT_VERSION, IFBENCH_BY_VERSION

    _, _, version = suite.partition("@")
    return {**IFEVAL, **IFBENCH_BY_VERSION[version or DEFAULT_VERSION]}
