"""IFBench's 58 instruction ids (allenai/IFBench, Pyatkin et al. 2025), checked as the shipped reference
results were (code of 2025-10-17, commit c94da02).

Importing this module fills :data:`IFBENCH` from the family modules: ``count``, ``sentence`` (ratio and
sentence ids), ``words``, ``format`` and ``custom`` (custom and repeat ids). See
:mod:`jurist.rules.ifbench_common` for the shared sentence splitter and for how undetermined arguments
and the reference's own crashes are reported.
"""

from __future__ import annotations

from jurist.rules import (  # noqa: F401 - imported for their registrations
    ifbench_count,
    ifbench_custom,
    ifbench_format,
    ifbench_sentence,
    ifbench_words,
)
from jurist.rules.ifbench_common import IFBENCH

__all__ = ["IFBENCH"]
