"""The rules of the house, read from the code: which package may import which (docs/architecture.md).

Every ``jurist.*`` import counts, the lazy ones inside functions too: an import deferred for speed is still
a dependency. A package not in the table, or an import the table does not allow, fails with file:line.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "jurist"

# Who may import whom. Read a row as "X imports only these". Lower rows never import higher ones: the table
# is a stack (errors at the bottom, commands and cli at the top), so no cycle can form between packages.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "redact": set(),
    "ratings": set(),  # pure statistics: arrays in, numbers out
    "plugins": {"errors"},  # installed packages' entry points, read by the registries
    "tokens": {"errors"},
    "store": {"errors", "redact"},
    "config": {"errors", "redact"},  # the models file, a model's price
    "money": {"config", "errors", "store", "tokens"},  # the ledger, the budget, what a directory spent
    "rules": {"errors"},
    "engine": {"config", "errors", "money", "redact", "tokens"},  # the only code that talks to models
    "judging": {"config", "engine", "errors", "plugins", "rules", "store"},  # no benchmark module
    "benchmarks": {"config", "errors", "judging", "plugins", "ratings", "rules", "store", "tokens"},
    "report": {"benchmarks", "errors", "ratings"},  # tables any family prints through
    # what varies: one subpackage per scoring family behind one protocol, and the door at its top
    "families": {
        "benchmarks",
        "errors",
        "judging",
        "plugins",
        "ratings",
        "report",
        "rules",
        "store",
        "tokens",
    },
    "contracts": {"benchmarks", "families", "judging", "store"},  # the shared types, re-exported
    "audit": {"config", "engine", "errors", "judging", "ratings", "rules", "store"},  # the judge card
    "plots": {"errors"},
    "track": {"errors", "redact"},  # experiment trackers: points in, a tracker's client out
    "view": {
        "audit",
        "benchmarks",
        "errors",
        "judging",
        "rules",
        "families",
        "store",
    },  # audit, rules: the judge card's texts; judging: how each judge kind's judgments are shown
    "run": {
        "audit",
        "benchmarks",
        "config",
        "engine",
        "errors",
        "judging",
        "money",
        "redact",
        "report",
        "rules",
        "families",
        "store",
        "tokens",
        "track",
    },
    "sweep": {
        "benchmarks",
        "config",
        "engine",
        "errors",
        "plots",
        "ratings",
        "report",
        "run",
        "families",
        "store",
        "track",
    },
    "serve": {  # the reward server: run's plan and engine, behind HTTP
        "benchmarks",
        "engine",
        "errors",
        "judging",
        "redact",
        "rules",
        "run",
        "families",
        "store",
    },
    "decide": {
        "benchmarks",
        "errors",
        "ratings",
        "run",
        "families",
        "store",
        "sweep",
    },  # compare, gates, adaptive evaluation
    "interop": {"benchmarks", "errors", "judging", "ratings", "families", "store", "tokens"},
    # judge replacement: a retired judge's panel re-judged as a run, its statistics from ratings/
    "replace": {"benchmarks", "config", "engine", "errors", "ratings", "redact", "run", "families", "store"},
    "commands": {
        "audit",
        "benchmarks",
        "config",
        "decide",
        "engine",
        "errors",
        "interop",
        "judging",
        "plots",
        "money",
        "ratings",
        "redact",
        "replace",
        "report",
        "rules",
        "run",
        "families",
        "serve",
        "store",
        "sweep",
        "tokens",
        "track",
        "view",
    },
    "cli": {"commands", "config", "engine", "errors", "redact", "run", "track"},
    "__main__": {"cli"},
    "__init__": set(),
}


ROOT_NAMES = {"__version__", "lazy_face"}
"""What the root package ``jurist`` itself defines, which every package may use (a face's lazy loader)."""


def _owner(path: Path) -> str:
    parts = path.relative_to(SRC).parts
    return parts[0].removesuffix(".py")


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "jurist":
                yield from ((node.lineno, alias.name) for alias in node.names)
            elif node.module.startswith("jurist."):
                yield node.lineno, node.module.split(".")[1]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("jurist."):
                    yield node.lineno, alias.name.split(".")[1]


def test_the_table_is_a_stack_with_no_cycle() -> None:
    placed: list[str] = []
    left = dict(ALLOWED)
    while left:
        ready = [name for name, needs in left.items() if needs <= set(placed)]
        assert ready, f"the allowed imports form a cycle among {sorted(left)}"
        placed.extend(sorted(ready))
        for name in ready:
            del left[name]


def test_every_import_is_allowed() -> None:
    wrong: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        owner = _owner(path)
        assert owner in ALLOWED, f"{path.relative_to(SRC)}: package {owner!r} is not in the layering table"
        for line, target in _imports(path):
            if target != owner and target not in ALLOWED[owner] | ROOT_NAMES:
                wrong.append(f"{path.relative_to(SRC.parent)}:{line}: {owner} imports {target}")
    assert not wrong, "imports the house does not allow:\n" + "\n".join(wrong)


@pytest.mark.parametrize(("low", "high"), [("engine", "run"), ("ratings", "families"), ("store", "run")])
def test_low_floors_import_nothing_above_them(low: str, high: str) -> None:
    assert high not in ALLOWED[low]


def test_only_commands_import_interop_and_nothing_imports_commands() -> None:
    assert {name for name, needs in ALLOWED.items() if "interop" in needs} == {"commands"}
    assert {name for name, needs in ALLOWED.items() if "commands" in needs} == {"cli"}


def _packages() -> list[str]:
    return sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file())


def test_every_name_another_package_uses_is_on_its_face() -> None:
    """A package's ``__init__`` exports what other packages use of it: a name imported across packages
    that its face does not list is an internal someone came to depend on."""
    packages = set(_packages())
    missing: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        owner = _owner(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            parts = node.module.split(".")
            if parts[0] != "jurist" or len(parts) < 2 or parts[1] not in packages or parts[1] == owner:
                continue
            face = importlib.import_module(f"jurist.{parts[1]}")
            for alias in node.names:
                submodule = (SRC / parts[1] / "/".join([*parts[2:], alias.name])).with_suffix(".py")
                if alias.name not in getattr(face, "__all__", ()) and not submodule.is_file():
                    missing.append(
                        f"{path.relative_to(SRC.parent)}:{node.lineno}: jurist.{parts[1]} {alias.name}"
                    )
    assert not missing, "names used across packages but not on the package's face:\n" + "\n".join(missing)


def test_another_package_is_entered_only_through_its_face() -> None:
    """The face is the boundary: code imports another package's names from ``jurist.PACKAGE`` itself,
    never from one of its modules, so a package can move its modules without its users noticing (and an
    internal cannot be reached by accident). Inside a package, modules import each other freely."""
    packages = set(_packages())
    around: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        owner = _owner(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] == "jurist" and len(parts) > 2 and parts[1] in packages and parts[1] != owner:
                    around.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: {module}")
    assert not around, "imports that go around a package's face:\n" + "\n".join(around)


@pytest.mark.parametrize("package", _packages())
def test_a_face_gives_every_name_it_lists(package: str) -> None:
    """Each listed name resolves (the faces load lazily: a wrong home would fail only on first use)."""
    face = importlib.import_module(f"jurist.{package}")
    for name in getattr(face, "__all__", ()):
        assert getattr(face, name) is not None, f"jurist.{package}.{name}"
