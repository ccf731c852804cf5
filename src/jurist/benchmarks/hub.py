"""Hub datasets at a pinned revision, and whether the Hugging Face hub can be reached, asked once and
quickly before a hub loader starts.

``huggingface_hub`` retries a refused connection for about 25 s, logging a line per try, before it says
that it is offline; a benchmark that cannot get its data should say so at once, in one line that names
the dataset and the local way to provide it. So a loader first asks :func:`unreachable_reason`:
``HF_HUB_OFFLINE`` set, or no TCP connection to the hub's host (``HF_ENDPOINT``, else huggingface.co; the
proxy instead, where one is configured) within a few seconds. While it does download, the hub's retry
lines are kept out of the output (:func:`quiet_hub_logs`); its final error is reported in the one line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from jurist.errors import JuristError

ENDPOINT_ENV = "HF_ENDPOINT"
OFFLINE_ENV = "HF_HUB_OFFLINE"
DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_SECONDS = 3.0
"""How long the connection probe waits (name lookup included) before the hub counts as unreachable."""
_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_endpoint() -> str:
    return os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT


def _target(endpoint: str) -> tuple[str, int]:
    """The host and port a request to ``endpoint`` first connects to (its proxy, if one applies)."""
    parts = urlsplit(endpoint)
    scheme = parts.scheme or "https"
    host = parts.hostname or ""
    port = parts.port or (443 if scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        proxied = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        return proxied.hostname or host, proxied.port or 80
    return host, port


def unreachable_reason(endpoint: str | None = None, seconds: float = PROBE_SECONDS) -> str | None:
    """Why the hub cannot be reached now (a few words), or None when a connection to it opens."""
    if os.environ.get(OFFLINE_ENV, "").strip().upper() in _TRUE:
        return f"{OFFLINE_ENV} is set"
    host, port = _target(endpoint or hub_endpoint())
    if not host:
        return f"{ENDPOINT_ENV}={endpoint or hub_endpoint()!r} names no host"
    outcome: list[str | None] = []

    def probe() -> None:  # in a thread: a name lookup has no timeout of its own
        try:
            with socket.create_connection((host, port), timeout=seconds):
                outcome.append(None)
        except OSError as exc:
            outcome.append(f"cannot connect to {host}:{port}: {exc.strerror or exc}")

    thread = threading.Thread(target=probe, name="jurist-hub-probe", daemon=True)
    thread.start()
    thread.join(seconds + 0.5)
    if not outcome:
        return f"no answer from {host}:{port} within {seconds:g} s"
    return outcome[0]


@contextlib.contextmanager
def quiet_hub_logs() -> Iterator[None]:
    """The hub client's warnings (one per retry) kept out of the output while it works."""
    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def cached_snapshot(repo_id: str, revision: str, pattern: str, cache: Path) -> list[Path] | None:
    """The files matching ``pattern`` (top level or ``data/``) of a dataset snapshot in the hub cache
    ``cache``, if there: files only, read without the hub client (``jurist list``)."""
    snapshot = cache / f"datasets--{repo_id.replace('/', '--')}" / "snapshots" / revision
    files = sorted((snapshot / "data").glob(pattern)) or sorted(snapshot.glob(pattern))
    return files or None


def snapshot_files(
    name: str, repo_id: str, revision: str, pattern: str, cache: Path, hint: str
) -> list[Path]:
    """The ``pattern`` files of dataset ``repo_id`` at ``revision``, downloaded once into ``cache``.

    When the hub cannot be reached (:func:`unreachable_reason`) only the hub cache is read
    (``local_files_only``), and without the snapshot there one line says so at once: no retries, no
    waiting. ``name``: the benchmark, first in every message; ``hint``: how to provide the files locally."""
    where = f"hf://datasets/{repo_id}@{revision[:12]}"
    why = unreachable_reason()
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise JuristError(
            f"{name}: downloading {where} needs huggingface_hub (pip install 'jurist[arena]'), or {hint}"
        ) from None
    if why is None:
        print(f"jurist: fetching {where} (kept in the jurist cache)", file=sys.stderr)
    try:
        with quiet_hub_logs():
            folder = snapshot_download(
                repo_id=repo_id,
                repo_type="dataset",
                revision=revision,
                allow_patterns=pattern,
                cache_dir=str(cache),
                local_files_only=why is not None,
            )
    except Exception as exc:  # the Hub client raises many types (offline, gated, not found)
        if why is not None:
            raise JuristError(
                f"{name}: the Hugging Face hub is unreachable ({why}) and {where} is not in the hub cache "
                f"({cache}); {hint}"
            ) from None
        reason = " ".join(str(exc).split())[:300]
        raise JuristError(f"{name}: could not fetch {where} ({reason}); {hint}") from None
    root = Path(folder)
    files = sorted((root / "data").glob(pattern)) or sorted(root.glob(pattern))
    if not files:
        raise JuristError(f"{name}: the snapshot at {root} has no {pattern} files")
    return files
