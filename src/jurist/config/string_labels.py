"""Row labels of model strings: a string with its own URL is labelled by the name it serves, ``NAME=STRING``
by NAME, so no table row reads ``vllm/smol@http://127.0.0.1:44473/v1``; run.json keeps the full string."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from jurist.config.model_strings import PROVIDERS, _own_url
from jurist.errors import JuristError


def is_model_string(name: str) -> bool:
    """Whether ``name`` reads as a model string by its prefix alone (``vllm/NAME``, ``hf/ID`` …)."""
    prefix, sep, rest = _own_url(name)[0].partition("/") if "@http" in name else name.partition("/")
    return bool(sep) and prefix in PROVIDERS and bool(rest.strip("/"))


def string_labels(names: Iterable[str], aliases: Collection[str] = ()) -> dict[str, str]:
    """The row label of each model string of ``names`` that is not an alias: ``NAME=STRING`` is labelled
    NAME (the user's choice); a string with its own URL (``vllm/smol@http://gpu1:8000/v1``) by the name the
    server serves (``smol``), so no table row reads as a URL; any other string itself (``openai/gpt-4``
    stays ``openai/gpt-4``: its row and files keep the names earlier runs gave them). Label -> the
    full string, for the strings whose label differs; run.json keeps the full string (``model_string``).
    Two strings given one label is an error saying how to tell them apart."""
    labels: dict[str, str] = {}
    for name in dict.fromkeys(names):
        if name in aliases:
            continue
        label, sep, string = name.partition("=")
        if sep and label.strip() and is_model_string(string.strip()) and "/" not in label:
            label, string = label.strip(), string.strip()
        elif is_model_string(name) and "@http" in name:
            label, string = _own_url(name)[0].partition("/")[2], name  # the served name
        else:
            continue
        if label in aliases or labels.get(label, string) != string:
            raise JuristError(
                f"model {name!r}: its label {label!r} is already "
                f"{'a models-file alias' if label in aliases else f'the label of {labels[label]!r}'}; "
                f"name it yourself: OTHER={string}"
            )
        labels[label] = string
    return labels


def labelled(names: Iterable[str], labels: Mapping[str, str]) -> list[str]:
    """``names`` with each labelled string replaced by its label (:func:`string_labels`)."""
    by_string = {string: label for label, string in labels.items()}
    by_given = {f"{label}={string}": label for label, string in labels.items()}
    return [by_given.get(name, by_string.get(name, name)) for name in names]
