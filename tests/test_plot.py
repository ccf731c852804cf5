"""``jurist plot`` and ``write_sweep_plots``: sweep.json read and checked, figures planned, files drawn."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jurist.errors import InputError, JuristError
from jurist.plots import PLOT_HINT, plan_sweep_plots, write_sweep_plots
from jurist.plots.curve_plans import FigurePlan
from jurist.plots.curves import DPI, figure_inches
from jurist.plots.sweep_data import read_sweep

STEPS = {"step_100": 100, "step_200": 200, "step_300": 300}


def result(
    checkpoint: str,
    task: str,
    metric: str,
    per_sample: list[float] | None,
    *,
    judge: str | None = None,
    fraction: bool = False,
    ci_width: float = 6.0,
) -> dict[str, Any]:
    """A sweep.json row as jurist sweep writes it: mean@N of the samples, their std and sem, a 95% CI
    around the mean that is not symmetric (as a bootstrap's rarely is)."""
    value = std = sem = ci95 = None
    if per_sample is not None:
        n = len(per_sample)
        value = sum(per_sample) / n
        if n > 1:
            std = (sum((x - value) ** 2 for x in per_sample) / (n - 1)) ** 0.5
            sem = std / n**0.5
        ci95 = [value - ci_width, value + ci_width / 2]
    return {
        "checkpoint": checkpoint,
        "step": STEPS[checkpoint],
        "task": task,
        "judge": judge,
        "metric": metric,
        "value": value,
        "ci95": ci95,
        "std": std,
        "sem": sem,
        "per_sample": per_sample,
        "n_samples": len(per_sample or [None, None]),
        "fraction": fraction,
        "run_dir": f"{checkpoint}/{task}",
    }


TASKS = ("ifeval", "starter", "healthbench")


def sweep_document(
    name: str,
    *,
    judges: list[str],
    failed: str | None = None,
    tasks: tuple[str, ...] = TASKS,
    lift: float = 0.0,
) -> dict[str, Any]:
    """Three checkpoints (one may have failed: no rows), ifeval by rule, starter by each judge,
    healthbench as a 0-1 fraction whose last checkpoint went unscored (value null); ``lift`` moves
    every value up by that many points (another training run)."""
    rows: list[dict[str, Any]] = []
    checkpoints = []
    for k, checkpoint in enumerate(STEPS):
        status = "failed" if checkpoint == failed else "complete"
        error = "server exited: CUDA out of memory" if status == "failed" else None
        path = f"/ckpt/{checkpoint}"
        checkpoints.append(
            {"name": checkpoint, "step": STEPS[checkpoint], "path": path, "status": status, "error": error}
        )
        if status == "failed":
            continue
        rows.append(
            result(
                checkpoint, "ifeval", "prompt_level_strict_acc", [30.0 + 8 * k + lift, 34.0 + 8 * k + lift]
            )
        )
        rows.append(
            result(checkpoint, "ifeval", "inst_level_strict_acc", [41.0 + 6 * k + lift, 43.0 + 6 * k + lift])
        )
        for j, judge in enumerate(judges):
            scores = [20.0 + 10 * k + 5 * j + lift, 24.0 + 10 * k + 5 * j + lift]
            rows.append(result(checkpoint, "starter", "win_rate", scores, judge=judge, ci_width=9.0))
        health = (
            None if checkpoint == "step_300" else [0.21 + 0.05 * k + lift / 100, 0.25 + 0.05 * k + lift / 100]
        )
        rows.append(
            result(
                checkpoint,
                "healthbench",
                "score",
                health,
                judge=judges[0] if judges else None,
                fraction=True,
                ci_width=0.04,
            )
        )
    return {
        "version": 1,
        "name": name,
        "created": "2026-11-23T18:40:00Z",
        "checkpoints": checkpoints,
        "tasks": list(tasks),
        "samples": 2,
        "judges": judges,
        "results": [row for row in rows if row["task"] in tasks],
        "usage": {},
    }


def write_sweep(directory: Path, document: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sweep.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return directory


@pytest.fixture
def sweep_a(tmp_path: Path) -> Path:
    """One sweep, two judges, step_200 failed."""
    document = sweep_document("run-a", judges=["smollm2-135m", "judge-b"], failed="step_200")
    return write_sweep(tmp_path / "run-a", document)


@pytest.fixture
def ifeval_only(tmp_path: Path) -> Path:
    """A small sweep (two figures to draw) for the tests that render more than once."""
    return write_sweep(tmp_path / "small", sweep_document("small", judges=[], tasks=("ifeval",)))


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Path]]:
    """The full set of files for one sweep, drawn once for the tests that inspect them."""
    tmp = tmp_path_factory.mktemp("drawn")
    document = sweep_document("run-a", judges=["smollm2-135m", "judge-b"], failed="step_200")
    sweep = write_sweep(tmp / "run-a", document)
    return sweep, tmp / "plots", write_sweep_plots([sweep], tmp / "plots")


