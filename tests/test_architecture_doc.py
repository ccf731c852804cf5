"""docs/architecture.md and docs/contributing.md kept true to the code, cheaply: every package has its
paragraph, every module path the docs name exists, and the layering table is the one tests/test_layering.py
enforces. A doc that drifts from the house misleads the next contributor more than no doc would.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_layering import ALLOWED

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "jurist"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
CONTRIBUTING = ROOT / "docs" / "contributing.md"

PARAGRAPH = re.compile(r"^\*\*`([a-z_]+)/`")
"""A package's paragraph opens with its name in bold: **`engine/` — ...**."""
BACKTICKED = re.compile(r"`([^`\s]+)`")
TEST_NAME = re.compile(r"^(tests/[\w/]+\.py)(?:::(\w+))?$")
TABLE_ROW = re.compile(r"^\| \d+ \| `([\w_]+)` \| (.*) \|$")


def _packages() -> list[str]:
    return sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file())


def _module_exists(name: str, package: str | None) -> bool:
    """``name`` (``pkg/module.py``, ``module.py``, ``src/...``, ``tests/...``) read from the repository, from
    src/jurist, or, inside a package's paragraph, from that package (a bare name anywhere below it)."""
    bases = [ROOT, SRC]
    if package is not None:
        bases.append(SRC / package)
    if any((base / name).is_file() for base in bases):
        return True
    return "/" not in name and package is not None and any((SRC / package).rglob(name))


def _named_paths(doc: Path) -> list[tuple[int, str, str | None]]:
    """Each backticked ``*.py`` path of ``doc`` with its line and the package paragraph it stands in."""
    found: list[tuple[int, str, str | None]] = []
    package: str | None = None
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        opening = PARAGRAPH.match(line)
        if opening:
            package = opening.group(1)
        elif line.startswith("#"):
            package = None
        for token in BACKTICKED.findall(line):
            path = token.split("::")[0].rstrip(",.;:")
            if path.endswith(".py") and "<" not in path and "*" not in path:
                found.append((number, token, package))
    return found


def test_every_package_has_its_paragraph() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8").splitlines()
    described = {m.group(1) for line in text if (m := PARAGRAPH.match(line))}
    missing = [package for package in _packages() if package not in described]
    assert not missing, f"{ARCHITECTURE.name}: no **`PKG/`** paragraph for {missing}"


def test_every_subpackage_is_named() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    subpackages = sorted(p.parent.relative_to(SRC) for p in SRC.glob("*/*/__init__.py"))
    missing = [str(sub) for sub in subpackages if f"`{sub.name}/`" not in text and f"`{sub}/`" not in text]
    assert not missing, f"{ARCHITECTURE.name}: subpackages never named: {missing}"


@pytest.mark.parametrize("doc", [ARCHITECTURE, CONTRIBUTING], ids=lambda doc: doc.name)
def test_every_module_path_named_exists(doc: Path) -> None:
    wrong: list[str] = []
    for number, token, package in _named_paths(doc):
        path = token.split("::")[0].rstrip(",.;:")
        if not _module_exists(path, package):
            wrong.append(f"{doc.name}:{number}: `{token}` (paragraph {package or '-'}) does not exist")
            continue
        test = TEST_NAME.match(token)
        if test and test.group(2):
            body = (ROOT / test.group(1)).read_text(encoding="utf-8")
            if not re.search(rf"^(async )?def {test.group(2)}\(", body, re.MULTILINE):
                wrong.append(f"{doc.name}:{number}: `{token}`: no such test")
    assert not wrong, "\n".join(wrong)


def test_the_layering_table_is_the_enforced_one() -> None:
    rows: dict[str, set[str]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = TABLE_ROW.match(line)
        if row:
            rows[row.group(1)] = set(BACKTICKED.findall(row.group(2)))
    assert rows == ALLOWED, "docs/architecture.md's layering table is not tests/test_layering.py's ALLOWED"
