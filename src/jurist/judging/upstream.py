"""Arena-Hard-Auto's own judge settings, obtained at run time from a pinned upstream commit.

A run called "arena-hard" must send upstream's exact system prompts and user template, not a paraphrase,
and jurist must not ship upstream's text. So the texts are data: read from a local folder when
``$JURIST_ARENA_HARD_PROMPTS`` names one (a copy of the official-prompts files), else downloaded once from
``raw.githubusercontent.com`` at commit :data:`COMMIT` into ``$JURIST_CACHE_DIR/upstream/`` (else
``$XDG_CACHE_HOME/jurist/upstream/``, ``~/.cache/jurist/upstream/``). Every file is checked against the
sha256 hard-coded in :data:`SHA256` before use, wherever it came from, so a run names exactly one text.

``utils/judge_utils.py`` is upstream *code*; it is never executed. Its assignments are literals (one of
them referring to an earlier one by name), read with :func:`ast.literal_eval` after substituting names.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import string
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurist.errors import JuristError
from jurist.judging.verdict import canonical_label
from jurist.store import DATA_DIR_ENV, data_dirs, locations

REPOSITORY = "lmarena/arena-hard-auto"
COMMIT = "196f6b826783b3da7310e361a805fa36f0be83f3"
RAW_BASE = "https://raw.githubusercontent.com/lmarena/arena-hard-auto"
"""Raw-file root; a file's URL is ``{RAW_BASE}/{COMMIT}/{upstream path}`` (tests point it at 127.0.0.1)."""
PROMPTS_ENV = "JURIST_ARENA_HARD_PROMPTS"
DOWNLOAD_TIMEOUT = 30.0

CONFIG_FILE = "config/arena-hard-v2.0.yaml"
SETTINGS_FILE = "utils/judge_utils.py"
SETTINGS_JSON = "judge_settings.json"
DATA_DIR_PROMPTS = "arena-hard/official-prompts"
"""Where a ``$JURIST_DATA_DIR`` holds the official-prompts files (the shared data's layout)."""
"""The official-prompts data folder holds ``JUDGE_SETTINGS`` exported as JSON instead of judge_utils.py."""

SHA256: dict[str, str] = {
    "config/arena-hard-v2.0.yaml": "ee68e5c6ac98a79720bf11014fc3f7fc3c3e5899153b3b08efe3db0e174215a0",
    "config/arena-hard-v0.1.yaml": "87ac45a188421218349697b5eda95cc77f6e60b6f61495d67d8cfebba3210528",
    "utils/judge_utils.py": "cbb093f4fc27408d8447e946392f26f98538b1e3950f574aca91a0f7595167b4",
    "judge_settings.json": "b66f754e88b34cfae0bfa226b19a2f3d19252879393947525effc26d2795d8b2",
}
"""The pinned files' sha256 (the official-prompts SHA256SUMS, plus judge_utils.py at :data:`COMMIT`)."""

VERDICT_PATTERNS = (r"\[\[([AB<>=]+)\]\]", r"\[([AB<>=]+)\]")
"""Upstream's ``regex_patterns``, as the reader implements them; a config naming others is refused."""

DEFAULT_CATEGORY = "hard_prompt"
"""The settings used for a question whose category upstream does not know (upstream would crash)."""

_TEMPLATE_FIELDS = {"QUESTION": "{question}", "ANSWER_A": "{answer_a}", "ANSWER_B": "{answer_b}"}
_JURIST_PLACEHOLDER = re.compile(r"\{(question|answer_a|answer_b)\}")
_HINT = (
    f"set ${PROMPTS_ENV} to a folder holding the official Arena-Hard prompt files (or ${DATA_DIR_ENV} to "
    f"one holding {DATA_DIR_PROMPTS}/: arena-hard-v2.0.yaml and judge_settings.json)"
)


@dataclass(frozen=True)
class ArenaHardSettings:
    """Upstream's v2.0 judge configuration, as checked data."""

    prompt_template: str
    """Upstream's user template with jurist's placeholders (``{question}``…) in place of its own."""
    system_prompts: Mapping[str, str]
    """Question category -> judge system prompt (``JUDGE_SETTINGS[category]["system_prompt"]``)."""
    baselines: Mapping[str, str]
    """Question category -> baseline model (``JUDGE_SETTINGS[category]["baseline"]``)."""
    judge_model: str
    temperature: float
    max_tokens: int
    source: str
    """Where the files came from (a folder, or the pinned commit's URL)."""

    def system_prompt(self, category: str) -> str:
        return self.system_prompts.get(category, self.system_prompts[DEFAULT_CATEGORY])


