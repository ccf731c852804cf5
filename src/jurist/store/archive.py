"""A run directory as one archive and back: what carries a run's files to a Ray task on another node and
its results home (``jurist sweep --ray``, ``jurist run --ray``), locks left behind."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from jurist.errors import JuristError
from jurist.store.lock import LOCK_NAME


def pack(directory: Path) -> bytes | None:
    """``directory``'s files as a gzip'd tar (locks left out); None when there is no directory."""
    if not directory.is_dir():
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.name != LOCK_NAME:
                archive.add(path, arcname=path.relative_to(directory).as_posix(), recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, directory: Path) -> None:
    """The archive's files into ``directory``, each replacing its older copy whole (files the archive
    does not hold are kept); members that are not plain files inside the directory are refused."""
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=directory.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                name = PurePosixPath(member.name)
                if not member.isfile() or name.is_absolute() or ".." in name.parts:
                    raise JuristError(f"a Ray task sent back an unexpected archive member {member.name!r}")
                source = archive.extractfile(member)
                assert source is not None
                target = staging / Path(*name.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
        for path in sorted(staging.rglob("*")):
            if path.is_file():
                final = directory / path.relative_to(staging)
                final.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


__all__ = ["pack", "unpack"]
