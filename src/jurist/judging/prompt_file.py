"""``--judge-prompt FILE`` for a pairwise protocol: a user's system prompt, user template and re-ask text,
read and checked before any request (YAML by suffix, else text with ``[system]`` / ``[user]`` / ``[reask]``
headers); every error names the file and where in it. The protocol keeps its own reading of replies
(:func:`jurist.judging.protocols.protocol_for`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from jurist.errors import InputError

PLACEHOLDERS = ("{question}", "{answer_a}", "{answer_b}")
# Near misses of a placeholder ({answer_c}, {questions}) that would silently stay in the prompt.
_PLACEHOLDER_LIKE = re.compile(r"\{\s*(?:question|answer)[A-Za-z0-9_ ]*\}", re.IGNORECASE)


@dataclass(frozen=True)
class JudgePrompt:
    """A user-supplied system prompt, user template and (optionally) re-ask text."""

    system: str
    user: str
    reask: str | None = None


_SECTION = re.compile(r"^\[(system|user|reask)\]\s*$", re.IGNORECASE | re.MULTILINE)
_PROMPT_KEYS = ("system", "user", "reask")


def _sections_from_text(path: Path, text: str) -> dict[str, str]:
    """``[system]``, ``[user]`` and ``[reask]`` header lines split a text file; with none, all is user."""
    headers = list(_SECTION.finditer(text))
    if not headers:
        return {"user": text}
    if text[: headers[0].start()].strip():
        raise InputError(path, "line 1", "text before the first [system] / [user] / [reask] header")
    sections: dict[str, str] = {}
    for i, header in enumerate(headers):
        key = header.group(1).lower()
        if key in sections:
            line = text.count("\n", 0, header.start()) + 1
            raise InputError(path, f"line {line}", f"second [{key}] section")
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        sections[key] = text[header.end() : end].strip("\n")
    return sections


def _sections_from_yaml(path: Path, text: str) -> dict[str, str]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise InputError(path, where, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise InputError(path, "", "expected a mapping with keys system, user (and optionally reask)")
    unknown = sorted(str(key) for key in data if key not in _PROMPT_KEYS)
    if unknown:
        raise InputError(path, f"key {unknown[0]!r}", "unknown key; expected system, user, reask")
    for key, value in data.items():
        if value is not None and not isinstance(value, str):
            raise InputError(path, f"key {key!r}", "expected a string")
    return {key: value for key, value in data.items() if value is not None}


def load_judge_prompt(path: str | Path) -> JudgePrompt:
    """Read and check a ``--judge-prompt`` file (YAML by suffix, else text with ``[system]``/``[user]``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "", "judge prompt file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        sections = _sections_from_yaml(path, text)
    else:
        sections = _sections_from_text(path, text)
    user = sections.get("user", "")
    if not user.strip():
        raise InputError(path, "user template", "missing or empty; it must contain " + " ".join(PLACEHOLDERS))
    system = sections.get("system", "")
    for placeholder in PLACEHOLDERS:
        if placeholder not in user:
            hint = " (placeholders are filled in the user template only)" if placeholder in system else ""
            raise InputError(path, "user template", f"missing placeholder {placeholder}{hint}")
    for where, template in (("system prompt", system), ("user template", user)):
        for match in _PLACEHOLDER_LIKE.finditer(template):
            if match.group(0) not in PLACEHOLDERS:
                raise InputError(
                    path, where, f"unknown placeholder {match.group(0)}; use {', '.join(PLACEHOLDERS)}"
                )
    reask = (sections.get("reask") or "").strip() or None
    return JudgePrompt(system.strip("\n"), user.strip("\n"), reask)
