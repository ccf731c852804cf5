"""Benchmark names -> the modules that build them; a path to a question file still works.

Built-in benchmarks are imported only when named, so ``jurist --help`` (which names them all) does not load
their data code, nor even :mod:`jurist.benchmarks.base`. An installed package adds benchmarks through the
``jurist.benchmarks`` entry-point group (:mod:`jurist.plugins`), read only for a name that is not built in
and for listing; ``register`` adds one at run time (a test) without touching the runner.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import JuristError, did_you_mean
from jurist.plugins import Plugin, plugin_named, plugins

if TYPE_CHECKING:
    from jurist.benchmarks.base import Benchmark, BenchmarkOptions
    from jurist.benchmarks.catalog import BenchmarkCard

BenchmarkFactory = Callable[["BenchmarkOptions"], "Benchmark"]
"""Builds a benchmark from its ``-B`` options (raising JuristError on an option it does not take)."""

_BUILTIN: dict[str, str] = {
    "starter": "jurist.benchmarks.starter",
    "judgebench": "jurist.benchmarks.judgebench",
    "ifeval": "jurist.benchmarks.ifeval",
    "ifbench": "jurist.benchmarks.ifbench",
    "healthbench": "jurist.benchmarks.healthbench",
    "writingbench": "jurist.benchmarks.writingbench",
    "alpaca-eval": "jurist.benchmarks.alpaca_eval",
    "arena-hard-v2.0": "jurist.benchmarks.arena_hard_named:benchmark_v2",
    "arena-hard-v0.1": "jurist.benchmarks.arena_hard_named:benchmark_v01",
    "arena-hard-local": "jurist.benchmarks.arena_hard_local",
    "lmarena-100k": "jurist.benchmarks.lmarena:benchmark_100k",
    "lmarena-140k": "jurist.benchmarks.lmarena:benchmark_140k",
}
ENTRY_POINTS = "jurist.benchmarks"
"""The entry-point group of installed packages' benchmarks: ``NAME = "module[:factory]"``, read as a built-in
is (the factory defaults to the module's ``benchmark``; ``catalog_card(name)`` beside it is its card)."""
_registered: dict[str, BenchmarkFactory] = {}
_registered_cards: dict[str, BenchmarkCard] = {}


def register(name: str, factory: BenchmarkFactory, card: BenchmarkCard | None = None) -> None:
    """Make ``jurist run --bench NAME`` build its benchmark with ``factory`` (``card``: what ``jurist list``
    shows of it)."""
    _registered[name] = factory
    if card is not None:
        _registered_cards[name] = card


def unregister(name: str) -> None:
    _registered.pop(name, None)
    _registered_cards.pop(name, None)


def benchmark_names(*, installed: bool = True) -> list[str]:
    """Every name ``--bench`` takes; ``installed=False`` leaves out the installed plugins' (no metadata
    read: the help text of every command is built at start-up)."""
    names = set(_BUILTIN) | set(_registered)
    if installed:
        names |= set(plugins(ENTRY_POINTS))
    return sorted(names)


def is_benchmark_name(name: str) -> bool:
    """Whether ``--bench name`` names a benchmark (built in, registered or a plugin's), not a file; a
    path with a directory part is answered without reading the installed packages' metadata (0.1-0.3 s
    of a run's start, before its first request)."""
    return name in _registered or _reference(name) is not None


def benchmark_provider(name: str) -> str | None:
    """The installed distribution that provides benchmark ``name`` (``jurist list``); None for jurist's
    own and for those registered at run time."""
    if name in _registered or name in _BUILTIN:
        return None
    plugin = plugin_named(ENTRY_POINTS, name)
    return None if plugin is None else plugin.provider


def _reference(name: str) -> tuple[str, str, Plugin | None] | None:
    """Where benchmark ``name`` is built: its module, the factory's name there (empty: ``benchmark``), and
    the plugin declaring it (None for a built-in, which is never looked up among the plugins)."""
    builtin = _BUILTIN.get(name)
    if builtin is not None:
        module, _, attribute = builtin.partition(":")  # one module may serve several names
        return module, attribute, None
    if _names_a_path(name):  # a question file: the installed packages' metadata is not read (0.3 s)
        return None
    plugin = plugin_named(ENTRY_POINTS, name)
    if plugin is None:
        return None
    return plugin.entry_point.module, plugin.entry_point.attr or "", plugin


def _names_a_path(name: str) -> bool:
    """An existing path written with a directory part: never looked up among the entry points, whose
    names are letters, digits, ``_``, ``.`` and ``-`` by the packaging spec's recommendation."""
    return any(sep and sep in name for sep in (os.sep, os.altsep)) and Path(name).exists()


def _module(module: str, plugin: Plugin | None) -> Any:
    if plugin is None:
        return importlib.import_module(module)
    try:
        return importlib.import_module(module)
    except Exception as exc:  # a plugin's import error is its own: one line, never a traceback
        raise plugin.failure("loading", exc) from None


def _factory(name: str) -> BenchmarkFactory | None:
    if name in _registered:
        return _registered[name]
    found = _reference(name)
    if found is None:
        return None
    module, attribute, plugin = found
    loaded = _module(module, plugin)
    if plugin is None:
        built: BenchmarkFactory = getattr(loaded, attribute or "benchmark")
        return built
    factory = getattr(loaded, attribute or "benchmark", None)
    if not callable(factory):
        raise JuristError(f"plugin {plugin.where}: {attribute or 'benchmark'!r} is not a benchmark factory")
    return _checked(factory, plugin)


def _checked(factory: Callable[..., Any], plugin: Plugin) -> BenchmarkFactory:
    """A plugin's factory whose own failures are one line naming the plugin (a JuristError it raises, on
    an option it does not take, passes as it is)."""
    from jurist.benchmarks.base import Benchmark

    def build(options: BenchmarkOptions) -> Benchmark:
        try:
            bench = factory(options)
        except JuristError:
            raise
        except Exception as exc:
            raise plugin.failure(f"building benchmark {plugin.name!r}", exc) from None
        if not isinstance(bench, Benchmark):
            raise JuristError(f"plugin {plugin.where}: returned {type(bench).__name__}, not a Benchmark")
        return bench

    return build


def benchmark_card(name: str) -> BenchmarkCard | None:
    """What ``jurist list`` shows of ``name``: the card given to :func:`register`, else the
    ``catalog_card(name)`` of the module that builds it; None when it has none."""
    if name in _registered:
        return _registered_cards.get(name)
    found = _reference(name)
    if found is None:
        return None
    module, _, plugin = found
    describe = getattr(_module(module, plugin), "catalog_card", None)
    if not callable(describe):
        return None
    if plugin is None:
        card: BenchmarkCard | None = describe(name)
        return card
    try:
        return describe(name)  # type: ignore[no-any-return]
    except Exception as exc:
        raise plugin.failure(f"describing benchmark {name!r}", exc) from None


def load_benchmark(name_or_path: str, options: BenchmarkOptions | None = None) -> Benchmark:
    """The benchmark called ``name_or_path``, or the Arena-Hard question file at that path."""
    from jurist.benchmarks.base import take_options

    options = options or {}
    factory = _factory(name_or_path)
    if factory is not None:
        return factory(options)
    path = Path(name_or_path)
    from jurist.benchmarks.sniff import looks_like_arena_file

    if looks_like_arena_file(path):  # human-voted arena battles: place a model among them
        from jurist.benchmarks.lmarena import benchmark_file

        return benchmark_file(path, options)
    if path.exists():
        from jurist.benchmarks.arena_hard import load_question_file

        take_options(f"question file {path}", options, {})
        return load_question_file(path)
    raise JuristError(
        f"--bench: {name_or_path!r} is neither a known benchmark"
        f"{did_you_mean(name_or_path, benchmark_names())} ({', '.join(benchmark_names())}) nor an existing "
        "question file"
    )
