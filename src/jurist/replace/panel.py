"""A replacement study's panel: published models' answers, the retired judge's own verdicts on them where
they are stored, and the published leaderboard they come from.

Two panels are read from the shared data's layout (``$JURIST_DATA_DIR``), and a user's ``--panel DIR`` in
either layout:

* AlpacaEval (``alpaca-eval/``): ``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json[.gz]``
  holds, per instruction, the model's output (``output_2``) and the retired judge's ``preference`` in
  [1, 2] (2: the model better); ``leaderboards/*leaderboard.csv`` the published ``win_rate``. The baseline's
  own folder (every preference 1.5) is no model of the panel.
* Arena-Hard (``arena-hard/``): ``model_answer/<model>.jsonl`` (the 2024 or the current shape) beside a
  ``question.jsonl``, the leaderboard CSV (``model, score``), and, where stored,
  ``model_judgment/<judge>/<model>.jsonl`` in the 2024 shape (two games, the baseline as A in the first),
  read as the retired judge's per-question verdicts. The shared data's v0.1 panel is the 12 models of
  ``external/meltemi-ai__arena-hard-auto-english`` with the 2024-07-31 leaderboard (no judgments).
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.benchmarks import question_uid
from jurist.errors import InputError, JuristError
from jurist.store import DATA_DIR_ENV, answer_text, data_dirs

ALPACA_ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
ALPACA_BASELINE = "gpt4_1106_preview"
ARENA_V01 = "external/meltemi-ai__arena-hard-auto-english/data/arena-hard-v0.1"
ARENA_V01_LEADERBOARD = "leaderboard/arena_hard_leaderboard_20240731.csv"
ARENA_V01_BASELINE = "gpt-4-0314"
# Arena-Hard 2024 game scores, baseline shown as A in game 1: the model's side of each label.
_ARENA_MODEL_SIDE = {"A>>B": 0.0, "A>B": 0.0, "A=B": 0.5, "B>A": 1.0, "B>>A": 1.0}


@dataclass(frozen=True)
class Panel:
    """Published models with their answers, the retired judge's per-item scores and published scores."""

    bench: str
    source: str
    answers: Mapping[str, Mapping[str, str]]
    """model -> question uid -> answer text."""
    retired: Mapping[str, Mapping[str, float]]
    """model -> uid -> the retired judge's score in [0, 1] from the model's side (empty: none stored)."""
    published: Mapping[str, float]
    """model -> its published score (0-100) on the retired judge's leaderboard."""
    published_field: str
    """Which number of a run's leaderboard row that score is (``win_rate`` for AlpacaEval, ``score``)."""
    retired_judge: str
    board: Mapping[str, float] = field(default_factory=dict)
    """Every row of the published leaderboard (model -> score): where an anchored score would rank."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    bench_options: Mapping[str, str] = field(default_factory=dict)
    """The ``-B`` options the study's run of ``bench`` takes (AlpacaEval: ``lc=estimate``, as the study
    compares raw preferences and needs no LC inputs, a download when absent)."""

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(sorted(self.answers))

    @property
    def item_level(self) -> bool:
        return any(self.retired.values())


def _json_file(path: Path) -> Any:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(path, "", f"not JSON ({exc})") from None


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InputError(path, f"line {number}", f"not JSON ({exc})") from None
            if not isinstance(row, dict):
                raise InputError(path, f"line {number}", "not a JSON object")
            yield number, row


def _leaderboard(path: Path, column: str) -> dict[str, float]:
    """model -> ``column`` of a leaderboard CSV whose first column (named or not) is the model."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = list(reader.fieldnames or [])
        if column not in fields:
            raise InputError(path, "line 1", f"no column {column!r}")
        out: dict[str, float] = {}
        for number, row in enumerate(reader, start=2):
            try:
                out[str(row[fields[0]])] = float(row[column])
            except (TypeError, ValueError):
                raise InputError(path, f"line {number}", f"field {column!r} is not a number") from None
    return out


def find_shared(folder: str) -> Path:
    """``folder`` in the first data directory that has it; one line naming the variable otherwise."""
    for root in data_dirs():
        if (root / folder).is_dir():
            return root / folder
    raise JuristError(f"no {folder}/ panel in ${DATA_DIR_ENV} (or pass --panel DIR)")