@pytest.fixture
def sweep_b(tmp_path: Path) -> Path:
    """A second training run, one judge, every checkpoint complete."""
    return write_sweep(tmp_path / "run-b", sweep_document("run-b", judges=["smollm2-135m"], lift=-4.0))


def figures_by_stem(figures: tuple[FigurePlan, ...]) -> dict[str, FigurePlan]:
    return {figure.stem: figure for figure in figures}


def jurist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def curve_ids(svg: str) -> list[str]:
    return re.findall(r'id="(curve-\d+-\d+)"', svg)


# -- reading ------------------------------------------------------------------------------------------


def test_sweep_json_is_read_into_typed_rows(sweep_a: Path) -> None:
    sweep = read_sweep(sweep_a)
    assert sweep.name == "run-a" and sweep.judges == ("smollm2-135m", "judge-b")
    assert [c.status for c in sweep.checkpoints] == ["complete", "failed", "complete"]
    assert sweep.checkpoints[1].error == "server exited: CUDA out of memory"
    assert not [row for row in sweep.results if row.checkpoint == "step_200"]
    first = sweep.results[0]
    assert (first.task, first.judge, first.metric, first.value) == (
        "ifeval",
        None,
        "prompt_level_strict_acc",
        32.0,
    )
    assert first.ci95 == (26.0, 35.0) and first.per_sample == (30.0, 34.0)
    assert first.std == pytest.approx(2.8284, abs=1e-4) and first.sem == pytest.approx(2.0)
    unscored = [row for row in sweep.results if row.task == "healthbench" and row.step == 300]
    assert len(unscored) == 1 and unscored[0].value is None and unscored[0].ci95 is None


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (lambda d: d.update(version=2), "version", "2 is not a version"),
        (lambda d: d.pop("name"), "name", "missing"),
        (lambda d: d["results"][1].update(value="41.5"), "results[1].value", 'got "41.5"'),
        (lambda d: d["results"][2].update(step="100"), "results[2].step", "an integer"),
        (lambda d: d["results"][0].update(step=True), "results[0].step", "an integer"),
        (lambda d: d["results"][0].update(ci95=[1.0]), "results[0].ci95", "[low, high]"),
        (lambda d: d["results"][0].update(ci95=[50.0, 10.0]), "results[0].ci95", "low 50.0 is above"),
        (lambda d: d["results"][3].pop("fraction"), "results[3].fraction", "missing"),
        (lambda d: d["checkpoints"][1].update(status="crashed"), "checkpoints[1].status", "'crashed'"),
        (lambda d: d.update(results={}), "results", "a list"),
        (lambda d: d["results"].__setitem__(4, "row"), "results[4]", "a JSON object"),
    ],
)
def test_a_bad_field_names_the_file_and_the_field(
    tmp_path: Path, change: Any, field: str, problem: str
) -> None:
    document = sweep_document("run", judges=["j"])
    change(document)
    directory = write_sweep(tmp_path / "bad", document)
    with pytest.raises(InputError) as caught:
        read_sweep(directory)
    assert str(caught.value).startswith(f"{directory / 'sweep.json'}: {field}: ")
    assert problem in str(caught.value)


def test_not_json_and_no_sweep_json_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "sweep.json").write_text('{"version": 1,\n  "name": ', encoding="utf-8")
    with pytest.raises(InputError, match=r"sweep\.json: line 2 column 11: not valid JSON"):
        read_sweep(tmp_path / "broken")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty/sweep\.json: not found"):
        read_sweep(tmp_path / "empty")
    with pytest.raises(JuristError, match="not a directory"):
        read_sweep(tmp_path / "absent")


# -- planning -----------------------------------------------------------------------------------------


