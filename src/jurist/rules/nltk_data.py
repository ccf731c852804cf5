"""NLTK resources found offline, or a clear message naming what to set.

nltk >= 3.9 reads the Punkt model from ``tokenizers/punkt_tab/<lang>/`` (shared/reference
eval-frameworks.md §3.3); the reference evaluators call ``nltk.download`` at import time, which hangs or
fails quietly offline. jurist never downloads at import: it looks on NLTK's own path (``$NLTK_DATA``...),
then in ``$JURIST_DATA_DIR/nltk_data`` and jurist's cache (``~/.cache/jurist/nltk_data``), and when a
resource is missing raises :class:`MissingNltkData` saying exactly what to set or run.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from jurist.errors import JuristError


class MissingNltkData(JuristError):
    """An NLTK resource is not installed anywhere jurist looks."""


def jurist_nltk_dirs() -> list[Path]:
    """The folders jurist adds to NLTK's search path, in order (``$NLTK_DATA`` again, in case nltk was
    imported before it was set)."""
    dirs = [Path(part).expanduser() for part in os.environ.get("NLTK_DATA", "").split(os.pathsep) if part]
    data_dir = os.environ.get("JURIST_DATA_DIR")
    if data_dir:
        dirs.append(Path(data_dir).expanduser() / "nltk_data")
    cache = os.environ.get("JURIST_CACHE_DIR")
    if not cache:
        cache = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jurist")
    dirs.append(Path(cache).expanduser() / "nltk_data")
    return dirs


@functools.cache
def require(resource: str) -> None:
    """Make sure ``resource`` (e.g. ``tokenizers/punkt_tab/english``) can be loaded, or raise."""
    import nltk

    for folder in jurist_nltk_dirs():
        if folder.is_dir() and str(folder) not in nltk.data.path:
            nltk.data.path.append(str(folder))
    try:
        nltk.data.find(resource)
    except LookupError:
        package = resource.rstrip("/").split("/")[1]
        target = jurist_nltk_dirs()[-1]
        raise MissingNltkData(
            f"NLTK resource {resource!r} is not installed: set NLTK_DATA (or JURIST_DATA_DIR, whose "
            f"nltk_data/ folder is searched) to a folder holding it, or run "
            f"`python -m nltk.downloader -d {target} {package}` once with network"
        ) from None


def sent_tokenize(text: str) -> list[str]:
    """NLTK's English Punkt sentence split (what IFEval's ``count_sentences`` counts)."""
    require("tokenizers/punkt_tab/english/")
    return _punkt().tokenize(text)  # type: ignore[no-any-return]


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize`` (Punkt sentences, then the Treebank word tokenizer), found offline."""
    require("tokenizers/punkt_tab/english/")
    import nltk

    return nltk.word_tokenize(text)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1)
def _punkt() -> Any:
    """One loaded tokenizer: ``nltk.sent_tokenize`` rebuilds it on every call (≈1 ms each)."""
    from nltk.tokenize.punkt import PunktTokenizer

    return PunktTokenizer("english")
