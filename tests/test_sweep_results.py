"""sweep.json's per-sample values: each family's rows give them on the scale their headline is shown on."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SHARED_DATA
from jurist.run import RunConfig, resolve
from jurist.sweep.results import per_sample_values


@pytest.mark.parametrize(("bench", "metric", "factor"), [("writingbench", "overall_x10", 10.0),
                                                         ("healthbench", "score", 1.0)])  # fmt: skip
def test_a_rubric_rows_samples_are_on_its_headlines_scale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bench: str, metric: str, factor: float
) -> None:
    if not (SHARED_DATA / bench).is_dir():
        pytest.skip(f"shared {bench} data absent")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    plan = resolve(RunConfig(bench=bench, out=tmp_path / "run"))
    row = {"model": "m", "suite": bench, "across_runs": {"per_run": [0.5, 0.75], "std": 0.1}}
    assert per_sample_values(plan, row, metric) == [factor * 0.5, factor * 0.75]
    assert per_sample_values(plan, {**row, "suite": "no-such-suite"}, metric) is None
