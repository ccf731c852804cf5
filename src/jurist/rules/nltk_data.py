"""NLTK resources found offline, or a clear message naming what to set.

nltk >= 3.9 reads the Punkt model from ``tokenizers/punkt_tab/<lang>/`` (shared/reference
eval-frameworks.md §3.3); the reference evaluators call ``nltk.download`` at import time, which hangs or
fails quietly offline. jurist never downloads at import: it looks on NLTK's own path (``$NLTK_DATA``...),
then in ``$JURIST_DATA_DIR/nltk_data`` and jurist's cache (``~/.cache/jurist/nltk_data``), and when a
resource is missing raises :class:`MissingNltkData` saying exactly what to set or run.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from types import ModuleType
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
    """The folders on NLTK's default search path (``data.path`` without ``$NLTK_DATA``) on POSIX."""
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


_PARTS = ("nltk", "nltk.tokenize")
"""The packages whose ``__init__`` :func:`nltk_part` leaves unrun until something asks them for a name."""

_nltk_lock = threading.RLock()


def nltk_part(name: str) -> ModuleType:
    """The NLTK module ``name`` (``nltk.tokenize.punkt``...), imported without running ``nltk``'s and
    ``nltk.tokenize``'s package ``__init__`` where nltk is not imported yet.

    Those two import every tokenizer, tagger, parser and classifier NLTK has, and scipy and
    scikit-learn with them (≈1,600 modules, ≈115 MB and seconds of CPU), of which the rule checks use
    four tokenizer modules. The modules themselves are NLTK's own, unchanged; the packages are made but
    left unrun, and the first name asked of one that is not a submodule (``nltk.pos_tag``, ``import
    nltk`` then ``nltk.word_tokenize`` elsewhere in the process) runs their ``__init__`` then
    (:func:`full_nltk`), so nothing sees a partial NLTK."""
    with _nltk_lock:
        if "nltk" not in sys.modules:
            for package in _PARTS:
                module = importlib.util.module_from_spec(_spec(package))
                module.__dict__["__getattr__"] = functools.partial(_completed_name, module)
                module.__dict__["_jurist_unrun"] = True
                sys.modules[package] = module
                if "." in package:
                    setattr(sys.modules[package.rpartition(".")[0]], package.rpartition(".")[2], module)
        return importlib.import_module(name)


def _spec(name: str) -> Any:
    """The import spec of one of NLTK's packages (its parent already in ``sys.modules``)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return spec


def _completed_name(module: ModuleType, name: str) -> Any:
    """A name asked of an unrun package: a submodule is left to the import system to import; anything
    else is read once the package's ``__init__`` has run."""
    locations = getattr(module, "__path__", [])
    submodule = any(Path(place, name).is_dir() or Path(place, f"{name}.py").is_file() for place in locations)
    dunder = name.startswith("__") and name not in ("__version__", "__all__")
    if dunder or submodule or not _unrun(module):
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
    full_nltk()
    return module.__dict__[name] if name in module.__dict__ else getattr(module, name)


def _unrun(module: ModuleType) -> bool:
    return bool(module.__dict__.get("_jurist_unrun"))


def full_nltk() -> ModuleType:
    """``nltk`` itself, its package ``__init__`` run (after :func:`nltk_part`, now): what the POS tagger
    and anything outside the rule checks needs."""
    with _nltk_lock:
        for package in reversed(_PARTS):  # nltk's __init__ imports * from an nltk.tokenize already run
            module = sys.modules.get(package)
            if module is not None and _unrun(module):
                del module.__dict__["__getattr__"], module.__dict__["_jurist_unrun"]
                module.__spec__.loader.exec_module(module)  # type: ignore[union-attr]
        return importlib.import_module("nltk")


@functools.cache
def require(resource: str) -> None:
    """Make sure ``resource`` (e.g. ``tokenizers/punkt_tab/english``) can be loaded, or raise."""
    data = nltk_part("nltk.data")
    for folder in jurist_nltk_dirs():
        if folder.is_dir() and str(folder) not in data.path:
            data.path.append(str(folder))
    try:
        data.find(resource)
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
    """``nltk.word_tokenize`` (Punkt sentences, then the improved Treebank word tokenizer on each, as
    nltk does it), found offline."""
    require(PUNKT_RESOURCE)
    words = _treebank()
    return [token for sentence in _punkt().tokenize(text) for token in words.tokenize(sentence)]


def regexp_tokenizer(pattern: str) -> Any:
    """NLTK's ``RegexpTokenizer(pattern)`` (its own regex engine and flags)."""
    return nltk_part("nltk.tokenize.regexp").RegexpTokenizer(pattern)


@functools.lru_cache(maxsize=1)
def _punkt() -> Any:
    """One loaded tokenizer: ``nltk.sent_tokenize`` rebuilds it on every call (≈1 ms each)."""
    return nltk_part("nltk.tokenize.punkt").PunktTokenizer("english")


@functools.lru_cache(maxsize=1)
def _treebank() -> Any:
    """The word tokenizer ``nltk.word_tokenize`` keeps (it holds no state between texts)."""
    return nltk_part("nltk.tokenize.destructive").NLTKWordTokenizer()
