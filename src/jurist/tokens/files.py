"""Counters that read a model's own tokenizer files: a GGUF (through llama-cpp-python) or a Hugging Face
tokenizer (transformers, or a ``tokenizer.json`` with the ``tokenizers`` package). Both are optional
packages, imported only when a model needs them; :mod:`jurist.tokens.counters` says which model gets one.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.errors import JuristError

log = logging.getLogger("jurist.tokenizers")

Messages = Sequence[Mapping[str, Any]]
GGUF_HINT = "pip install 'jurist[embedded]'  (llama-cpp-python)"
TOKENIZER_HINT = "pip install 'jurist[hf-tokenizer]'  (tokenizers; or transformers, for a hub id)"
_REPLY_PRIMING = 3  # OpenAI's counting recipe: the assistant turn's opening ...
_PER_MESSAGE = 4  # ... and the tokens a chat template adds around each message


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def recipe_prompt_tokens(messages: Messages, count_text: Callable[[str], int]) -> int:
    """OpenAI's recipe for chat prompts: each message's content plus a few tokens of template around it."""
    return _REPLY_PRIMING + sum(count_text(_content(message)) + _PER_MESSAGE for message in messages)


class _Rendered(Exception):
    """Raised in place of generating: carries the prompt the chat handler built."""

    def __init__(self, prompt: Any) -> None:
        super().__init__("rendered")
        self.prompt = prompt


class GgufCounter:
    """A GGUF's own vocabulary and chat template, loaded without weights (``vocab_only``, ~0.1 s).

    The prompt is built by llama-cpp-python's own ``create_chat_completion``, exactly as its server does
    for this file and ``chat_format`` (the handler the server would pick, the same tokenize call), and
    caught where generation would begin: the count is the server's ``usage.prompt_tokens``."""

    def __init__(self, path: Path, chat_format: str | None = None) -> None:
        self.path = path
        self.exact = True
        self.label = path.name + (f" ({chat_format})" if chat_format else "")
        self._lock = threading.Lock()
        self._llama = _vocab_only_llama(path, chat_format)

    def count_prompt(self, messages: Messages) -> int:
        llama = self._llama
        with self._lock:
            try:
                llama.create_chat_completion(messages=[dict(message) for message in messages], max_tokens=1)
            except _Rendered as rendered:
                prompt = rendered.prompt
                if isinstance(prompt, str):
                    return len(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
                return len(prompt)
            except Exception as exc:  # a template that refuses these messages
                log.debug("%s: chat template failed (%s); counting contents", self.label, exc)
        return recipe_prompt_tokens(messages, self.count_text)

    def count_text(self, text: str) -> int:
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def close(self) -> None:
        """Free the vocabulary's native model now (idempotent), not when the interpreter tears down the
        modules llama.cpp frees it through."""
        with self._lock:
            self._llama.close()


def _vocab_only_llama(path: Path, chat_format: str | None) -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise JuristError(f"counting with {path.name} needs llama-cpp-python: {GGUF_HINT}") from None
    if not path.is_file():
        raise JuristError(f"tokenizer: no GGUF file at {path}")

    class VocabOnly(llama_cpp.Llama):
        def create_completion(self, prompt: Any, *args: Any, **kwargs: Any) -> Any:
            raise _Rendered(prompt)

    quiet = _quiet_native_output()
    try:
        with quiet:  # llama.cpp warns on stderr that a vocabulary-only context has no training length
            return VocabOnly(model_path=str(path), vocab_only=True, chat_format=chat_format, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise JuristError(f"cannot read the vocabulary of {path}: {exc}") from None


def _quiet_native_output() -> Any:
    """llama-cpp-python's own guard against native log lines, where this process's stdio has descriptors
    (it has none under some test runners); else a context that does nothing."""
    from contextlib import nullcontext

    try:
        import sys

        from llama_cpp._utils import suppress_stdout_stderr

        sys.stdout.fileno(), sys.stderr.fileno()
        return suppress_stdout_stderr(disable=False)
    except Exception:  # no descriptors, or the helper moved: print what it prints
        return nullcontext()


class HuggingFaceCounter:
    """A Hugging Face tokenizer: transformers' ``AutoTokenizer`` (local directory or hub id, with the
    model's chat template) when transformers is installed; else a ``tokenizer.json`` read by the
    ``tokenizers`` package, with the chat template of the ``tokenizer_config.json`` beside it."""

    def __init__(self, source: str) -> None:
        self.source = source
        path = Path(source).expanduser()
        file = path / "tokenizer.json" if path.is_dir() else path
        shown = (
            f"{path.parent.name}/{path.name}" if path.is_file() else path.name if path.exists() else source
        )
        self.label = f"hf {shown}"
        self._render: Callable[[list[dict[str, Any]]], str] | None = None  # chat template to text
        self._chat_ids: Callable[..., Any] | None = None  # transformers' apply_chat_template
        if importlib.util.find_spec("transformers") is not None:
            self._encode = self._transformers(source, path)
        elif file.is_file():
            self._encode = self._tokenizer_json(file)
            self._render = _chat_template(file.parent / "tokenizer_config.json")
        else:
            raise JuristError(
                f"tokenizer: {source!r} is no file here; a hub id needs transformers: {TOKENIZER_HINT}"
            )
        self.exact = self._render is not None or self._chat_ids is not None
        if not self.exact:
            self.label += " (no chat template)"

    def _transformers(self, source: str, path: Path) -> Callable[[str], int]:
        import transformers

        where = str(path.parent if path.is_file() else path if path.exists() else source)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(where)
        except (OSError, ValueError) as exc:
            raise JuristError(f"tokenizer: cannot load {source!r} with transformers: {exc}") from None
        if getattr(tokenizer, "chat_template", None):
            self._chat_ids = tokenizer.apply_chat_template
        return lambda text: len(tokenizer.encode(text, add_special_tokens=False))

    @staticmethod
    def _tokenizer_json(file: Path) -> Callable[[str], int]:
        try:
            import tokenizers
        except ImportError:
            raise JuristError(f"tokenizer: reading {file} needs tokenizers: {TOKENIZER_HINT}") from None
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(file))
        except Exception as exc:  # the Rust side raises its own Exception type
            raise JuristError(f"tokenizer: cannot read {file}: {exc}") from None
        return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)

    def count_prompt(self, messages: Messages) -> int:
        listed = [dict(message) for message in messages]
        try:
            if self._chat_ids is not None:
                ids = self._chat_ids(listed, add_generation_prompt=True, tokenize=True)
                return len(ids["input_ids"] if isinstance(ids, Mapping) else ids)
            if self._render is not None:
                return self._encode(self._render(listed))
        except Exception as exc:  # a template that refuses these messages (roles out of order ...)
            log.debug("%s: chat template failed (%s); counting contents", self.label, exc)
        return recipe_prompt_tokens(messages, self._encode)

    def count_text(self, text: str) -> int:
        return self._encode(text)


def _chat_template(config_path: Path) -> Callable[[list[dict[str, Any]]], str] | None:
    """The ``chat_template`` of a ``tokenizer_config.json``, rendered as transformers renders it."""
    try:
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except (OSError, ValueError, ImportError):
        return None
    template = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(template, list):  # named templates: the default one
        named = {item.get("name"): item.get("template") for item in template if isinstance(item, dict)}
        template = named.get("default")
    beside = config_path.parent / "chat_template.jinja"  # where newer transformers save it
    if template is None and beside.is_file():
        template = beside.read_text(encoding="utf-8")
    if not isinstance(template, str):
        return None

    def special(name: str) -> str:
        value = config.get(name) if isinstance(config, dict) else None
        return str(value.get("content", "")) if isinstance(value, dict) else str(value or "")

    def refuse(message: str) -> None:
        raise ValueError(message)

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    environment.filters["tojson"] = lambda value, indent=None: json.dumps(
        value, ensure_ascii=False, indent=indent
    )
    compiled = environment.from_string(template)
    bos, eos = special("bos_token"), special("eos_token")
    return lambda messages: compiled.render(
        messages=messages,
        add_generation_prompt=True,
        bos_token=bos,
        eos_token=eos,
        raise_exception=refuse,
    )
