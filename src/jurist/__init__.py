"""jurist: an LLM-as-a-judge evaluation harness."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__version__ = "0.1.0"


def lazy_face(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package face's ``__getattr__`` (PEP 562): each name listed in ``homes`` (name -> module of
    ``package``) is imported from its module on first use, so that importing one module of a package (or
    ``jurist --help``) does not load the rest of it."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return __getattr__
