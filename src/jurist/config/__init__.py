"""Models file (Arena-Hard's ``api_config.yaml`` shape): what a model is (:mod:`~jurist.config.specs`) and
how a models file is read (:mod:`~jurist.config.models_file`); what a model costs
(:mod:`~jurist.config.prices`: a model's ``price``, a ``--prices`` file).

A models file maps an alias to a model: ``model``, ``endpoints: [{api_base, api_key}]`` (or null for the
provider default), ``api_type``, ``parallel``, ``max_tokens``, ``temperature`` and optional ``timeout`` and
``system_prompt``; or, instead of ``endpoints``, a ``serve`` block for a server jurist starts itself (see
:class:`ServeSpec`). Keys may be literal, ``${ENV_VAR}`` references, or absent (then ``OPENAI_API_KEY`` from
the environment or a ``.env`` file is used). A name that is no alias may be a model string
(``openai/NAME``, ``vllm/NAME``, ``hf/ORG/NAME``, a path …: :mod:`~jurist.config.model_strings`).
"""

from jurist.config.checked import FieldError
from jurist.config.model_names import undefined_model
from jurist.config.model_strings import (
    PROVIDERS,
    SERVER_PROVIDERS,
    SETTING_KEYS,
    ModelStringOptions,
    models_from_strings,
    parse_settings,
)
from jurist.config.models_file import load_dotenv_values, load_models_file, openai_base_url, resolve_key
from jurist.config.prices import (
    ANTHROPIC_CACHE_READ,
    ANTHROPIC_CACHE_WRITE,
    DEFAULT_BATCH_DISCOUNT,
    PER_TOKENS,
    Price,
    load_prices,
)
from jurist.config.retirements import REPLACE_HINT, RETIREMENT_SOURCE, retirement_phrase, shutdown_of
from jurist.config.specs import (
    ANTHROPIC_API_BASE,
    ANTHROPIC_KEY_ENV,
    DEFAULT_API_BASE,
    DEFAULT_KEY_ENV,
    PASSTHROUGH_PARAMS,
    VLLM_DEFAULT_MAX_NUM_SEQS,
    Endpoint,
    ModelSpec,
    ServeKind,
    ServeSpec,
    arg_value,
)
from jurist.config.string_labels import labelled, string_labels
from jurist.config.suite import MAX_SAMPLES, Suite, SuiteTask, load_suite

__all__ = [
    "ANTHROPIC_CACHE_READ",
    "ANTHROPIC_CACHE_WRITE",
    "DEFAULT_BATCH_DISCOUNT",
    "PER_TOKENS",
    "Price",
    "load_prices",
    "ANTHROPIC_API_BASE",
    "ANTHROPIC_KEY_ENV",
    "DEFAULT_API_BASE",
    "DEFAULT_KEY_ENV",
    "MAX_SAMPLES",
    "PASSTHROUGH_PARAMS",
    "PROVIDERS",
    "REPLACE_HINT",
    "RETIREMENT_SOURCE",
    "SERVER_PROVIDERS",
    "SETTING_KEYS",
    "VLLM_DEFAULT_MAX_NUM_SEQS",
    "Endpoint",
    "FieldError",
    "ModelSpec",
    "ModelStringOptions",
    "ServeKind",
    "ServeSpec",
    "Suite",
    "SuiteTask",
    "arg_value",
    "labelled",
    "load_dotenv_values",
    "load_models_file",
    "models_from_strings",
    "openai_base_url",
    "parse_settings",
    "load_suite",
    "resolve_key",
    "retirement_phrase",
    "shutdown_of",
    "string_labels",
    "undefined_model",
]
