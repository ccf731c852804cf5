"""Which checkers a suite uses: IFEval's 25 instruction ids, or IFBench's 58 plus IFEval's (83).

IFBench's suite names its upstream version: ``ifbench@db69a6f`` or ``ifbench@c94da02``
(:mod:`jurist.rules.ifbench_checks`); plain ``ifbench`` is the default version. The checker modules import
nltk, langdetect and emoji, so they load only when a rule task runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from jurist.rules.base import Checker


def _ifeval() -> Mapping[str, Checker]:
    from jurist.rules.ifeval_checks import IFEVAL

    return dict(IFEVAL)


def _ifbench(version: str | None) -> Mapping[str, Checker]:
    """IFBench's checkers at ``version`` (None: the default one), beside IFEval's, as upstream runs them."""
    from jurist.rules.ifbench_checks import DEFAULT_VERSION, IFBENCH_BY_VERSION
    from jurist.rules.ifeval_checks import IFEVAL

    return {**IFEVAL, **IFBENCH_BY_VERSION[version or DEFAULT_VERSION]}


_SUITES: Mapping[str, Callable[[], Mapping[str, Checker]]] = {
    "ifeval": _ifeval,
    "ifbench": functools.partial(_ifbench, None),
    "ifbench@db69a6f": functools.partial(_ifbench, "db69a6f"),
    "ifbench@c94da02": functools.partial(_ifbench, "c94da02"),
}
SUITES = tuple(_SUITES)


@functools.cache
def checkers(suite: str) -> Mapping[str, Checker]:
    """Instruction id -> checker for ``suite`` (one of :data:`SUITES`)."""
    build = _SUITES.get(suite)
    if build is None:
        raise KeyError(f"no rule suite {suite!r} (there are: {', '.join(SUITES)})")
    return build()
