"""Which family scores a run, and where each family's code is.

The built-in families are imported only when a run of theirs is scored; a family from a pip-installed
package is an entry point of group ``jurist.families`` (a class implementing :class:`jurist.families.door.
Family`), loaded only when a name is not built in or when every family is listed; :func:`register` adds
one in-process (tests, notebooks). A run names its family in run.json's ``score_family``; a run.json that
does not is refused. Without any run.json the path is a peer tool's output: an arena battles file or a
JudgeArena folder (placement), else a file or folder of jurist-schema battles (pairwise).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jurist.errors import JuristError
from jurist.plugins import plugins

if TYPE_CHECKING:
    from jurist.benchmarks import Benchmark
    from jurist.families.door import Family

FamilyName = str
"""A family's name as run.json's ``score_family`` records it (built in, or a plugin's own)."""
BuiltinFamily = Literal["pairwise", "judge-accuracy", "rules", "rubric", "placement"]

ENTRY_POINT_GROUP = "jurist.families"

_BUILT_IN: Mapping[str, tuple[str, str]] = {
    "pairwise": ("jurist.families.pairwise.family", "PairwiseFamily"),
    "judge-accuracy": ("jurist.families.judge_accuracy.family", "JudgeAccuracyFamily"),
    "rules": ("jurist.families.rules.family", "RulesFamily"),
    "rubric": ("jurist.families.rubric.family", "RubricFamily"),
    "placement": ("jurist.families.placement.family", "PlacementFamily"),
}
"""Family name -> (module, class) implementing it, imported only when a run of that family is scored."""

FAMILY_OF_METRIC: Mapping[str, FamilyName] = {
    "winrate": "pairwise",
    "judge-accuracy": "judge-accuracy",
    "instruction-following": "rules",
    "rubric": "rubric",
    "arena-elo": "placement",
    "arena-calibration": "placement",
}
"""A built-in benchmark metric (:data:`jurist.benchmarks.base.Metric`) -> the family that scores it; a
plugin family names its own metrics (its class's ``metrics``)."""

_added: dict[str, type[Family]] = {}
"""Families added by :func:`register` or loaded from an entry point, by name."""
_entry_points_read = False


def register(family: type[Family]) -> None:
    """Add ``family`` under its ``name`` (a test's or a notebook's own family; a built-in name is refused)."""
    name = str(family.name)
    if name in _BUILT_IN:
        raise JuristError(f"family {name!r} is built in; a plugin family needs a name of its own")
    _added[name] = family


def unregister(name: str) -> None:
    """Forget an added family (a test cleaning up after :func:`register`)."""
    _added.pop(name, None)


def _read_entry_points() -> None:
    """Load every ``jurist.families`` entry point once (:mod:`jurist.plugins` says a broken one in a line)."""
    global _entry_points_read
    if _entry_points_read:
        return
    for point_name, plugin in plugins(ENTRY_POINT_GROUP).items():
        loaded = plugin.load()
        name = str(getattr(loaded, "name", point_name))
        if name not in _BUILT_IN:
            _added.setdefault(name, loaded)
    _entry_points_read = True


def family_names() -> tuple[FamilyName, ...]:
    """Every family: the built-in ones, then the added and installed ones."""
    _read_entry_points()
    return (*_BUILT_IN, *sorted(set(_added) - set(_BUILT_IN)))


def _family_class(name: FamilyName) -> type[Family] | None:
    home = _BUILT_IN.get(name)
    if home is not None:
        cls: type[Family] = getattr(importlib.import_module(home[0]), home[1])
        return cls
    if name not in _added:
        _read_entry_points()
    return _added.get(name)


_instances: dict[str, Family] = {}
"""One instance per family class: a family holds no state, so every caller in a run (the end of the run,
its printing, ``show``, the browser, ``--tasks``) asks the same one."""


def score_family(name: FamilyName) -> Family:
    """The implementation of the family ``name``."""
    cls = _family_class(name)
    if cls is None:
        raise JuristError(f"no scoring family {name!r}; known: {', '.join(family_names())}")
    made = _instances.get(name)
    if made is None or type(made) is not cls:  # a re-registered test family replaces the one made
        made = _instances[name] = cls()
    return made


def scoring_modules(name: FamilyName) -> tuple[str, ...]:
    """What scoring a run of family ``name`` imports, as the family says (``scoring_modules``; none where
    it says nothing): a run imports them while it waits on its last replies (:mod:`jurist.run.ahead`)."""
    return tuple(getattr(score_family(name), "scoring_modules", ()))


def family_of_metrics(metrics: Iterable[str]) -> FamilyName:
    """The family of a benchmark's metrics (every benchmark reports one family's numbers)."""
    metrics = list(metrics)
    table = dict(FAMILY_OF_METRIC)
    if any(m not in table for m in metrics):  # a plugin benchmark's metric: its family's
        for name in family_names():
            cls = _family_class(name)
            table.update({m: name for m in getattr(cls, "metrics", ()) if m not in table})
    families = list(dict.fromkeys(table[m] for m in metrics if m in table))
    if len(families) != 1:
        raise JuristError(f"metrics {metrics}: no single scoring family ({families or 'none'})")
    return families[0]


def run_scoring_fields(bench: Benchmark, settings: Mapping[str, Any]) -> dict[str, Any]:
    """run.json's ``score_family`` and ``scoring`` for a run of ``bench`` with the command line's scoring
    ``settings``: the metrics, the settings, and the benchmark's own scoring (``official``: what a pairwise
    run reports unless the command line chooses a method), so ``jurist show`` scores as the run did."""
    official = bench.official_scoring
    return {
        "score_family": family_of_metrics(bench.metrics),
        "scoring": {
            "metrics": list(bench.metrics),
            **settings,
            "official": {
                "style_control": list(official.style_control),
                "style_categories": list(official.style_categories),
                "length_controlled": official.length_controlled,
                "categories": list(bench.score_categories),
            },
        },
    }


def family_of_run(path: Path, run_json: Mapping[str, Any] | None) -> FamilyName:
    """The family of the run at ``path``: run.json's ``score_family``; without a run.json (``run_json``
    None), a peer tool's output: an arena battles file or JudgeArena folder, else jurist-schema battles."""
    if run_json is None:
        from jurist.families.placement.fit import is_arena_run

        return "placement" if is_arena_run(path) else "pairwise"
    named = run_json.get("score_family")
    where = path / "run.json" if path.is_dir() else path
    if named is None:
        raise JuristError(
            f"{where}: no score_family: written by a jurist before families were recorded; run it again"
        )
    if not isinstance(named, str) or _family_class(named) is None:
        raise JuristError(f"{where}: score_family {named!r} is not one of {', '.join(family_names())}")
    return named
