"""Progress bars: one per model in generation, one per (judge, model) in judging, with failure counts.

Judging runs while answers are still written, so a judge bar's total grows as its answers arrive
(:meth:`StageProgress.grow`): it counts the judgments known so far, and is final once answering ends."""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # rich is imported only for bars that are shown (--no-progress, tests: never)
    from rich.console import Console
    from rich.progress import Progress, TaskID


@dataclass
class BarCounts:
    total: int = 0
    done: int = 0
    failed: int = 0
    invalid: int = 0
    tokens: int = 0


class StageProgress:
    """A set of bars for one stage; a no-op when disabled (tests, ``--no-progress``): it then only counts."""

    def __init__(self, console: Console | None, *, enabled: bool = True) -> None:
        """``console``: where the bars are drawn; None only when disabled (none is made for counting)."""
        if enabled and console is None:
            raise ValueError("progress bars need a console to draw on")
        self.enabled = enabled
        self._progress: Progress | None = _bars(console) if console is not None and enabled else None
        self._counts: dict[TaskID, BarCounts] = {}

    def add_bar(self, description: str, total: int) -> TaskID:
        if self._progress is None:
            task = cast("TaskID", len(self._counts))
        else:
            task = self._progress.add_task(description, total=total, status="")
        self._counts[task] = BarCounts(total=total)
        return task

    def grow(self, task: TaskID, more: int) -> None:
        """``more`` items for a bar whose work arrives while it runs (a judge bar during answering)."""
        counts = self._counts[task]
        counts.total += more
        if self._progress is not None:
            self._progress.update(task, total=counts.total)

    def advance(self, task: TaskID, *, failed: bool = False, invalid: bool = False, tokens: int = 0) -> None:
        counts = self._counts[task]
        counts.done += 1
        counts.failed += failed
        counts.invalid += invalid
        counts.tokens += tokens
        if self._progress is None:
            return
        status = f"failed {counts.failed}"
        if invalid or counts.invalid:
            status += f"  invalid {counts.invalid}"
        if counts.tokens:
            status += f"  tok {counts.tokens}"
        self._progress.update(task, advance=1, status=status)

    def counts(self, task: TaskID) -> BarCounts:
        return self._counts[task]

    def __enter__(self) -> StageProgress:
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)


def _bars(console: Console) -> Progress:
    """The live display: a bar per task, its done / total, failures and tokens, elapsed and left."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}", justify="left", markup=False),  # model names are not markup
        BarColumn(bar_width=30),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


class PrefixedProgress(StageProgress):
    """A view of a shared display whose bars carry a task's name (``jurist run --tasks``): several runs'
    stages draw into one live display, since a terminal holds only one."""

    def __init__(self, shared: StageProgress, prefix: str) -> None:  # noqa: D107 - no display of its own
        self.enabled = shared.enabled
        self._shared = shared
        self._prefix = prefix

    def add_bar(self, description: str, total: int) -> TaskID:
        return self._shared.add_bar(self._prefix + description, total)

    def grow(self, task: TaskID, more: int) -> None:
        self._shared.grow(task, more)

    def advance(self, task: TaskID, *, failed: bool = False, invalid: bool = False, tokens: int = 0) -> None:
        self._shared.advance(task, failed=failed, invalid=invalid, tokens=tokens)

    def counts(self, task: TaskID) -> BarCounts:
        return self._shared.counts(task)

    def __enter__(self) -> StageProgress:
        return self  # the shared display is already live

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None
