"""The request cache: successful completions on disk, shared by every stage, judge, run and process.

One sqlite file (``$JURIST_CACHE_DIR/requests.sqlite``, else ``~/.cache/jurist/requests.sqlite``) maps
``sha256(what answered, request body as sent, sample index)`` to what rebuilds the
:class:`~jurist.engine.wire.transport.Completion`. "What answered" is an
:class:`~jurist.engine.cache.identity.Identity`: the endpoint's normalised base URL, the served name, and the
weights the server reported (vLLM's ``root``, llama.cpp's model file) or, for a server jurist starts, the
files' identity; so two servers serving the same name, or one server restarted on another checkpoint under
the same name and port, never answer for each other. Failures are never stored; neither are keys (they
travel in headers, never in the body). Many processes may share the file: it runs in WAL mode with a busy
timeout, and writes are batched into small transactions (flushed on :meth:`RequestCache.close`). A cache
that cannot be read is reported once and bypassed: a run never fails because of its cache. A cache that
can be read but not written (a read-only filesystem, a shared copy) is read, and stores nothing.

A server that cannot be reached cannot say what it serves, so nothing is looked up for it: the identity it
reported last is not assumed, because the usual reason a server is down is that it is being restarted, on
the next checkpoint under the same name and port, and a run started meanwhile must not be given the last
checkpoint's answers. Its answers are keyed once it answers (engine/cache/identity.py).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

log = logging.getLogger("jurist.cache")

CACHE_FILE = "requests.sqlite"
_KEY_VERSION = b"jurist-request-cache-2\0"  # keyed by what answered (engine/cache/identity.py)
# Rows are appended in rowid order and found through a small index of 32-byte digests: a random-key
# primary key would rewrite a random leaf of the (much larger) table on every store. The table name carries
# the layout's version, so a future layout starts a table of its own beside this one.
_TABLE = "completions_v1"
_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} (id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, "
    "value TEXT NOT NULL, created REAL NOT NULL)"
)
# What each endpoint (normalised base URL and served name) last said it serves, for ``--cache-only``: a run
# that sends nothing answers from the cache under the identity an endpoint had when it last answered.
_IDENTITIES = (
    "CREATE TABLE IF NOT EXISTS identities_v1 (endpoint TEXT PRIMARY KEY, identity TEXT NOT NULL, "
    "seen REAL NOT NULL)"
)
_SELECT = f"SELECT value FROM {_TABLE} WHERE key = ?"
_INSERT = f"INSERT OR REPLACE INTO {_TABLE} (key, value, created) VALUES (?, ?, ?)"
_BATCH_ROWS = 64  # a transaction per 64 stores, or per second, whichever comes first
_BATCH_SECONDS = 1.0
_BUSY_TIMEOUT_S = 10.0
_warned: set[str] = set()


def request_key(answered_by: str, body: bytes, sample: int) -> str:
    """The cache key of one request: what was asked, of what answered it
    (:meth:`~jurist.engine.cache.identity.Identity.key_text`), for which sample."""
    digest = hashlib.sha256(_KEY_VERSION)
    digest.update(f"{answered_by}\0{sample}\0".encode())
    digest.update(body)
    return digest.hexdigest()


def _blob(key: str) -> bytes:
    """A :func:`request_key` as its 32 bytes (any other string as itself)."""
    try:
        return bytes.fromhex(key)
    except ValueError:
        return key.encode()


def default_cache_path() -> Path:
    """``$JURIST_CACHE_DIR/requests.sqlite``, else ``$XDG_CACHE_HOME/jurist`` (``~/.cache/jurist``)."""
    directory = os.environ.get("JURIST_CACHE_DIR")
    if not directory:
        directory = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jurist")
    return Path(directory).expanduser() / CACHE_FILE


def _warn_once(path: Path, exc: BaseException) -> None:
    name = str(path)
    if name not in _warned:
        _warned.add(name)
        log.warning(
            "request cache %s is unusable (%s: %s); continuing without it", name, type(exc).__name__, exc
        )


class RequestCache:
    """Get and put completions by key; any sqlite error disables the cache for the rest of the process."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        import sqlite3

        self.path = path
        self.hits = 0
        self.misses = 0
        self.read_only = read_only  # answers are read from it; nothing is stored
        self._errors: type[Exception] = sqlite3.Error
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, float]] = {}
        self._oldest = 0.0
        if read_only:  # immutable: no lock or -shm file to write beside it
            uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
            self._db: sqlite3.Connection | None = sqlite3.connect(
                uri, uri=True, isolation_level=None, check_same_thread=False
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        try:
            if read_only:
                self._db.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1").fetchall()
            else:
                self._setup(self._db)
        except BaseException:
            self._db.close()
            raise
        atexit.register(self.close)

    @staticmethod
    def _setup(db: sqlite3.Connection) -> None:
        import sqlite3

        for attempt in range(50):  # switching to WAL needs a moment alone with the file
            try:
                db.execute("PRAGMA journal_mode=WAL").fetchone()
                db.execute(
                    "PRAGMA synchronous=NORMAL"
                )  # WAL: durable enough for a cache, no fsync per commit
                db.execute("PRAGMA wal_autocheckpoint=4000")
                db.execute(_SCHEMA)
                db.execute(_IDENTITIES)
                db.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1").fetchall()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.05)

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or None (a miss, or a cache that stopped working)."""
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:
                self.hits += 1
                return dict(json.loads(pending[0]))
            if self._db is None:
                return None
            try:
                row = self._db.execute(_SELECT, (_blob(key),)).fetchone()
                value = json.loads(row[0]) if row is not None else None
            except (self._errors, ValueError) as exc:
                self._disable(exc)
                return None
        if isinstance(value, dict):
            self.hits += 1
            return value
        self.misses += 1
        return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key``; written in the next small transaction."""
        if self._db is None or self.read_only:
            return
        now = time.time()
        with self._lock:
            if not self._pending:
                self._oldest = now
            self._pending[key] = (json.dumps(value), now)
            if len(self._pending) >= _BATCH_ROWS or now - self._oldest >= _BATCH_SECONDS:
                self._flush()

    def flush(self) -> None:
        """Write what :meth:`put` has batched (one transaction)."""
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if not self._pending or self._db is None:
            return
        rows = [(_blob(key), value, created) for key, (value, created) in self._pending.items()]
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(_INSERT, rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except self._errors as exc:
            if "locked" in str(exc) and len(self._pending) < 50 * _BATCH_ROWS:
                return  # another process holds the file longer than the busy timeout: try with the next batch
            self._disable(exc)
        self._pending.clear()

    def _disable(self, exc: BaseException) -> None:
        _warn_once(self.path, exc)
        db, self._db = self._db, None
        self._pending.clear()
        if db is not None:
            try:
                db.close()
            except self._errors:
                pass

    def remember_identity(self, endpoint: str, identity: dict[str, str]) -> None:
        """Record what ``endpoint`` said it serves (written at once: one row per endpoint and run)."""
        with self._lock:
            if self._db is None or self.read_only:
                return
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO identities_v1 (endpoint, identity, seen) VALUES (?, ?, ?)",
                    (endpoint, json.dumps(identity, sort_keys=True), time.time()),
                )
            except self._errors as exc:
                self._disable(exc)

    def last_identity(self, endpoint: str) -> tuple[dict[str, str], float] | None:
        """What ``endpoint`` last said it serves and when (seconds since the epoch), if it ever answered."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT identity, seen FROM identities_v1 WHERE endpoint = ?", (endpoint,)
                ).fetchone()
                value = json.loads(row[0]) if row is not None else None
            except (self._errors, ValueError) as exc:
                self._disable(exc)
                return None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            return None
        return {str(k): v for k, v in value.items()}, float(row[1])

    def close(self) -> None:
        """Flush and close; idempotent."""
        atexit.unregister(self.close)
        with self._lock:
            self._flush()
            db, self._db = self._db, None
        if db is not None:
            db.close()


def open_cache(path: Path | None = None, *, enabled: bool = True) -> RequestCache | None:
    """The shared cache (``path``: a file, or a directory to hold ``requests.sqlite``; default
    :func:`default_cache_path`); None when disabled, or, with a warning, when the file cannot be used."""
    if not enabled:
        return None
    if path is None:
        path = default_cache_path()
    elif path.is_dir() or not path.suffix:  # a folder (--cache-dir), made below if missing
        path = path / CACHE_FILE
    try:
        return RequestCache(path)
    except Exception as exc:  # noqa: BLE001 - sqlite3.DatabaseError, OSError, ...: never fatal
        if path.is_file():  # can it at least be read (a read-only filesystem, a shared copy)?
            try:
                cache = RequestCache(path, read_only=True)
            except Exception:  # noqa: BLE001 - unreadable too: bypassed, as below
                pass
            else:
                log.warning(
                    "request cache %s cannot be written (%s: %s); its answers are read, new ones are not "
                    "stored",
                    path,
                    type(exc).__name__,
                    exc,
                )
                return cache
        _warn_once(path, exc)
        return None
