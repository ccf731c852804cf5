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
import sys
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


PUNKT_RESOURCE = "tokenizers/punkt_tab/english/"
"""Punkt's English model: IFEval's and IFBench's sentence and word counts."""
STOPWORDS_RESOURCE = "corpora/stopwords/english"
"""NLTK's English stop-word list: IFBench's ``ratio:stop_words``."""
TAGGER_RESOURCE = "taggers/averaged_perceptron_tagger_eng/"
"""The averaged perceptron POS tagger: IFBench's ``words:start_verb``."""


def _standard_dirs() -> list[Path]:
    """The folders on NLTK's default search path (``nltk.data.path`` without ``$NLTK_DATA``) on POSIX."""
    prefix = Path(sys.prefix)
    system = ("/usr/share", "/usr/local/share", "/usr/lib", "/usr/local/lib")
    return [
        Path.home() / "nltk_data",
        *(prefix / sub / "nltk_data" if sub else prefix / "nltk_data" for sub in ("", "share", "lib")),
        *(Path(folder) / "nltk_data" for folder in system),
    ]


def installed_in(resource: str) -> Path | None:
    """The folder holding ``resource`` (unpacked, or its package's ``.zip`` as NLTK also reads), looked for
    where :func:`require` looks and on NLTK's default path, without importing nltk (seconds of CPU): what
    ``jurist list`` shows. A run still asks NLTK itself."""
    kind, _, rest = resource.strip("/").partition("/")
    package = rest.split("/", 1)[0]
    for folder in [*jurist_nltk_dirs(), *_standard_dirs()]:
        if (folder / resource.strip("/")).exists() or (folder / kind / f"{package}.zip").is_file():
            return folder
    return None


def download_hint(*resources: str) -> str:
    """The command that installs ``resources`` where jurist looks (its cache's ``nltk_data``)."""
    packages = " ".join(dict.fromkeys(r.strip("/").split("/")[1] for r in resources))
    return f"`python -m nltk.downloader -d {jurist_nltk_dirs()[-1]} {packages}` once with network"


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
        raise MissingNltkData(
            f"NLTK resource {resource!r} is not installed: set NLTK_DATA (or JURIST_DATA_DIR, whose "
            f"nltk_data/ folder is searched) to a folder holding it, or run {download_hint(resource)}"
        ) from None


def require_installed(resource: str) -> None:
    """:func:`require`, answered without importing nltk (seconds of CPU) where ``resource`` lies unpacked
    in a folder NLTK searches: a pre-flight check. Anything else (a ``.zip``, nothing found) is asked of
    NLTK itself, so the answer is always NLTK's."""
    name = resource.strip("/")
    if any((folder / name).exists() for folder in [*jurist_nltk_dirs(), *_standard_dirs()]):
        return
    require(resource)


def sent_tokenize(text: str) -> list[str]:
    """NLTK's English Punkt sentence split (what IFEval's ``count_sentences`` counts)."""
    require(PUNKT_RESOURCE)
    return _punkt().tokenize(text)  # type: ignore[no-any-return]


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize`` (Punkt sentences, then the Treebank word tokenizer), found offline."""
    require(PUNKT_RESOURCE)
    import nltk

    return nltk.word_tokenize(text)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1)
def _punkt() -> Any:
    """One loaded tokenizer: ``nltk.sent_tokenize`` rebuilds it on every call (≈1 ms each)."""
    from nltk.tokenize.punkt import PunktTokenizer

    return PunktTokenizer("english")
