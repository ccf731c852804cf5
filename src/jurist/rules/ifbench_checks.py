"""IFBench's 58 instruction ids (allenai/IFBench, Pyatkin et al. 2025) as two upstream versions check
them: ``c94da02`` (2025-10-17, the code that regenerated the shipped reference results) and ``db69a6f``
(2026-08-19, upstream's newest, the default).

Importing this module fills the registries from the family modules: ``count``, ``sentence`` (ratio and
sentence ids), ``words``, ``format`` and ``custom`` (custom and repeat ids), and ``db69a6f`` (the checkers
that version rewrote). See :mod:`jurist.rules.ifbench_common` for the two sentence splitters and for how
undetermined arguments and the reference's own crashes are reported.
"""

from __future__ import annotations

from collections.abc import Mapping

from jurist.rules import (  # noqa: F401 - imported for their registrations
    ifbench_count,
    ifbench_custom,
    ifbench_db69a6f,
    ifbench_format,
    ifbench_sentence,
    ifbench_words,
)
from jurist.rules.base import Checker
from jurist.rules.ifbench_common import IFBENCH, IFBENCH_DB69A6F

DEFAULT_VERSION = "db69a6f"
"""Upstream's newest commit seen (2026-08-19)."""

IFBENCH_BY_VERSION: Mapping[str, Mapping[str, Checker]] = {
    "db69a6f": {**IFBENCH, **IFBENCH_DB69A6F},
    "c94da02": dict(IFBENCH),
}
"""Upstream commit -> instruction id -> checker (the same 58 ids in each)."""

__all__ = ["DEFAULT_VERSION", "IFBENCH", "IFBENCH_BY_VERSION"]
