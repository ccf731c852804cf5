"""A build backend (PEP 517) with no requirements, so ``pip install --no-build-isolation`` works offline in
any environment, even one without setuptools or wheel (jurist's own test installs this package that way).

It packs what a plain pure-Python package needs and nothing more: every file under ``src/<package>/``, the
metadata from ``pyproject.toml`` (name, version, summary, requires-python, dependencies) and its entry
points. A package of your own may as well use setuptools, hatchling or flit: jurist reads only the
installed metadata, whichever tool wrote it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
TAG = "py3-none-any"


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project


def _metadata(project: dict[str, Any]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _entry_points(project: dict[str, Any]) -> str:
    sections = []
    for group, points in project.get("entry-points", {}).items():
        body = "".join(f"{name} = {value}\n" for name, value in points.items())
        sections.append(f"[{group}]\n{body}")
    return "\n".join(sections)


def _stem(project: dict[str, Any]) -> str:
    return f"{project['name'].replace('-', '_')}-{project['version']}"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info(project: dict[str, Any]) -> dict[str, bytes]:
    files = {
        "METADATA": _metadata(project),
        "WHEEL": f"Wheel-Version: 1.0\nGenerator: plain_wheel\nRoot-Is-Purelib: true\nTag: {TAG}\n",
        "entry_points.txt": _entry_points(project),
    }
    return {name: text.encode() for name, text in files.items()}


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: Any = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Any = None) -> str:
    project = _project()
    folder = Path(metadata_directory) / f"{_stem(project)}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info(project).items():
        (folder / name).write_bytes(data)
    return folder.name


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    project = _project()
    stem = _stem(project)
    entries = {
        path.relative_to(ROOT / "src").as_posix(): path.read_bytes()
        for path in sorted((ROOT / "src").rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    entries |= {f"{stem}.dist-info/{name}": data for name, data in _dist_info(project).items()}
    record = [_record_line(name, data) for name, data in entries.items()]
    record.append(f"{stem}.dist-info/RECORD,,")
    entries[f"{stem}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{stem}-{TAG}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return wheel


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    stem = _stem(_project())
    name = f"{stem}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as archive:
        for path in sorted(ROOT.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                data = path.read_bytes()
                info = tarfile.TarInfo(f"{stem}/{path.relative_to(ROOT).as_posix()}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return name