def alpaca_panel(root: Path) -> Panel:
    """The AlpacaEval panel of ``root`` (a folder with ``results/`` and, optionally, ``leaderboards/``)."""
    results = root / "results"
    if not results.is_dir():
        raise JuristError(f"--panel {root}: no results/ folder of AlpacaEval annotations")
    answers: dict[str, dict[str, str]] = {}
    retired: dict[str, dict[str, float]] = {}
    for folder in sorted(p for p in results.iterdir() if p.is_dir() and p.name != ALPACA_BASELINE):
        files = sorted((folder / ALPACA_ANNOTATOR).glob("annotations.json*"))
        if not files:
            continue
        rows = _json_file(files[0])
        if not isinstance(rows, list):
            raise InputError(files[0], "", "expected a list of annotations")
        mine, scores = answers.setdefault(folder.name, {}), retired.setdefault(folder.name, {})
        for position, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("instruction"), str):
                raise InputError(files[0], f"record {position}", "field 'instruction' must be a string")
            uid = question_uid(row["instruction"])
            mine[uid] = str(row.get("output_2") or "")
            preference = row.get("preference")
            if isinstance(preference, (int, float)):
                value = 1.5 if preference == 0 else float(preference)  # upstream: 0 means a tie
                scores[uid] = value - 1.0
    if not answers:
        raise JuristError(f"--panel {root}: no results/<model>/{ALPACA_ANNOTATOR}/annotations.json[.gz]")
    boards = sorted((root / "leaderboards").glob(f"{ALPACA_ANNOTATOR}_leaderboard.csv"))
    published = _leaderboard(boards[0], "win_rate") if boards else {}
    notes = []
    for model in answers:
        if (
            model not in published
        ):  # a user panel without the CSV: its full-panel win rate is the published one
            values = list(retired[model].values())
            published[model] = 100.0 * sum(values) / len(values) if values else float("nan")
            notes.append(f"{model}: no published row; its stored verdicts' win rate stands in")
    return Panel(
        "alpaca-eval",
        str(root),
        answers,
        retired,
        {m: published[m] for m in answers},
        "win_rate",
        "gpt-4-1106-preview",
        dict(published),
        tuple(notes),
        {"lc": "estimate"},
    )


def _arena_judgments(folder: Path) -> dict[str, dict[str, float]]:
    """model -> uid -> the model's side of the retired judge's two games (2024 shape), mean of the two."""
    out: dict[str, dict[str, float]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for number, row in _jsonl(path):
            games = row.get("games")
            if not isinstance(games, list) or len(games) != 2:
                raise InputError(path, f"line {number}", "field 'games' must hold the two games")
            sides = []
            for index, game in enumerate(games):
                label = game.get("score") if isinstance(game, dict) else None
                if label in _ARENA_MODEL_SIDE:
                    side = _ARENA_MODEL_SIDE[str(label)]
                    sides.append(side if index == 0 else 1.0 - side)  # game 2 shows the model as A
            if sides:
                model = str(row.get("model") or path.stem)
                out.setdefault(model, {})[str(row["question_id"])] = sum(sides) / len(sides)
    return out


def arena_panel(answers_dir: Path, leaderboard: Path, baseline: str, bench: str) -> Panel:
    """An Arena-Hard panel: every ``model_answer/*.jsonl`` but the baseline's, scored on ``leaderboard``."""
    published_all = _leaderboard(leaderboard, "score")
    answers: dict[str, dict[str, str]] = {}
    for path in sorted((answers_dir / "model_answer").glob("*.jsonl")):
        if path.stem == baseline:
            continue
        texts = {}
        for number, row in _jsonl(path):
            uid, text = row.get("question_id", row.get("uid")), answer_text(row)
            if uid is None or text is None:
                raise InputError(path, f"line {number}", "needs a question id and an answer text")
            texts[str(uid)] = text
        answers[path.stem] = texts
    missing = sorted(set(answers) - set(published_all))
    if missing:
        raise InputError(leaderboard, "", f"no row for panel model {missing[0]!r}")
    judged = sorted((answers_dir / "model_judgment").glob("*/"))
    retired = _arena_judgments(judged[0]) if judged else {}
    judge = judged[0].name if judged else "gpt-4-1106-preview"
    return Panel(
        bench,
        str(answers_dir),
        answers,
        {m: retired.get(m, {}) for m in answers},
        {m: published_all[m] for m in answers},
        "score",
        judge,
        published_all,
    )


def _alpaca_eval_panel(panel_dir: Path | None) -> Panel:
    return alpaca_panel(panel_dir or find_shared("alpaca-eval"))


def _arena_v01_panel(panel_dir: Path | None) -> Panel:
    """Arena-Hard v0.1's: the shared data's 12 published models, or a ``--panel DIR`` in that layout."""
    if panel_dir is None:
        root = find_shared("arena-hard")
        return arena_panel(
            root / ARENA_V01, root / ARENA_V01_LEADERBOARD, ARENA_V01_BASELINE, "arena-hard-v0.1"
        )
    boards = sorted(panel_dir.glob("*.csv"))
    if not boards:
        raise JuristError(f"--panel {panel_dir}: no leaderboard CSV (model, score) in it")
    return arena_panel(panel_dir, boards[0], ARENA_V01_BASELINE, "arena-hard-v0.1")


PANELS: Mapping[str, Callable[[Path | None], Panel]] = {
    "alpaca-eval": _alpaca_eval_panel,
    "arena-hard-v0.1": _arena_v01_panel,
}
"""Benchmark -> its panel from ``--panel DIR`` (None: the shared data's)."""
PANEL_BENCHES = tuple(PANELS)
"""The benchmarks with a replacement panel (:func:`load_panel`)."""


def load_panel(bench: str, panel_dir: Path | None) -> Panel:
    """The panel of ``bench``: ``panel_dir`` when given, else the shared data's."""
    load = PANELS.get(bench)
    if load is None:
        raise JuristError(
            f"--bench {bench}: no replacement panel (alpaca-eval and arena-hard-v0.1 have one; "
            "arena-hard-v2.0's published judgments are not stored)"
        )
    return load(panel_dir)
