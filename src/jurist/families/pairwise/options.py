"""What to score with (``ScoreOptions``) and what comes out (``Scored``), shared by show and run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Method = Literal["winrate", "bt"]
Resample = Literal["questions", "entries"]

STYLE_FEATURES = ("length", "markdown")


@dataclass(frozen=True)
class ScoreOptions:
    """How to score; ``None`` settings come from the run's run.json (else 100 rounds, seed 0, 90%)."""

    method: Method = "winrate"
    style_control: tuple[str, ...] = ()
    style_categories: tuple[str, ...] = ()
    """Categories style control is limited to (a benchmark's official scoring); empty: all."""
    categories: tuple[str, ...] = ()
    baselines: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    ensemble: bool = False
    length_controlled: bool = False
    instruction_difficulty: Path | None = None
    n_bootstrap: int | None = None
    seed: int | None = None
    ci_level: float | None = None
    resample: Resample = "questions"


@dataclass
class Scored:
    """Rows to print, notes for the reader, the settings used, the battles scored, the judges' sanity, and
    warnings (one line each) about numbers that should not be trusted as they stand."""

    rows: list[dict[str, Any]]
    notes: list[str]
    settings: dict[str, Any]
    battles: list[dict[str, Any]] = field(repr=False)
    sanity: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    """The bootstrap settings actually used (options over run.json over defaults)."""

    n_bootstrap: int
    seed: int
    ci_level: float
