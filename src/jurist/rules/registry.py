"""Which checkers a suite uses: IFEval's 25 instruction ids, or IFBench's 58 plus IFEval's (83).

The checker modules import nltk, langdetect and emoji, so they load only when a rule task runs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Literal

from jurist.rules.base import Checker

Suite = Literal["ifeval", "ifbench"]


@functools.cache
def checkers(suite: Suite) -> Mapping[str, Checker]:
    """Instruction id -> checker for ``suite``."""
    from jurist.rules.ifeval_checks import IFEVAL

    if suite == "ifeval":
        return dict(IFEVAL)
    from jurist.rules.ifbench_checks import IFBENCH

    return {**IFEVAL, **IFBENCH}
