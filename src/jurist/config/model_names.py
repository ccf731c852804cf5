"""What a model name that is neither a models-file alias nor a model string probably meant: the error that
says so, with the string form that would name it and the four lines a models file needs."""

from __future__ import annotations

from collections.abc import Iterable

import yaml

from jurist.config.model_strings import PROVIDERS, SERVER_PROVIDERS, closest_name
from jurist.errors import JuristError


def _scalar(value: str) -> str:
    """``value`` as a YAML scalar (quoted only where YAML needs it)."""
    flow: str = yaml.safe_dump([value], default_flow_style=True, width=10_000).strip()
    return flow[1:-1]


def _suggestion(name: str) -> tuple[str, list[str]]:
    """The string form most likely meant by an undefined ``name``, and its four-line models-file entry."""
    lower = name.lower()
    api_type, model, endpoints = "openai", name, "null"
    if lower.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        string = f"openai/{name}"
    elif lower.startswith("claude"):
        api_type, string = "anthropic", f"anthropic/{name}"
    elif lower.startswith("gemini"):
        api_type, model = "litellm", f"gemini/{name}"
        string = f"litellm/{model}"
    else:
        url = SERVER_PROVIDERS["vllm"].base_url
        string, endpoints = f"vllm/{name} --base-url {url}", f"[{{api_base: {_scalar(url)}}}]"
    entry = [
        f"{_scalar(name)}:",
        f"  model: {_scalar(model)}",
        f"  endpoints: {endpoints}",
        f"  api_type: {api_type}",
    ]
    return string, entry


def undefined_model(name: str, source: str, aliases: Iterable[str] = ()) -> JuristError:
    """The error for a name that is neither an alias nor a model string: the closest spelling when there is
    one (:func:`closest_name`), else the one-line string form that would name it and the four lines a
    models file needs."""
    closest = closest_name(name, aliases)
    if closest is not None:
        meant, why = closest
        return JuristError(
            f"model {name!r} is not defined ({source}): {why}; did you mean {meant}? "
            f"(providers: {', '.join(PROVIDERS)}, or a path)"
        )
    string, entry = _suggestion(name)
    block = "\n".join(f"    {line}" for line in entry)
    return JuristError(
        f"model {name!r} is not defined ({source}): name it as a string, e.g. {string} "
        f"(providers: {', '.join(PROVIDERS)}, or a path), or define it in a models file "
        f"(--models-file FILE):\n{block}"
    )