def test_one_sweep_gives_task_figures_a_grid_and_a_judge_comparison(sweep_a: Path) -> None:
    plan = plan_sweep_plots([sweep_a])
    figures = figures_by_stem(plan.figures)
    assert list(figures) == ["ifeval", "starter", "healthbench", "all_tasks", "judges_starter"]
    ifeval = figures["ifeval"]
    assert ifeval.title == "ifeval · run-a" and ifeval.caption == "error bars: 95% CI"
    assert [panel.y_label for panel in ifeval.panels] == [
        "prompt_level_strict_acc (%)",
        "inst_level_strict_acc (%)",
    ]
    (line,) = ifeval.panels[0].series
    assert [(p.step, p.value) for p in line.points] == [(100, 32.0), (300, 48.0)]  # step_200 failed
    assert (line.points[0].below, line.points[0].above) == (6.0, 3.0)  # asymmetric, from ci95
    starter = figures["starter"]
    assert [s.label for s in starter.panels[0].series] == ["smollm2-135m", "judge-b"]  # one sweep: per judge
    assert [s.color for s in starter.panels[0].series] == [0, 1]
    health = figures["healthbench"].panels[0]
    assert health.y_label == "score (0-1)" and [p.step for p in health.series[0].points] == [100]
    assert figures["healthbench"].title == "healthbench · run-a · judge smollm2-135m"
    grid = figures["all_tasks"]
    assert [p.title for p in grid.panels] == [
        "ifeval",
        "starter · judge smollm2-135m",
        "healthbench · judge smollm2-135m",
    ]
    assert [p.y_label for p in grid.panels] == ["prompt_level_strict_acc (%)", "win_rate (%)", "score (0-1)"]
    assert [s.label for s in figures["judges_starter"].panels[0].series] == ["smollm2-135m", "judge-b"]
    notes = "\n".join(plan.notes)
    assert "run-a: checkpoint step_200 failed (server exited: CUDA out of memory): not plotted" in notes
    assert (
        "skipped 1 result(s) with no value (every item unscored): run-a step_300 healthbench score" in notes
    )


def test_two_sweeps_draw_one_line_each_with_judges_told_apart(sweep_a: Path, sweep_b: Path) -> None:
    figures = figures_by_stem(plan_sweep_plots([sweep_a, sweep_b]).figures)
    assert figures["ifeval"].title == "ifeval"
    assert [s.label for s in figures["ifeval"].panels[0].series] == ["run-a", "run-b"]
    starter = figures["starter"].panels[0].series
    assert [s.label for s in starter] == ["run-a · smollm2-135m", "run-a · judge-b", "run-b · smollm2-135m"]
    assert [(s.color, s.style) for s in starter] == [(0, 0), (0, 1), (1, 0)]  # colour: sweep; style: judge
    assert [s.label for s in figures["all_tasks"].panels[1].series] == ["run-a", "run-b"]
    judges = figures["judges_starter"]  # only run-a had two judges: its lines alone, named by judge
    assert judges.title == "judges on starter · run-a"
    assert [s.label for s in judges.panels[0].series] == ["smollm2-135m", "judge-b"]
    assert [p.step for p in figures["ifeval"].panels[0].series[1].points] == [100, 200, 300]


def test_same_names_get_told_apart_and_mixed_units_become_percent(tmp_path: Path) -> None:
    one = write_sweep(tmp_path / "x1", sweep_document("run", judges=["j"]))
    other = sweep_document("run", judges=["j"])
    for row in other["results"]:
        if row["task"] == "healthbench":
            row.update(fraction=False, value=None if row["value"] is None else row["value"] * 100)
    two = write_sweep(tmp_path / "x2", other)
    figures = figures_by_stem(plan_sweep_plots([one, two]).figures)
    panel = figures["healthbench"].panels[0]
    assert [s.label for s in panel.series] == ["run", "run (2)"]
    assert panel.y_label == "score (%)"
    assert [p.value for p in panel.series[0].points] == pytest.approx([23.0, 28.0])


@pytest.mark.parametrize(
    ("mode", "first"),
    [("ci95", (6.0, 3.0)), ("sem", (2.0, 2.0)), ("std", (2.8284, 2.8284)), ("none", (None, None))],
)
def test_error_bar_modes(sweep_a: Path, mode: str, first: tuple[float | None, float | None]) -> None:
    plan = plan_sweep_plots([sweep_a], error_bars=mode)
    point = figures_by_stem(plan.figures)["ifeval"].panels[0].series[0].points[0]
    assert (point.below, point.above) == pytest.approx(first, abs=1e-4)
    assert figures_by_stem(plan.figures)["ifeval"].caption.startswith(
        "no error bars" if mode == "none" else "error bars"
    )
    assert not [note for note in plan.notes if "error bar" in note]


