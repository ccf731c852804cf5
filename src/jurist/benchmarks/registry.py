"""Benchmark names -> the modules that build them; a path to a question file still works.

Built-in benchmarks are imported only when named, so ``jurist --help`` (which names them all) does not load
their data code, nor even :mod:`jurist.benchmarks.base`. ``register`` adds a benchmark from outside the
package (a plugin, or a test) without touching the runner.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from jurist.errors import JuristError, did_you_mean

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


def benchmark_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_registered))


def _factory(name: str) -> BenchmarkFactory | None:
    if name in _registered:
        return _registered[name]
    module = _BUILTIN.get(name)
    if module is None:
        return None
    module, _, attribute = module.partition(":")  # one module may serve several names
    factory: BenchmarkFactory = getattr(importlib.import_module(module), attribute or "benchmark")
    return factory


def benchmark_card(name: str) -> BenchmarkCard | None:
    """What ``jurist list`` shows of ``name``: the card given to :func:`register`, else the
    ``catalog_card(name)`` of the module that builds it; None when it has none."""
    if name in _registered:
        return _registered_cards.get(name)
    module = _BUILTIN.get(name)
    if module is None:
        return None
    describe = getattr(importlib.import_module(module.partition(":")[0]), "catalog_card", None)
    card: BenchmarkCard | None = describe(name) if callable(describe) else None
    return card


def load_benchmark(name_or_path: str, options: BenchmarkOptions | None = None) -> Benchmark:
    """The benchmark called ``name_or_path``, or the Arena-Hard question file at that path."""
    from jurist.benchmarks.base import take_options

    options = options or {}
    factory = _factory(name_or_path)
    if factory is not None:
        return factory(options)
    path = Path(name_or_path)
    from jurist.benchmarks.lmarena_data import looks_like_arena_file

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