def read_verdict(text: str) -> str | None:
    """Upstream's reading (gen_judgment.py ``get_score``): upper-case, then the last match of the first
    pattern that matches; a match that is not one of the five labels (or a mirrored spelling) is no
    verdict, where upstream would store it and crash its leaderboard."""
    upper = text.upper()
    for pattern in VERDICT_PATTERNS:
        matches = [m for m in re.findall(pattern, upper) if m != ""]
        if matches:
            return canonical_label(matches[-1].strip("\n"))
    return None


def cache_root() -> Path:
    """``$JURIST_CACHE_DIR/upstream``, else ``$XDG_CACHE_HOME/jurist/upstream`` (``~/.cache/...``)."""
    return locations.cache_root() / "upstream"


def _check(name: str, data: bytes, origin: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        raise JuristError(
            f"{origin}: sha256 {digest[:12]}… is not that of {REPOSITORY}@{COMMIT[:7]} {name} "
            f"({SHA256[name][:12]}…); refusing it: restore the official file or unset ${PROMPTS_ENV} "
            "to download it"
        )
    return data


def _local(folder: Path, name: str) -> Path | None:
    """``name`` in a local folder: flat (``arena-hard-v2.0.yaml``) or laid out as upstream (``config/…``)."""
    for candidate in (folder / Path(name).name, folder / name):
        if candidate.is_file():
            return candidate
    return None


def _download(name: str) -> bytes:
    """The pinned file ``name``, from the cache or (once) from upstream; checked before it is kept."""
    cached = cache_root() / "arena-hard-auto" / COMMIT / name
    url = f"{RAW_BASE}/{COMMIT}/{name}"
    return fetch_pinned(url, cached, _HINT, lambda data, origin: _check(name, data, origin))


def fetch_pinned(url: str, cached: Path, hint: str, check: Callable[[bytes, str], bytes]) -> bytes:
    """The bytes at ``url``: the ``cached`` copy when ``check`` accepts it, else downloaded once, checked
    (``check`` raises on other bytes) and kept there; a failed download is one line ending in ``hint``."""
    if cached.is_file():
        data = cached.read_bytes()
        try:
            return check(data, str(cached))
        except JuristError:
            pass  # a damaged cache entry: fetched again
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response:
            data = bytes(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise JuristError(f"could not download {url} ({reason}); check the network, or {hint}") from None
    check(data, url)
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f".{cached.name}.{os.getpid()}.part")
    partial.write_bytes(data)
    os.replace(partial, cached)
    return data


def _evaluate_assignments(source: str, origin: str) -> dict[str, Any]:
    """Module-level ``NAME = literal`` assignments, names of earlier ones allowed inside; nothing runs."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise JuristError(f"{origin}: line {exc.lineno}: not Python ({exc.msg})") from None
    values: dict[str, Any] = {}

    class _Names(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id not in values:
                raise ValueError(f"unknown name {node.id}")
            return ast.copy_location(ast.Constant(values[node.id]), node)

    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        try:
            values[target.id] = ast.literal_eval(_Names().visit(node.value))
        except ValueError as exc:
            raise JuristError(f"{origin}: line {node.lineno}: {target.id} is not a literal ({exc})") from None
    return values


def _judge_settings(raw: Any, origin: str) -> tuple[dict[str, str], dict[str, str]]:
    if not isinstance(raw, dict) or DEFAULT_CATEGORY not in raw:
        raise JuristError(f"{origin}: JUDGE_SETTINGS is not a mapping with a {DEFAULT_CATEGORY!r} entry")
    prompts: dict[str, str] = {}
    baselines: dict[str, str] = {}
    for category, entry in raw.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("system_prompt"), str)):
            raise JuristError(f"{origin}: JUDGE_SETTINGS[{category!r}] has no system_prompt string")
        prompts[str(category)] = entry["system_prompt"]
        if isinstance(entry.get("baseline"), str):
            baselines[str(category)] = entry["baseline"]
    return prompts, baselines


def jurist_template(template: str, origin: str, fields: Mapping[str, str] = _TEMPLATE_FIELDS) -> str:
    """Upstream's ``str.format`` template with jurist's placeholders (``fields``: upstream's field name ->
    jurist's placeholder), so filling it gives the same bytes."""
    parts: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise JuristError(f"{origin}: prompt_template: {exc}") from None
    for literal, field, spec, conversion in parsed:
        if _JURIST_PLACEHOLDER.search(literal):
            raise JuristError(f"{origin}: prompt_template: literal text looks like a jurist placeholder")
        parts.append(literal)
        if field is None:
            continue
        if field not in fields or spec or conversion:
            raise JuristError(f"{origin}: prompt_template: unexpected field {{{field}}}")
        parts.append(fields[field])
    return "".join(parts)


def _config(data: bytes, origin: str) -> dict[str, Any]:
    config = yaml.safe_load(data.decode("utf-8"))
    if not isinstance(config, dict) or not isinstance(config.get("prompt_template"), str):
        raise JuristError(f"{origin}: no prompt_template")
    patterns = tuple(config.get("regex_patterns") or ())
    if patterns != VERDICT_PATTERNS:
        raise JuristError(
            f"{origin}: regex_patterns {patterns} are not those jurist reads {VERDICT_PATTERNS}"
        )
    return config


def _data_dir_prompts() -> str | None:
    """The official-prompts folder of a ``$JURIST_DATA_DIR`` that has one (``JURIST_DATA_DIR=../shared/data``
    works as it is)."""
    for folder in data_dirs():
        if (folder / DATA_DIR_PROMPTS / Path(CONFIG_FILE).name).is_file():
            return str(folder / DATA_DIR_PROMPTS)
    return None


def local_settings_copy() -> tuple[str, str] | None:
    """Where :func:`load_arena_hard_settings` would read the settings without the network, as (source,
    path): ``env`` (``$JURIST_ARENA_HARD_PROMPTS``), ``data dir`` or ``jurist cache``; None when it would
    have to download them. Files only, for ``jurist list``: their bytes are checked when read."""
    folder_name = os.environ.get(PROMPTS_ENV)
    if folder_name:
        folder = Path(folder_name).expanduser()
        if _local(folder, CONFIG_FILE) and (_local(folder, SETTINGS_FILE) or _local(folder, SETTINGS_JSON)):
            return "env", f"${PROMPTS_ENV}={folder_name}"
        return None
    found = _data_dir_prompts()
    if found is not None:
        return "data dir", found
    cached = cache_root() / "arena-hard-auto" / COMMIT
    if (cached / CONFIG_FILE).is_file() and (cached / SETTINGS_FILE).is_file():
        return "jurist cache", str(cached)
    return None


def load_arena_hard_settings() -> ArenaHardSettings:
    """Upstream's v2.0 judge settings: from ``$JURIST_ARENA_HARD_PROMPTS``, else the (cached) download.

    Raises :class:`JuristError` (one line: what failed and how to fix it) on a missing or altered file or a
    failed download.
    """
    folder_name = os.environ.get(PROMPTS_ENV) or _data_dir_prompts()
    if folder_name:
        folder = Path(folder_name).expanduser()
        if not folder.is_dir():
            raise JuristError(f"${PROMPTS_ENV}={folder_name}: not a folder; {_HINT} (or unset it)")
        config_path = _local(folder, CONFIG_FILE)
        settings_path = _local(folder, SETTINGS_FILE) or _local(folder, SETTINGS_JSON)
        if config_path is None or settings_path is None:
            missing = Path(CONFIG_FILE).name if config_path is None else f"{SETTINGS_JSON} or judge_utils.py"
            raise JuristError(f"${PROMPTS_ENV}={folder_name}: no {missing} there; {_HINT} (or unset it)")
        settings_name = SETTINGS_JSON if settings_path.name == SETTINGS_JSON else SETTINGS_FILE
        config_data = _check(CONFIG_FILE, config_path.read_bytes(), str(config_path))
        settings_data = _check(settings_name, settings_path.read_bytes(), str(settings_path))
        settings_origin, source = str(settings_path), str(folder)
    else:
        config_data, settings_data = _download(CONFIG_FILE), _download(SETTINGS_FILE)
        settings_name, settings_origin = SETTINGS_FILE, f"{REPOSITORY}@{COMMIT[:7]}/{SETTINGS_FILE}"
        source = f"{RAW_BASE}/{COMMIT}"
    config = _config(config_data, f"{source} {CONFIG_FILE}")
    if settings_name == SETTINGS_JSON:
        raw = json.loads(settings_data.decode("utf-8"))
    else:
        raw = _evaluate_assignments(settings_data.decode("utf-8"), settings_origin).get("JUDGE_SETTINGS")
    prompts, baselines = _judge_settings(raw, settings_origin)
    return ArenaHardSettings(
        prompt_template=jurist_template(config["prompt_template"], f"{source} {CONFIG_FILE}"),
        system_prompts=prompts,
        baselines=baselines,
        judge_model=str(config.get("judge_model")),
        temperature=float(config.get("temperature") or 0.0),
        max_tokens=int(config.get("max_tokens") or 0),
        source=source,
    )