def test_points_without_the_chosen_bar_are_drawn_bare_and_noted_once(tmp_path: Path) -> None:
    document = sweep_document("run", judges=["j"])
    for row in document["results"]:
        if row["checkpoint"] == "step_300":
            row.update(std=None, sem=None, per_sample=[row["value"]], n_samples=1)
    plan = plan_sweep_plots([write_sweep(tmp_path / "run", document)], error_bars="std")
    points = figures_by_stem(plan.figures)["ifeval"].panels[0].series[0].points
    assert [(p.step, p.below is None) for p in points] == [(100, False), (200, False), (300, True)]
    bare = [note for note in plan.notes if "error bar" in note]
    assert len(bare) == 1 and bare[0].startswith("3 point(s) have no std (drawn without an error bar)")


def test_an_unknown_error_bar_mode_is_refused(sweep_a: Path) -> None:
    with pytest.raises(JuristError, match="--error-bars: 'ci90'"):
        plan_sweep_plots([sweep_a], error_bars="ci90")


# -- drawing ------------------------------------------------------------------------------------------


def test_every_file_is_written_and_decodes_at_its_size(drawn: tuple[Path, Path, list[Path]]) -> None:
    from matplotlib.image import imread

    sweep, out, written = drawn
    stems = ["ifeval", "starter", "healthbench", "all_tasks", "judges_starter"]
    assert written == [out / f"{stem}.{fmt}" for stem in stems for fmt in ("png", "svg")]
    assert all(path.stat().st_size > 1000 for path in written)
    assert not list(out.glob(".*partial"))
    plan = figures_by_stem(plan_sweep_plots([sweep]).figures)
    for stem in stems:
        width, height = figure_inches(plan[stem])
        rows, columns = imread(out / f"{stem}.png").shape[:2]
        assert abs(rows - height * DPI) <= 1 and abs(columns - width * DPI) <= 1
        svg = (out / f"{stem}.svg").read_text(encoding="utf-8")
        assert f'width="{width * 72:g}pt"' in svg
        assert len(curve_ids(svg)) == sum(len(panel.series) for panel in plan[stem].panels)
    assert imread(out / "ifeval.png").shape[1] == 1100  # two panels side by side, 10 inches at 110 dpi
    starter = (out / "starter.svg").read_text(encoding="utf-8")
    assert ">smollm2-135m</text>" in starter and ">judge-b</text>" in starter
    assert ">win_rate (%)</text>" in starter and ">starter · run-a</text>" in starter
    assert len(re.findall(r'id="curve-0-\d-bars"', starter)) == 2  # one set of bars per judge line
    assert ">score (0-1)</text>" in (out / "healthbench.svg").read_text(encoding="utf-8")
    grid = (out / "all_tasks.svg").read_text(encoding="utf-8")
    assert (
        ">prompt_level_strict_acc (%)</text>" in grid and ">healthbench · judge smollm2-135m</text>" in grid
    )


def test_bars_are_drawn_only_when_asked(ifeval_only: Path, tmp_path: Path) -> None:
    write_sweep_plots([ifeval_only], tmp_path / "ci", formats=["svg"])
    write_sweep_plots([ifeval_only], tmp_path / "none", error_bars="none", formats=["svg"])
    with_bars = (tmp_path / "ci" / "ifeval.svg").read_text(encoding="utf-8")
    without = (tmp_path / "none" / "ifeval.svg").read_text(encoding="utf-8")
    assert len(re.findall(r'id="curve-\d+-\d+-bars"', with_bars)) == 2 and len(curve_ids(with_bars)) == 2
    assert "-bars" not in without and len(curve_ids(without)) == 2
    assert not (tmp_path / "none" / "ifeval.png").exists()


def test_svg_and_png_are_byte_identical_across_runs(ifeval_only: Path, tmp_path: Path) -> None:
    first = write_sweep_plots([ifeval_only], tmp_path / "one", formats=["svg", "png"])
    second = write_sweep_plots([ifeval_only], tmp_path / "two", formats=["svg", "png"])
    assert (
        [p.name for p in first]
        == [p.name for p in second]
        == ["ifeval.svg", "ifeval.png", "all_tasks.svg", "all_tasks.png"]
    )
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert b"<dc:date>" not in first[0].read_bytes()


