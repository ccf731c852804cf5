"""Arena-Hard-Local's own judge (r4dm/arena-hard-local), read at run time from its pinned judge_config.yaml.

Arena-Hard-Local judges with a simplified Arena-Hard v0.1 prompt: no answer of the judge's own, "don't
explain", and an answer in the language of the request wins. Its system prompt, user template, verdict
regex, temperature and max_tokens are upstream's data, never shipped with jurist: the file is found in
``$JURIST_DATA_DIR`` (``arena-hard-local/judge_config.yaml``, the shared data's layout, or upstream's own
``arena-hard-local/config/judge_config.yaml``), else in jurist's cache, else downloaded once from the pinned
commit, and always checked against its sha256.

The verdict is read as upstream reads it (``gen_judgment.py`` ``get_score``, then ``show_result.py``): every
match of the regex in the reply, empty ones dropped; none: no verdict yet (the judge is asked again);
several different ones: no verdict, final; exactly one: it, upper-cased, its brackets removed. Upstream
scores only the five labels; any other spelling is a game without a verdict (it drops that game alone).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml

from jurist.errors import JuristError
from jurist.judging.upstream import cache_root, fetch_pinned, jurist_template
from jurist.judging.verdict import LABELS
from jurist.store import DATA_DIR_ENV, data_dirs

REPOSITORY = "r4dm/arena-hard-local"
COMMIT = "f9be4e981495235b477d5bf8a0f394cc930fb0c2"
RAW_BASE = "https://raw.githubusercontent.com/r4dm/arena-hard-local"
"""Raw-file root; the config's URL is ``{RAW_BASE}/{COMMIT}/config/judge_config.yaml``."""
CONFIG_FILE = "config/judge_config.yaml"
CONFIG_SHA256 = "cdcdba52397f9bf53f80083284ddaf767ad037d67af44e3157f0c31f8db8d5df"
DATA_DIR_PATHS = ("arena-hard-local/judge_config.yaml", "arena-hard-local/config/judge_config.yaml")
"""Where a ``$JURIST_DATA_DIR`` holds the config (the shared data's layout first)."""
PROTOCOL = "arena-hard-local"

_TEMPLATE_FIELDS = {"question_1": "{question}", "answer_1": "{answer_a}", "answer_2": "{answer_b}"}
"""Upstream's template fields: game 1 fills ``answer_1`` with the baseline's answer (jurist's position A)."""
_HINT = (
    f"with no network, set {DATA_DIR_ENV} (or --data-dir) to a folder holding {DATA_DIR_PATHS[0]} "
    f"({REPOSITORY}@{COMMIT[:7]} {CONFIG_FILE}; ../shared/data is laid out so)"
)


@dataclass(frozen=True)
class LocalJudgeSettings:
    """Upstream's judge configuration, as checked data."""

    system_prompt: str
    prompt_template: str
    """The user template with jurist's placeholders (``{question}``, ``{answer_a}``, ``{answer_b}``)."""
    verdict_pattern: str
    judge_model: str
    baseline_model: str
    temperature: float
    max_tokens: int
    source: str
    """Where the file came from (a local path, or the pinned commit's URL)."""

    @property
    def origin(self) -> str:
        return f"{REPOSITORY}@{COMMIT[:7]} {CONFIG_FILE}"


def read_verdict(text: str, pattern: str) -> tuple[str | None, dict[str, Any]]:
    """The verdict of one reply as upstream reads it (module docstring), and what a game record keeps:
    ``matches``, the different matches found when they give no verdict (upstream asks nothing more then)."""
    found = list(dict.fromkeys(m for m in re.findall(pattern, text) if m != ""))
    if len(found) != 1:
        return None, ({"matches": found[:10]} if found else {})
    label = found[0].strip("\n").upper().replace("[", "").replace("]", "")
    if label not in LABELS:
        return None, {"matches": found}
    return label, {}


def _check(data: bytes, origin: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != CONFIG_SHA256:
        raise JuristError(
            f"{origin}: sha256 {digest[:12]}… is not that of {REPOSITORY}@{COMMIT[:7]} {CONFIG_FILE} "
            f"({CONFIG_SHA256[:12]}…); refusing it: restore upstream's file"
        )
    return data


def _config_bytes() -> tuple[bytes, str]:
    """The pinned config's bytes and where they came from: a data dir, the cache, else one download."""
    for folder in data_dirs():
        for relative in DATA_DIR_PATHS:
            path = folder / relative
            if path.is_file():
                return _check(path.read_bytes(), str(path)), str(path)
    url = f"{RAW_BASE}/{COMMIT}/{CONFIG_FILE}"
    cached = cache_root() / "arena-hard-local" / COMMIT / CONFIG_FILE
    return fetch_pinned(url, cached, _HINT, _check), url


def local_config_copy() -> tuple[str, str] | None:
    """Where a local copy of the config is (``data dir`` or ``jurist cache``, its path), for ``jurist list``:
    files only, its bytes checked when a run reads it."""
    for folder in data_dirs():
        for relative in DATA_DIR_PATHS:
            if (folder / relative).is_file():
                return "data dir", str(folder / relative)
    cached = cache_root() / "arena-hard-local" / COMMIT / CONFIG_FILE
    return ("jurist cache", str(cached)) if cached.is_file() else None


def _field(config: dict[str, Any], name: str, kind: type | tuple[type, ...], origin: str) -> Any:
    value = config.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise JuristError(f"{origin}: {name}: unexpected value {value!r}")
    return value


def parse_settings(data: bytes, source: str) -> LocalJudgeSettings:
    """The settings of a judge_config.yaml's bytes (checked field by field; ``source`` names it)."""
    origin = f"{source} ({CONFIG_FILE})"
    config = yaml.safe_load(data.decode("utf-8"))
    if not isinstance(config, dict):
        raise JuristError(f"{origin}: not a mapping")
    templates = _field(config, "prompt_template", list, origin)
    if len(templates) != 1 or not isinstance(templates[0], str):
        raise JuristError(f"{origin}: prompt_template: expected one template (a single-turn judge)")
    if config.get("reference") or not config.get("pairwise") or not config.get("baseline"):
        raise JuristError(f"{origin}: jurist reads a pairwise judge against a baseline without references")
    pattern = _field(config, "regex_pattern", str, origin)
    try:
        groups = re.compile(pattern).groups
    except re.error as exc:
        raise JuristError(f"{origin}: regex_pattern: {exc}") from None
    if groups != 1:
        raise JuristError(f"{origin}: regex_pattern: expected one group, found {groups}")
    return LocalJudgeSettings(
        system_prompt=_field(config, "system_prompt", str, origin),
        prompt_template=jurist_template(templates[0], origin, _TEMPLATE_FIELDS),
        verdict_pattern=pattern,
        judge_model=str(_field(config, "judge_model", str, origin)),
        baseline_model=str(_field(config, "baseline_model", str, origin)),
        temperature=float(_field(config, "temperature", (int, float), origin)),
        max_tokens=int(_field(config, "max_tokens", int, origin)),
        source=source,
    )


def load_local_settings() -> LocalJudgeSettings:
    """Arena-Hard-Local's judge settings, from a data dir, the cache or one download (pinned, checked).

    Raises :class:`JuristError` (one line: what failed and how to fix it)."""
    data, source = _config_bytes()
    return parse_settings(data, source)
