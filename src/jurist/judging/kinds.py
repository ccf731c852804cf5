"""The registry of judge kinds: a name -> the factory that builds the kind serving one judge in one run.

A benchmark names its judge kind (``Benchmark.judge_kind``) and hands it its prompt as data
(:class:`JudgePromptSource`): the judge kind never reaches into a benchmark module. Built-in kinds are
imported only when named, so naming a kind costs nothing until a judge is built; ``register`` adds one from
outside the package (a plugin, or a test). Adding a judge kind = one module with a factory + one line in
:data:`_BUILTIN` (or one ``register`` call), which also names the module holding the kind's judge-card
probes: a dotted name the card (:mod:`jurist.audit`) imports when it probes, so this package never imports
the card. An installed package adds kinds through the ``jurist.judge_kinds`` entry-point group
(:data:`ENTRY_POINTS`, read only for a name that is not built in and for listing).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from jurist.errors import JuristError
from jurist.plugins import Plugin, plugin_named, plugins

if TYPE_CHECKING:
    from jurist.config import ModelSpec
    from jurist.judging.base import JudgeKind, OutcomeKind

JudgeKindName: TypeAlias = str
"""A name in this registry: ``pairwise`` (two swapped games), ``preference`` (AlpacaEval's one game read as
a soft preference), ``rubric`` (a grader per rubric item or criterion), or one registered."""


@dataclass(frozen=True)
class JudgePromptSource:
    """A benchmark's judge prompt as the benchmark hands it to its judge kind.

    The texts are upstream's, pinned and read at run time (never shipped): ``files`` finds them (in
    ``$JURIST_DATA_DIR``, the cache, else one download) only when a judge is built, so a run that judges
    nothing never needs them, and ``--judge-prompt FILE`` replaces them without their being looked for.
    ``presets`` (the reference grader's sampling) stay the benchmark's whatever texts are used."""

    origin: str
    """Where the texts come from (repository@commit), as the kind's errors about them name it."""
    files: Callable[[], Sequence[Path]] = field(compare=False)
    """The pinned files' local paths, in the order the kind reads them; raises one JuristError naming
    every missing file and the variable to set."""
    presets: Mapping[str, Any] = field(default_factory=dict)
    """The reference grader's sampling settings, sent where the judge's models-file entry leaves one unset
    (the rubric kind; the other kinds take theirs from the benchmark's reference judge)."""
    grader: Callable[[Path | None, JudgePromptSource], Any] | None = field(default=None, compare=False)
    """The rubric kind's grader where the benchmark brings its own (a plugin): called with
    ``--judge-prompt FILE`` (or None) and this source, it returns a
    :class:`~jurist.judging.rubric_prompts.RubricGrader`; None: the built-in grader the benchmark's
    ``judge_protocol`` names."""


@dataclass(frozen=True)
class JudgeKindSetup:
    """Everything a judge kind is built from, for one judge alias in one run."""

    spec: ModelSpec
    protocol: str | None
    """``--judge-protocol``; None: the benchmark's own (``default_protocol``)."""
    default_protocol: str
    prompt_file: Path | None
    """``--judge-prompt FILE``: replaces the prompt texts, keeps the protocol's reading."""
    prompt_source: JudgePromptSource | None
    """What the benchmark hands its judge kind (None: a kind whose prompts are its own)."""
    strong_weight: int = 3


JudgeKindFactory: TypeAlias = "Callable[[JudgeKindSetup], JudgeKind]"
"""Builds a judge kind (raising JuristError, one line, on a setup it cannot serve)."""

_BUILTIN: dict[str, tuple[str, str]] = {
    "pairwise": ("jurist.judging.pairwise", "jurist.audit.pairwise"),
    "preference": ("jurist.judging.alpaca_protocol", "jurist.audit.preference"),
    "rubric": ("jurist.judging.rubric", "jurist.audit.rubric"),
}
"""Kind name -> (module whose ``judge_kind`` factory builds it, module whose ``card_probes`` probes it)."""
ENTRY_POINTS = "jurist.judge_kinds"
"""The entry-point group of installed packages' judge kinds: ``NAME = "module"``, a module holding what a
built-in kind's holds: ``judge_kind(setup)``, ``OUTCOME``, and (optional) ``card_probes(kind, context)``
and ``LAYOUT`` (:data:`JudgmentLayout`)."""
JudgmentLayout: TypeAlias = Literal["games", "items", "fields"]
"""How the run browser (:mod:`jurist.view`) shows a kind's stored judgments, so it never tells kinds apart
by name. ``games``: position-swapped games (``games``, each with ``a``, ``b`` and the judge's ``label``),
graded game by game from the judged model's side; a re-judged answer's last record is its current one.
``items``: one graded entry per rubric item or criterion of one answer (``items``), the answer scored on
its suite's scale (``metric``); the per-item points the kind also writes are not listed a second time.
``fields``: the record's own fields, shown as they are and never filtered away; the default
(:data:`DEFAULT_LAYOUT`)."""
DEFAULT_LAYOUT: JudgmentLayout = "fields"
"""The layout of a kind that declares none, and of a kind name in no registry here (a run judged by a
plugin that is not installed where the run is viewed)."""
_BUILTIN_LAYOUTS: dict[str, JudgmentLayout] = {"pairwise": "games", "preference": "fields", "rubric": "items"}
_BUILTIN_OUTCOMES: dict[str, OutcomeKind] = {"pairwise": "battle", "preference": "battle", "rubric": "point"}
"""The built-in kinds' ``OUTCOME`` (tests/test_judging_registry.py checks each against its module):
a run's plan needs it before its first request; importing the kind's module for it cost that start 6 ms."""
_BUILTIN_OWN_SAMPLING = frozenset({"rubric"})
"""Built-in kinds that fill in the reference grader's sampling themselves (per request, from the grader
settings their prompt source carries) rather than through the judge's models-file spec."""
_registered: dict[str, JudgeKindFactory] = {}
_registered_outcomes: dict[str, OutcomeKind] = {}
_registered_probes: dict[str, str | None] = {}
_registered_layouts: dict[str, JudgmentLayout] = {}


def register(
    name: str,
    factory: JudgeKindFactory,
    *,
    outcome: OutcomeKind = "battle",
    probes: str | None = None,
    layout: JudgmentLayout = DEFAULT_LAYOUT,
) -> None:
    """Make ``Benchmark(judge_kind=name)`` judge with the kinds ``factory`` builds (a registered name
    comes before a built-in one of the same name); ``outcome``: what its judgments become; ``probes``: the
    dotted name of the module whose ``card_probes(kind, context)`` gives its judge-card probes
    (:mod:`jurist.audit.hooks`), imported only when a card is made; None: a card with no probes;
    ``layout``: how the browser shows its judgments (:data:`JudgmentLayout`)."""
    _registered[name] = factory
    _registered_outcomes[name] = outcome
    _registered_probes[name] = probes
    _registered_layouts[name] = layout


def unregister(name: str) -> None:
    _registered.pop(name, None)
    _registered_outcomes.pop(name, None)
    _registered_probes.pop(name, None)
    _registered_layouts.pop(name, None)


def judge_kind_probes(name: str) -> str | None:
    """The module holding the judge-card probes of kind ``name`` (not imported here, save a plugin's, whose
    module says whether it has any); None when the kind declares none or is in no registry."""
    if name in _registered:
        return _registered_probes.get(name)
    builtin = _BUILTIN.get(name)
    if builtin is not None:
        return builtin[1]
    plugin = plugin_named(ENTRY_POINTS, name)
    if plugin is None:
        return None
    return plugin.entry_point.module if callable(getattr(_kind_module(name), "card_probes", None)) else None


def judge_kind_outcome(name: str) -> OutcomeKind:
    """What the judgments of kind ``name`` become: ``battle`` (an answer judged against a baseline's, so
    the run needs baselines) or ``point`` (an answer graded on its own). Known before any judge is built:
    an answers-only run still generates the baselines a later judging needs."""
    if name in _registered_outcomes:
        return _registered_outcomes[name]
    if name in _BUILTIN_OUTCOMES:
        return _BUILTIN_OUTCOMES[name]
    outcome = getattr(_kind_module(name), "OUTCOME", None)
    if outcome not in ("battle", "point"):
        raise JuristError(f"plugin {_plugin(name).where}: OUTCOME is {outcome!r}, not 'battle' or 'point'")
    known: OutcomeKind = outcome
    return known


def judge_kind_layout(name: str) -> JudgmentLayout:
    """How the browser shows the judgments of kind ``name``: a registered or built-in kind's declared
    layout, an installed plugin's ``LAYOUT`` (its module is imported), else :data:`DEFAULT_LAYOUT`, also
    for a name no registry knows. A plugin's ``LAYOUT`` that is no layout is one line naming the plugin."""
    if name in _registered:
        return _registered_layouts.get(name, DEFAULT_LAYOUT)
    if name in _BUILTIN_LAYOUTS:
        return _BUILTIN_LAYOUTS[name]
    if plugin_named(ENTRY_POINTS, name) is None:
        return DEFAULT_LAYOUT
    layout = getattr(_kind_module(name), "LAYOUT", DEFAULT_LAYOUT)
    if layout not in get_args(JudgmentLayout):
        choices = ", ".join(repr(choice) for choice in get_args(JudgmentLayout))
        raise JuristError(f"plugin {_plugin(name).where}: LAYOUT is {layout!r}, not one of {choices}")
    known: JudgmentLayout = layout
    return known


def judge_kind_sends_own_sampling(name: str) -> bool:
    """Whether kind ``name`` sends the reference judge's sampling itself (a built-in rubric grader, or a
    plugin whose module sets ``OWN_SAMPLING = True``), so the run leaves its judges' specs as the models
    file has them; otherwise the run fills the reference's temperature and max_tokens in where unset."""
    if name in _BUILTIN_OWN_SAMPLING:
        return True
    if name in _registered or name in _BUILTIN or plugin_named(ENTRY_POINTS, name) is None:
        return False
    return getattr(_kind_module(name), "OWN_SAMPLING", False) is True


def judge_kind_names(*, installed: bool = True) -> list[str]:
    """Every kind name; ``installed=False`` leaves out the installed plugins' (no metadata read)."""
    names = set(_BUILTIN) | set(_registered)
    if installed:
        names |= set(plugins(ENTRY_POINTS))
    return sorted(names)


def judge_kind_provider(name: str) -> str | None:
    """The installed distribution that provides kind ``name``; None for jurist's own and registered ones."""
    if name in _registered or name in _BUILTIN:
        return None
    plugin = plugin_named(ENTRY_POINTS, name)
    return None if plugin is None else plugin.provider


def _factory(name: str) -> JudgeKindFactory:
    if name in _registered:
        return _registered[name]
    module = _kind_module(name)
    if name in _BUILTIN:
        built: JudgeKindFactory = module.judge_kind
        return built
    factory = getattr(module, "judge_kind", None)
    plugin = _plugin(name)
    if not callable(factory):
        raise JuristError(
            f"plugin {plugin.where}: no judge_kind(setup) factory in {plugin.entry_point.module}"
        )
    return _checked(factory, plugin)


def _checked(factory: Callable[[JudgeKindSetup], Any], plugin: Plugin) -> JudgeKindFactory:
    """A plugin's factory whose own failures are one line naming the plugin (its JuristErrors pass)."""

    def build(setup: JudgeKindSetup) -> JudgeKind:
        try:
            kind: JudgeKind = factory(setup)
        except JuristError:
            raise
        except Exception as exc:
            raise plugin.failure(f"building judge kind {plugin.name!r}", exc) from None
        return kind

    return build


def _plugin(name: str) -> Plugin:
    plugin = plugin_named(ENTRY_POINTS, name)
    if plugin is None:
        raise JuristError(f"unknown judge kind {name!r} (known: {', '.join(judge_kind_names())})")
    return plugin


def _kind_module(name: str) -> Any:
    """The module of built-in or installed kind ``name``, imported now; one line naming the known kinds
    if there is none, or naming the plugin if its module does not import."""
    builtin = _BUILTIN.get(name)
    if builtin is not None:
        return importlib.import_module(builtin[0])
    plugin = _plugin(name)
    try:
        return importlib.import_module(plugin.entry_point.module)
    except Exception as exc:  # a plugin's import error is its own: one line, never a traceback
        raise plugin.failure("loading", exc) from None


def judge_kind_for(
    name: JudgeKindName,
    *,
    protocol: str | None,
    default_protocol: str,
    spec: ModelSpec,
    prompt_file: Path | None = None,
    strong_weight: int = 3,
    prompt_source: JudgePromptSource | None = None,
) -> JudgeKind:
    """The judge kind ``name`` for the judge ``spec``: ``protocol`` (``--judge-protocol``) else the
    benchmark's ``default_protocol``; ``prompt_source``: the prompt the benchmark hands its kind;
    ``prompt_file`` (``--judge-prompt``) replaces its texts."""
    setup = JudgeKindSetup(spec, protocol, default_protocol, prompt_file, prompt_source, strong_weight)
    return _factory(name)(setup)
