"""The fault suite, small: 40% of all requests fail (429, 5xx, drops, garbage, slow), probes included.

30 questions x 3 models x 2 judges: jurist finishes within 3 runs, never refuses a run (exit 2), loses and
duplicates nothing, and its verdicts are those of a fault-free run. bench/bench_faults.py is the full one.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _bench_faults() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_faults", ROOT / "bench" / "bench_faults.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_faults"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_40_percent_faults_cost_nothing_within_three_runs(tmp_path: Path) -> None:
    bench = _bench_faults()
    # Fast backoff, and 4 attempts a request, so that some items do fail in a run and the re-run matters.
    fast = ("--retry-base-delay", "0.01", "--max-attempts", "4")
    suite = {"questions": 30, "n_models": 3, "conc": 64, "extra_args": fast}
    reference = bench.run_suite(tmp_path / "clean", 0.0, max_runs=1, **suite)
    faulty = bench.run_suite(tmp_path / "faulty", 0.4, max_runs=3, seed=7, **suite)
    print(
        f"\nexit codes {faulty.exit_codes}; {sum(faulty.server['injected'].values())} faults injected in "
        f"{faulty.server['requests']} requests; attempts per request {faulty.per_request[0]:.2f} (max "
        f"{faulty.per_request[1]}); peak open files {faulty.peak_fds}; peak RSS {faulty.peak_rss_mb:.0f} MB"
    )
    assert reference.problems == [] and reference.exit_codes == [0]
    assert faulty.problems == []  # finished within 3 runs, none refused, 0 lost, 0 duplicated
    assert 2 not in faulty.exit_codes and faulty.exit_codes[-1] == 0
    assert faulty.labels == reference.labels
    assert faulty.server["injected"] and faulty.per_request[0] > 1.2  # the faults did happen
