"""Exceptions that end a command with a clear one-line message (exit code 2, or 1 for storage)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class JuristError(Exception):
    """A usage or input problem the user must fix; printed as one line, exit code 2."""


class InputError(JuristError):
    """Bad input data: the message names the file, line (or alias) and field."""

    def __init__(self, path: object, where: str, message: str) -> None:
        self.path = str(path)
        self.where = where
        super().__init__(f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}")


class StorageError(Exception):
    """The disk refused a write (full, over quota, file too large): printed as one line naming the path
    and what was being written, exit code 1; everything written before stays valid and the run resumes."""

    def __init__(self, path: object, what: str, error: OSError) -> None:
        self.path = str(path)
        reason = error.strerror or type(error).__name__
        super().__init__(
            f"could not write {what} to {self.path}: {reason}; everything saved so far is kept, "
            "so free some space and run the same command again to resume"
        )


def did_you_mean(value: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean X?)`` with the valid spelling closest to ``value``, else ``""``: every unknown name
    a user types (a provider, an alias, a benchmark, an option's value) gets one."""
    import difflib

    options = list(choices)
    close = difflib.get_close_matches(value, options, n=1, cutoff=cutoff)
    if not close:
        lowered = {choice.lower(): choice for choice in options}
        close = [lowered[c] for c in difflib.get_close_matches(value.lower(), list(lowered), 1, cutoff)]
    return f" (did you mean {close[0]}?)" if close else ""


def unknown_value(flag: str, value: str, choices: Sequence[str]) -> JuristError:
    """``--FLAG: 'X' is not a, b or c (did you mean b?)``: the one line for an option value out of its
    choices."""
    listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    return JuristError(f"{flag}: {value!r} is not {listed}{did_you_mean(value, choices)}")
