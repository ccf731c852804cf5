"""The models file's records (jurist.config.checked): read leniently as YAML and ``-M`` give values, checked
field by field with the place of the first problem, and the pydantic calls the code makes on them behaving
as pydantic's did (fields given, copies, dumps); and no run's start imports pydantic."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jurist.config import Endpoint, FieldError, ModelSpec, Price, ServeSpec

ARENA_V2 = Path(__file__).resolve().parents[2] / "shared" / "data" / "arena-hard" / "data" / "arena-hard-v2.0"


def test_values_are_read_as_a_settings_file_gives_them() -> None:
    spec = ModelSpec.model_validate(
        {"model": "m", "parallel": "4", "temperature": 1, "timeout": "30", "logprobs": "yes",
         "sys_prompt": "be brief", "endpoints": [{"api_base": "http://h/v1"}],
         "serve": None, "price": {"input": "1.5", "output": 2}}
    )  # fmt: skip
    assert (spec.parallel, spec.temperature, spec.timeout, spec.logprobs) == (4, 1.0, 30.0, True)
    assert ModelSpec.model_validate({"model": "m", "parallel": 8.0, "max_tokens": " 64"}).max_tokens == 64
    assert type(spec.temperature) is float and spec.system_prompt == "be brief"
    assert spec.endpoints == [Endpoint(api_base="http://h/v1")]
    assert spec.price == Price(input=1.5, output=2.0)
    assert ServeSpec.model_validate({"kind": "vllm", "model": "w", "gpus": "2"}).gpus == 2
    assert ServeSpec.model_validate({"kind": "vllm", "model": "w", "gpus": [0, "1"]}).gpus == [0, 1]


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ({"parallel": 2}, "model", "missing (required)"),
        ({"model": "m", "parallel": 0}, "parallel", "must be >= 1"),
        ({"model": "m", "parallel": 5000}, "parallel", "must be <= 4096"),
        ({"model": "m", "parallel": 2.5}, "parallel", "expected an integer"),
        ({"model": "m", "parallel": True}, "parallel", "expected an integer, not True"),
        ({"model": "m", "temperature": "hot"}, "temperature", "expected a number"),
        ({"model": "m", "timeout": 0}, "timeout", "must be > 0"),
        ({"model": 7}, "model", "expected text"),
        ({"model": "m", "logprobs": "maybe"}, "logprobs", "expected true or false"),
        ({"model": "m", "api_type": "pigeon"}, "api_type", "expected one of 'openai', "),
        ({"model": "m", "tokenizer": ""}, "tokenizer", "at least 1 character"),
        ({"model": "m", "endpoints": {"api_base": "h"}}, "endpoints", "expected a list"),
        ({"model": "m", "endpoints": [{"api_bse": "h"}]}, "endpoints.0.api_bse", "unknown"),
        ({"model": "m", "serve": {"kind": "vllm"}}, "serve.model", "missing (required)"),
        ({"model": "m", "serve": {"kind": "vllm", "model": "w", "gpus": [1, 1]}}, "serve.gpus", "distinct"),
        ({"model": "m", "serve": {"kind": "vllm", "model": "w", "gpus": 0}}, "serve.gpus", "at least 1"),
        ({"model": "m", "serve": {"kind": "vllm", "model": "w", "n_ctx": "x"}}, "serve.n_ctx", "an integer"),
        ({"model": "m", "serve": {"kind": "llama.cpp", "model": "w", "tensor_parallel": 2}}, "serve",
         "tensor_parallel applies to kind vllm"),
        ({"model": "m", "price": {"input": -1, "output": 1}}, "price.input", "must be >= 0"),
        ({"model": "m", "price": {"input": 1}}, "price.output", "missing"),
        ({"model": "m", "batch": True, "api_type": "litellm"}, "", "needs a provider's batch API"),
        ({"model": "m", "serve": {"kind": "vllm", "model": "w"}, "api_type": "anthropic"}, "", "OpenAI wire"),
    ],
)  # fmt: skip
def test_the_first_problem_is_named_with_its_place(body: dict[str, Any], where: str, message: str) -> None:
    with pytest.raises(FieldError) as raised:
        ModelSpec.model_validate(body)
    assert raised.value.where == where and message in raised.value.msg


def test_shorthands_and_defaults_read_as_before() -> None:
    claude = ModelSpec.model_validate({"model": "anthropic/claude-x"})
    assert (claude.api_type, claude.model) == ("anthropic", "claude-x")
    assert ModelSpec.model_validate({"model": "m", "endpoints": []}).endpoints is None
    served = ModelSpec.model_validate({"model": "m", "serve": {"kind": "llama.cpp", "model": "w.gguf"}})
    assert served.parallel == 1  # the server's slots, where parallel is not given
    given = ModelSpec.model_validate(
        {"model": "m", "parallel": 8, "serve": {"kind": "llama.cpp", "model": "w"}}
    )
    assert given.parallel == 8
    with pytest.raises(FieldError):
        ModelSpec(model="m", parallel=0)  # by keyword too
    keyword = ModelSpec(model="m", sys_prompt="s", top_p=0.5)  # other names and kept keys, as in a file
    assert (keyword.system_prompt, keyword.model_extra) == ("s", {"top_p": 0.5})
    assert keyword == ModelSpec.model_validate({"model": "m", "sys_prompt": "s", "top_p": 0.5})


def test_fields_given_copies_and_dumps_behave_as_the_code_expects() -> None:
    spec = ModelSpec.model_validate({"model": "m", "top_p": 0.9, "seed": 3, "api_key": "sk-secret"})
    # the keys given, kept ones included, as pydantic counted them
    assert spec.model_fields_set == {"model", "api_key", "top_p", "seed"}
    assert spec.model_extra == {"top_p": 0.9, "seed": 3}
    assert spec.passthrough_params() == {"top_p": 0.9, "seed": 3}
    spec.tokenizer = "o200k"  # assigned once built: counts as given
    assert "tokenizer" in spec.model_fields_set
    copied = spec.model_copy(update={"alias": "a", "model_string": "openai/m", "temperature": 0.5})
    assert (copied.alias, copied.temperature, copied.model_extra["model_string"]) == ("a", 0.5, "openai/m")
    assert "model_string" not in spec.model_extra and spec.alias == ""  # the original untouched
    assert {"alias", "temperature", "tokenizer"} <= copied.model_fields_set
    unset_left_out = {"model": "m", "tokenizer": "o200k", "top_p": 0.9, "seed": 3}
    assert spec.model_dump(exclude_unset=True) == unset_left_out
    dumped = ModelSpec(model="m", system_prompt="s").model_dump(by_alias=True, exclude_none=True)
    assert dumped["sys_prompt"] == "s" and "api_key" not in dumped and "max_tokens" not in dumped
    assert "api_key" not in spec.model_dump() and "sk-secret" not in json.dumps(spec.public_dict())
    assert "sk-secret" not in repr(spec) and "sk-secret" not in repr(Endpoint(api_key="sk-secret"))
    served = ServeSpec(kind="vllm", model="w", args=["--x"])
    assert served.model_dump(exclude={"model"}) == {
        "kind": "vllm", "gpus": None, "tensor_parallel": None, "n_ctx": None, "args": ["--x"],
        "startup_timeout": 300.0,
    }  # fmt: skip


def test_records_survive_copy_and_pickle_with_what_they_hold() -> None:
    endpoint = Endpoint(api_base="http://h/v1").with_key("sk-x", "MY_KEY")
    spec = ModelSpec.model_validate({"model": "m", "seed": 1, "endpoints": [{"api_base": "http://h/v1"}]})
    spec.endpoints = [endpoint]
    for again in (pickle.loads(pickle.dumps(spec)), copy.deepcopy(spec)):
        assert again == spec and again.model_extra == {"seed": 1}
        assert again.model_fields_set == spec.model_fields_set
        assert again.endpoints is not None and again.endpoints[0].key_from == "MY_KEY"
    price = Price(input=1, output=2)
    assert hash(price) == hash(Price(input=1.0, output=2.0))
    assert price.batch_rates() == Price(input=0.5, output=1)
    with pytest.raises(AttributeError):
        price.input = 3.0  # type: ignore[misc]


def test_a_runs_start_imports_no_pydantic(tmp_path: Path) -> None:
    """What issue 41 took off the way to the first request: pydantic (typer's option adapters and the
    models file's validation alike). A dry run reads the models file and every option as a run does."""
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"m": {"model": "m", "endpoints": [{"api_base": "http://127.0.0.1:9/v1"}]}}))
    argv = ["run", "--bench", str(ARENA_V2 / "question.jsonl"), "--models-file", str(models), "--model", "m",
            "--inference-only", "--max-concurrency", "8", "--out", str(tmp_path / "out"),
            "--dry-run"]  # fmt: skip
    code = (
        "import sys\n"
        "from jurist.cli import main\n"
        f"sys.argv = ['jurist', *{argv!r}]\n"
        "try:\n    main()\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))\n"
    )
    env_cache = {"JURIST_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env_cache},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"
