"""Benchmark data at a pinned version: a local copy, jurist's cache, or one download, always sha256-checked.

Where a benchmark's data lives is the user's choice, what it contains is not: every pinned file has a
sha256, and a copy with other bytes is refused with a message saying which file and how to fix it. Order:
``$JURIST_DATA_DIR`` (or ``--data-dir``; ``JURIST_DATA_DIR=../shared/data`` works as it is), then the
cache (``$JURIST_CACHE_DIR/data``, ``~/.cache/jurist/data``), then the pinned upstream URL, downloaded once
into the cache. Nothing is downloaded at import time, and never when a local copy exists.
"""

from __future__ import annotations

import hashlib
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jurist.errors import JuristError
from jurist.store import DATA_DIR_ENV, cache_root, data_dirs

__all__ = [
    "DATA_DIR_ENV",
    "PinnedFile",
    "cache_dir",
    "data_dirs",
    "resolve",
    "resolve_files",
    "sha256_of",
]


@dataclass(frozen=True)
class PinnedFile:
    """One data file of one benchmark version, where to find it and what its bytes must hash to."""

    benchmark: str
    version: str
    local_paths: tuple[str, ...]
    """Paths relative to a data directory, first match wins (the shared-data layout first)."""
    url: str
    sha256: str
    origin: str
    """Repository and commit, for run.json and messages."""
    fallback_urls: tuple[str, ...] = ()
    """Tried in order when ``url`` cannot be fetched (a revision gone from a hub): the sha256 still decides
    which bytes are accepted, so a fallback can only ever deliver the pinned content."""

    @property
    def cache_name(self) -> str:
        return f"{self.benchmark}/{self.version}-{self.sha256[:12]}-{self.url.rsplit('/', 1)[-1]}"


def cache_dir() -> Path:
    """Where downloaded benchmark data is kept: ``data/`` of jurist's cache."""
    return cache_root() / "data"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def resolve(pinned: PinnedFile, *, download: bool = True) -> Path:
    """The local path of ``pinned``'s bytes, downloading them once if no copy exists."""
    for folder in data_dirs():
        for relative in pinned.local_paths:
            candidate = folder / relative
            if candidate.is_file():
                _require_hash(candidate, pinned, f"${DATA_DIR_ENV}")
                return candidate
    cached = cache_dir() / pinned.cache_name
    if cached.is_file() and sha256_of(cached) == pinned.sha256:
        return cached
    if not download:
        raise JuristError(f"{pinned.benchmark} data ({pinned.version}) is not in {DATA_DIR_ENV} or the cache")
    return _download(pinned, cached)


def resolve_files(benchmark: str, pins: Sequence[PinnedFile], hint: str = "") -> list[Path]:
    """Local paths of ``pins`` (data dir, cache, else one download each), or one error naming every file
    that is missing and the variable to set: nothing is half-found, and no request is sent before."""
    missing = [p for p in pins if not _have_copy(p)]
    for pinned in missing:
        print(f"jurist: downloading {pinned.origin} (first use; kept in the jurist cache)", file=sys.stderr)
        try:
            resolve(pinned)
        except JuristError as exc:
            files = ", ".join(p.local_paths[0] for p in missing)
            reason = str(exc).split("; ", 1)[0]  # what failed; the advice is given here, for every file
            raise JuristError(
                f"{benchmark} needs {files}: not in ${DATA_DIR_ENV} nor the cache, and downloading failed "
                f"({reason}); with no network, set {DATA_DIR_ENV} (or --data-dir) to a folder holding "
                f"{'it' if len(missing) == 1 else 'them'}"
                f"{hint}"
            ) from None
    return [resolve(p, download=False) for p in pins]


def _have_copy(pinned: PinnedFile) -> bool:
    """Whether a copy of ``pinned`` exists locally (its bytes are checked by :func:`resolve`)."""
    local = (folder / relative for folder in data_dirs() for relative in pinned.local_paths)
    return any(path.is_file() for path in local) or (cache_dir() / pinned.cache_name).is_file()


def _require_hash(path: Path, pinned: PinnedFile, where: str) -> None:
    digest = sha256_of(path)
    if digest != pinned.sha256:
        raise JuristError(
            f"{path}: sha256 {digest[:12]}… is not that of {pinned.benchmark} {pinned.version} "
            f"({pinned.origin}, {pinned.sha256[:12]}…); restore the pinned file, point {where} elsewhere, "
            "or pass your own file with -B file=PATH"
        )


def _progress(pinned: PinnedFile, done: int, total: int) -> None:
    """One line on a terminal, rewritten as the bytes come (nothing when stderr is a file or a pipe)."""
    if not sys.stderr.isatty():
        return
    size = f"{done / 1e6:.1f}" + (f" / {total / 1e6:.1f}" if total else "")
    end = "\n" if total and done >= total else ""
    print(f"\rjurist: downloading {pinned.benchmark} {pinned.version}: {size} MB", end=end, file=sys.stderr)


def _download(pinned: PinnedFile, target: Path) -> Path:
    """Fetch the pinned URL (or, failing that, a fallback) into the cache, keeping only the pinned bytes."""
    problems: list[str] = []
    for url in (pinned.url, *pinned.fallback_urls):
        try:
            data = _fetch(pinned, url)
        except OSError as exc:
            problems.append(f"{url} ({exc})")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != pinned.sha256:
            problems.append(
                f"{url}: its bytes have sha256 {digest[:12]}…, not the pinned {pinned.sha256[:12]}…"
            )
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
        return target
    raise JuristError(
        f"{pinned.benchmark} data could not be downloaded: {'; '.join(problems)}; with no network, "
        f"set {DATA_DIR_ENV} (or --data-dir) to a folder holding {pinned.local_paths[0]}"
    )


def _fetch(pinned: PinnedFile, url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - a pinned https URL
        total = int(response.headers.get("Content-Length") or 0)
        chunks: list[bytes] = []
        while chunk := response.read(1 << 20):
            chunks.append(chunk)
            _progress(pinned, sum(map(len, chunks)), total)
    return b"".join(chunks)