def test_names_are_plain_text_never_mathtext(tmp_path: Path) -> None:
    document = sweep_document("_run $x^2$ <b>&", judges=["$\\alpha$_judge", "_hidden"], tasks=("starter",))
    for row in document["results"]:
        row["task"] = "star_$ter$/../x"
    document["tasks"] = ["star_$ter$/../x"]
    written = write_sweep_plots(
        [write_sweep(tmp_path / "weird", document)], tmp_path / "out", formats=["svg"]
    )
    assert [p.name for p in written] == ["star__ter_.._x.svg", "all_tasks.svg", "judges_star__ter_.._x.svg"]
    svg = (tmp_path / "out" / "judges_star__ter_.._x.svg").read_text(encoding="utf-8")
    assert ">judges on star_$ter$/../x · _run $x^2$ &lt;b&gt;&amp;</text>" in svg
    assert ">$\\alpha$_judge</text>" in svg and ">_hidden</text>" in svg  # a leading "_" still in the legend
    assert len(curve_ids(svg)) == 2


def test_missing_matplotlib_gives_the_install_hint(
    sweep_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(JuristError) as caught:
        write_sweep_plots([sweep_a], tmp_path / "plots")
    assert PLOT_HINT in str(caught.value) == "plots need matplotlib, which is not installed: " + PLOT_HINT
    assert not (tmp_path / "plots").exists()


def test_nothing_to_draw_writes_nothing(tmp_path: Path) -> None:
    document = sweep_document("dead", judges=["j"])
    document["results"] = []
    for checkpoint in document["checkpoints"]:
        checkpoint.update(status="failed", error="bad path")
    assert write_sweep_plots([write_sweep(tmp_path / "dead", document)], tmp_path / "plots") == []


# -- the command line ---------------------------------------------------------------------------------


def test_cli_writes_into_the_sweep_and_says_what_is_missing_once(sweep_a: Path, tmp_path: Path) -> None:
    document = json.loads((sweep_a / "sweep.json").read_text(encoding="utf-8"))
    document["results"][0]["ci95"] = None
    (sweep_a / "sweep.json").write_text(json.dumps(document), encoding="utf-8")
    done = jurist("plot", str(sweep_a), "--format", "png", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (sweep_a / "plots").iterdir()) == [
        "all_tasks.png",
        "healthbench.png",
        "ifeval.png",
        "judges_starter.png",
        "starter.png",
    ]
    assert done.stderr.count("have no ci95") == 1 and "1 point(s) have no ci95" in done.stderr
    assert "step_200 failed" in done.stderr and "wrote 5 files to" in done.stderr


def test_cli_usage_and_input_errors_exit_2_with_one_line(sweep_a: Path, tmp_path: Path) -> None:
    missing = jurist("plot", str(tmp_path / "no-such-sweep"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0 and str(tmp_path / "no-such-sweep") in missing.stderr
    document = json.loads((sweep_a / "sweep.json").read_text(encoding="utf-8"))
    document["results"][3]["value"] = "high"
    (sweep_a / "sweep.json").write_text(json.dumps(document), encoding="utf-8")
    bad = jurist("plot", str(sweep_a), "--out", str(tmp_path / "p"), cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert f"{sweep_a / 'sweep.json'}: results[3].value: expected a number or null" in bad.stderr
    assert not (tmp_path / "p").exists()


def test_cli_options_are_checked_before_anything_is_read(tmp_path: Path) -> None:
    from jurist.commands.plot import plot

    with pytest.raises(JuristError, match="--error-bars: 'iqr' is not one of ci95, sem, std, none"):
        plot([tmp_path / "absent"], error_bars="iqr")
    with pytest.raises(JuristError, match="--format: jpg given; choose png, svg or png,svg"):
        plot([tmp_path], fmt="svg,png,jpg")
    with pytest.raises(JuristError, match="is not a directory"):
        plot([tmp_path, tmp_path / "absent"])


def test_cli_nothing_to_plot_exits_1(tmp_path: Path) -> None:
    document = sweep_document("dead", judges=["j"])
    document["results"] = []
    directory = write_sweep(tmp_path / "dead", document)
    done = jurist("plot", str(directory), cwd=tmp_path)
    assert done.returncode == 1 and "nothing to plot" in done.stderr


def test_matplotlib_is_imported_only_to_draw(sweep_a: Path) -> None:
    code = (
        "import sys; from pathlib import Path; import jurist.cli, jurist.plots;"
        f"jurist.plots.plan_sweep_plots([Path({str(sweep_a)!r})]);"
        "assert 'matplotlib' not in sys.modules, 'imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_step_ticks_stay_short_on_long_runs() -> None:
    from jurist.plots.curves import step_label

    assert [step_label(s) for s in (100.0, 1500.0, 10000.0, 12500.0, 250000.0)] == [
        "100",
        "1500",
        "10k",
        "12500",
        "250k",
    ]
