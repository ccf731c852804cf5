"""Entry points of installed packages: how a pip-installed plugin adds benchmarks (``jurist.benchmarks``),
judge kinds (``jurist.judge_kinds``) and scoring families (``jurist.families``) without an edit to jurist.

A group is read (:mod:`importlib.metadata`: package metadata files only, no plugin code) the first time a
registry is asked for a name it does not build in, or for a list; never at start-up, so ``jurist --help``
costs no more. A plugin's code is imported only when one of its names is used. Whatever goes wrong in it is
said in one line naming the distribution and the entry point (:meth:`Plugin.failure`), never a traceback.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint  # imported when a group is read, never at start


@dataclass(frozen=True)
class Plugin:
    """One entry point of one installed distribution."""

    entry_point: EntryPoint = field(compare=False)
    distribution: str | None
    """The distribution's name as its metadata spells it; None when importlib could not say."""
    version: str | None

    @property
    def name(self) -> str:
        return self.entry_point.name

    @property
    def provider(self) -> str:
        """``jurist-example-plugin 0.1.0``: the package ``pip`` installed, as ``jurist list`` shows it."""
        if self.distribution is None:
            return "an unknown distribution"
        return f"{self.distribution} {self.version}" if self.version else self.distribution

    @property
    def where(self) -> str:
        """The entry point as its package declares it, and the package."""
        point = self.entry_point
        return f"entry point {point.name} = {point.value} [{point.group}] of {self.provider}"

    def failure(self, doing: str, error: BaseException) -> JuristError:
        """One line for an error raised by the plugin's own code while ``doing`` something."""
        text = str(error).strip().splitlines()
        detail = f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
        return JuristError(f"plugin {self.where}: {doing} failed ({detail})")

    def load(self) -> Any:
        """The object the entry point names, imported now; a JuristError (one line) if that fails."""
        try:
            return self.entry_point.load()
        except Exception as exc:  # anything a plugin's import raises is its own fault: said in one line
            raise self.failure("loading", exc) from None


def _name(dist: Distribution) -> str | None:
    try:
        name = dist.metadata["Name"]
    except (KeyError, OSError):
        return None
    return str(name) if name else None


@functools.cache
def plugins(group: str) -> Mapping[str, Plugin]:
    """Entry-point name -> its plugin, for every installed distribution declaring ``group``; where two
    distributions of one name are on ``sys.path``, or two declare one entry-point name, the first is used
    (as Python would import it). A distribution whose entry points cannot be read is left out, said in one
    logged line naming it."""
    from importlib.metadata import distributions

    found: dict[str, Plugin] = {}
    seen: set[str] = set()
    for dist in distributions():
        name = _name(dist)
        key = re.sub(r"[-_.]+", "-", name).lower() if name else None
        if key is not None and key in seen:
            continue
        if key is not None:
            seen.add(key)
        try:
            points = [point for point in dist.entry_points if point.group == group]
        except Exception as exc:  # a malformed entry_points.txt: that package's fault, not the others'
            logging.getLogger(__name__).warning(
                "the entry points of %s cannot be read (%s: %s); its plugins are left out",
                name or "a distribution without a name",
                type(exc).__name__,
                exc,
            )
            continue
        for point in points:
            found.setdefault(point.name, Plugin(point, name, getattr(dist, "version", None)))
    return MappingProxyType(found)


def plugin_named(group: str, name: str) -> Plugin | None:
    """The plugin of ``group`` called ``name``; None when no installed package declares it."""
    return plugins(group).get(name)


def forget_plugins() -> None:
    """Read the entry points again at next use (after a package was installed in this process: tests)."""
    plugins.cache_clear()
