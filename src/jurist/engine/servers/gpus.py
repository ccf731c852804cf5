"""Which GPUs jurist may hand to the servers it starts, and picking some of them for a count.

The ids are those this process sees: ``CUDA_VISIBLE_DEVICES`` when it is set (a Ray actor, a batch job or
the user narrowed the machine down), else every GPU ``nvidia-smi`` lists, else none. A server gets its ids
as its own ``CUDA_VISIBLE_DEVICES``, so the ids are handed on exactly as seen here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Collection
from dataclasses import dataclass

from jurist.errors import JuristError

_NVIDIA_SMI_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class VisibleGpus:
    """The GPU ids this process may use, and where they were learnt (for messages)."""

    ids: tuple[int, ...]
    source: str

    def describe(self) -> str:
        count = len(self.ids)
        if not count:
            return f"no GPU is visible ({self.source})"
        return f"{count} {'GPU is' if count == 1 else 'GPUs are'} visible ({self.source})"


def _from_environment(value: str) -> tuple[int, ...]:
    """CUDA's reading of ``CUDA_VISIBLE_DEVICES``: indices up to the first negative one ("" or -1: none)."""
    ids: list[int] = []
    for entry in (part.strip() for part in value.split(",")):
        if not entry:
            break
        try:
            index = int(entry)
        except ValueError:
            raise JuristError(
                f"CUDA_VISIBLE_DEVICES={value} names GPU {entry!r}: jurist places servers by GPU index, "
                "so give indices (nvidia-smi -L lists them)"
            ) from None
        if index < 0:
            break
        ids.append(index)
    return tuple(ids)


def _from_nvidia_smi(executable: str) -> tuple[int, ...] | None:
    """The indices nvidia-smi lists; None when it cannot tell (no driver, an error, a hang)."""
    try:
        done = subprocess.run(
            [executable, "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=_NVIDIA_SMI_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            return None
        return tuple(int(line) for line in done.stdout.split())
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def visible_gpus() -> VisibleGpus:
    """The GPUs this process may use: ``CUDA_VISIBLE_DEVICES``, else nvidia-smi's list, else none."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is not None:
        return VisibleGpus(_from_environment(value), f"CUDA_VISIBLE_DEVICES={value}")
    executable = shutil.which("nvidia-smi")
    if executable is None:
        return VisibleGpus((), "CUDA_VISIBLE_DEVICES is unset and there is no nvidia-smi")
    listed = _from_nvidia_smi(executable)
    if listed is None:
        return VisibleGpus((), "CUDA_VISIBLE_DEVICES is unset and nvidia-smi lists none")
    return VisibleGpus(listed, "nvidia-smi")


def pick_gpus(count: int, visible: VisibleGpus, busy: Collection[int] = ()) -> list[int]:
    """``count`` visible ids that no other server of this run holds (the lowest first)."""
    if count > len(visible.ids):
        raise JuristError(f"asks for {count} GPU(s) but {visible.describe()}")
    free = [gpu for gpu in visible.ids if gpu not in busy]
    if count > len(free):
        raise JuristError(
            f"asks for {count} GPU(s) but only {len(free)} of the {len(visible.ids)} visible are free "
            f"(GPUs {', '.join(str(g) for g in sorted(busy))} serve other models of this run)"
        )
    return free[:count]


def check_visible(ids: Collection[int], visible: VisibleGpus) -> None:
    """Explicit ids must be among the visible ones: else the server would escape this process's share."""
    missing = [gpu for gpu in ids if gpu not in visible.ids]
    if missing:
        shown = ", ".join(str(g) for g in missing)
        raise JuristError(f"asks for GPU {shown}, which is not visible here: {visible.describe()}")
