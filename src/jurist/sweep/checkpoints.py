"""Which checkpoints a sweep evaluates: ``--checkpoints`` as a glob, a comma-separated list or a directory.

A directory of a training run holds one child per saved step (``step_100``, ``checkpoint-500``,
``global_step1000``, ``iter_0000100``, as files such as ``step_100.gguf`` or as model folders); a path that
is itself a model (a folder with ``config.json``, a ``.gguf`` file) is one checkpoint. A checkpoint's name
is its alias in every run directory and the sweep's tables, so names must be unique; its step (the x axis
of the training curves) is the last integer in its name.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jurist.errors import JuristError

ServeKindName = Literal["llama.cpp", "vllm"]

STEP_CHILD = re.compile(r"^(step|checkpoint|global_step|iter)[_-]?\d+", re.IGNORECASE)
_GLOB_CHARS = re.compile(r"[*?\[]")
_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of the sweep: its alias, its training step, and the weights a server loads."""

    name: str
    step: int
    path: Path

    @property
    def default_kind(self) -> ServeKindName:
        """llama.cpp for a GGUF file, vLLM for anything else (a model folder or a hub id)."""
        return "llama.cpp" if self.path.suffix.lower() == ".gguf" else "vllm"


def step_of(name: str) -> int | None:
    """The last integer in a checkpoint's name (``step_100``, ``checkpoint-100``, ``global_step100``)."""
    numbers = re.findall(r"\d+", name)
    return int(numbers[-1]) if numbers else None


def _name_of(path: Path) -> str:
    return path.stem if path.suffix.lower() == ".gguf" else path.name


def _weights(path: Path) -> Path:
    """The file a server loads for ``path``: a step folder holding one GGUF file and no ``config.json``
    (a llama.cpp export) is that file; anything else is served as it is."""
    if path.is_dir() and not (path / "config.json").is_file():
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return ggufs[0]
    return path


def _children(directory: Path) -> list[Path]:
    """A training run's checkpoints: the step-named children of ``directory`` (files or folders); a
    folder with none that is a model itself (``config.json``, or one GGUF file) is one checkpoint."""
    found = [child for child in directory.iterdir() if STEP_CHILD.match(child.name)]
    if found:
        return found
    if (directory / "config.json").is_file() or _weights(directory) != directory:
        return [directory]
    raise JuristError(
        f"--checkpoints: {directory} has no step_* / checkpoint-* / global_step* / iter_* children "
        "(name a glob or a comma-separated list instead)"
    )


def _expand(part: str) -> list[Path]:
    if _GLOB_CHARS.search(part):
        matches = [Path(match) for match in glob.glob(str(Path(part).expanduser()))]
        if not matches:
            raise JuristError(f"--checkpoints: {part!r} matches nothing")
        return matches
    return [Path(part).expanduser()]


def _ordered(paths: list[Path]) -> list[Path]:
    return sorted(paths, key=lambda p: (step_of(_name_of(p)) is None, step_of(_name_of(p)) or 0, p.name))


def find_checkpoints(text: str) -> list[Checkpoint]:
    """The checkpoints ``--checkpoints`` names, in step order (a list keeps the order it was given in).

    A path in a list that does not exist is still a checkpoint: it fails when its server starts and is
    reported with the others, so one bad path does not stop a sweep. A glob that matches nothing, or a
    lone path that does not exist, is a usage error.
    """
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise JuristError("--checkpoints: name a directory, a glob or a comma-separated list of paths")
    if len(parts) == 1 and not _GLOB_CHARS.search(parts[0]):
        single = Path(parts[0]).expanduser()
        if not single.exists():
            raise JuristError(f"--checkpoints: {single} does not exist")
        paths = _ordered(_children(single)) if single.is_dir() else [single]
    elif len(parts) == 1:
        paths = _ordered(_expand(parts[0]))
    else:
        paths = [path for part in parts for path in _expand(part)]
    return named_checkpoints(paths)


def named_checkpoints(paths: Sequence[Path]) -> list[Checkpoint]:
    """Checkpoints for ``paths`` in that order: names from the paths, steps from the names (else the
    position in the list); two paths with one name are refused, since the name is the run's alias."""
    checkpoints: list[Checkpoint] = []
    seen: dict[str, Path] = {}
    for index, path in enumerate(paths):
        name = _name_of(path)
        if not _NAME_OK.match(name):
            raise JuristError(
                f"--checkpoints: {path}: the name {name!r} cannot be an alias (letters, digits, . _ + -)"
            )
        if name in seen:
            raise JuristError(f"--checkpoints: {seen[name]} and {path} have the same name {name!r}")
        seen[name] = path
        step = step_of(name)
        checkpoints.append(Checkpoint(name, index if step is None else step, _weights(path.absolute())))
    return checkpoints
