"""Models-file validation: clear errors naming the file, the alias and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurist.benchmarks.arena_hard import load_question_file
from jurist.config import load_models_file
from jurist.errors import InputError
from jurist.judging.verdict import parse_verdict, swap_label


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text)
    return path


def test_arena_hard_api_config_shape_is_accepted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
gpt-4.1:
  model: gpt-4.1
  endpoints: null
  api_type: openai
  parallel: 64
  max_tokens: 32000
  temperature: 0.0
local:
  model: Qwen/QwQ-32B
  endpoints:
    - api_base: http://127.0.0.1:8000/v1/
      api_key: ${LOCAL_KEY}
  api_type: openai
  parallel: 4
  sys_prompt: Be brief.
  reasoning_effort: high
""",
    )
    specs = load_models_file(path, env={"OPENAI_API_KEY": "sk-from-env-123", "LOCAL_KEY": "local-key-456"})
    assert specs["gpt-4.1"].resolved_endpoints()[0].base_url == "https://api.openai.com/v1"
    assert specs["gpt-4.1"].resolved_endpoints()[0].api_key == "sk-from-env-123"
    local = specs["local"]
    assert local.resolved_endpoints()[0].base_url == "http://127.0.0.1:8000/v1"
    assert local.resolved_endpoints()[0].api_key == "local-key-456"
    assert local.system_prompt == "Be brief." and local.passthrough_params() == {"reasoning_effort": "high"}
    assert "local-key-456" not in str(local.public_dict())


def test_a_serve_block_is_a_managed_server_with_no_endpoints_and_no_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
small:
  model: small-served
  serve:
    kind: llama.cpp
    model: weights/small.gguf
    n_ctx: 4096
    args: [--n_gpu_layers, "0"]
""",
    )
    spec = load_models_file(path, env={"OPENAI_API_KEY": "sk-not-for-local-servers"})["small"]
    assert spec.serve is not None and spec.endpoints is None and spec.resolved_endpoints() == []
    assert spec.serve.model == str(tmp_path / "weights" / "small.gguf")  # relative to the models file
    assert (spec.serve.n_ctx, spec.serve.args, spec.serve.startup_timeout) == (
        4096,
        ["--n_gpu_layers", "0"],
        300,
    )
    public = spec.public_dict()
    assert public["serve"]["kind"] == "llama.cpp" and public["endpoints"] == []
    assert "sk-not-for-local-servers" not in str(public)


def test_openai_key_is_not_handed_to_litellm_models(tmp_path: Path) -> None:
    path = write(tmp_path, "claude:\n  model: anthropic/claude-3-5-sonnet\n  api_type: litellm\n")
    specs = load_models_file(path, env={"OPENAI_API_KEY": "sk-openai-only-123"})
    assert specs["claude"].resolved_endpoints()[0].api_key is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "m:\n  model: x\n  parallel: 0\n",
            r"models\.yaml: model 'm': field parallel: must be >= 1",
        ),
        ("m:\n  parallel: 2\n", r"model 'm': field model: missing \(required\)"),
        ("m:\n  model: x\n  api_type: carrier-pigeon\n", r"model 'm': field api_type"),
        ("m:\n  model: x\n  temperature: hot\n", r"model 'm': field temperature"),
        ("m: [1, 2]\n", r"model 'm': expected a mapping"),
        (
            "m:\n  model: x\n  endpoints:\n    - api_base: h\n      api_key: ${NOPE}\n",
            r"model 'm': endpoints\[0\]: api_key refers to \$\{NOPE\}",
        ),
        ("m:\n  model: [unclosed\n", r"models\.yaml: line \d+: not valid YAML"),
        ("m:\n  model: x\n  serve: {kind: ollama, model: w}\n", r"model 'm': field serve\.kind"),
        ("m:\n  model: x\n  serve: {kind: llama.cpp, model: w, ngl: 3}\n", r"model 'm': field serve\.ngl"),
        ("m:\n  model: x\n  serve: {kind: llama.cpp}\n", r"model 'm': field serve\.model: missing"),
        (
            "m:\n  model: x\n  serve: {kind: llama.cpp, model: w}\n  endpoints: [{api_base: h}]\n",
            r"model 'm': serve: and endpoints: exclude each other",
        ),
        (
            "m:\n  model: x\n  api_type: litellm\n  serve: {kind: llama.cpp, model: w}\n",
            r"model 'm': .*serve: speaks the OpenAI wire format",
        ),
    ],
)
def test_bad_models_files_name_file_alias_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_models_file(write(tmp_path, text), env={})


def test_question_file_shapes_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"uid": "a", "category": "hard_prompt", "prompt": "P1"}\n\n'
        '{"question_id": "b", "category": "arena-hard-v0.1", "turns": [{"content": "P2"}]}\n'
    )
    bench = load_question_file(path)
    assert [(q.uid, q.prompt, q.category) for q in bench.questions] == [
        ("a", "P1", "hard_prompt"),
        ("b", "P2", "arena-hard-v0.1"),
    ]
    path.write_text('{"uid": "a", "prompt": "P1"}\n\n{"uid": "b", "turns": []}\n')
    with pytest.raises(InputError, match=r"q\.jsonl: line 3: field 'turns'"):
        load_question_file(path)
    path.write_text('{"uid": "a", "prompt": "P1"}\n{"uid": "a", "prompt": "P2"}\n')
    with pytest.raises(InputError, match=r"line 2: field 'uid': duplicate"):
        load_question_file(path)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Thinking... [[A>B]]", "A>B"),
        ("first [[A>>B]] then on reflection [[B>A]]", "B>A"),  # the last valid label wins
        ("my final verdict is [[a=b]]", "A=B"),
        ("[[B>>A]] but [[A>>>B]] is not a label", "B>>A"),  # invalid strings are not labels
        ("single bracket [B>A]", "B>A"),
        ("mirrored [[A<B]]", "B>A"),
        ('{"verdict": "A>>B"}', "A>>B"),
        ("Assistant A is better.", None),
        ("[[AB]] [[A]] [[C>D]]", None),
    ],
)
def test_verdict_parsing_is_a_strict_whitelist(text: str, label: str | None) -> None:
    assert parse_verdict(text) == label


def test_swap_label_is_an_involution() -> None:
    for label in ("A>>B", "A>B", "A=B", "B>A", "B>>A"):
        assert swap_label(swap_label(label)) == label
    assert swap_label("A>>B") == "B>>A"


def test_a_model_level_api_key_serves_every_endpoint_and_stays_out_of_run_json(tmp_path: Path) -> None:
    from jurist.redact import mask

    path = write(
        tmp_path,
        """
two:
  model: m
  api_key: ${MODEL_KEY}
  endpoints:
    - api_base: http://127.0.0.1:1/v1
    - api_base: http://127.0.0.1:2/v1
      api_key: own-key-987654
default:
  model: d
  api_key: literal-key-123456
""",
    )
    specs = load_models_file(path, env={"MODEL_KEY": "model-key-555555"})
    keys = [ep.api_key for ep in specs["two"].resolved_endpoints()]
    assert keys == ["model-key-555555", "own-key-987654"]  # an endpoint's own key wins
    assert specs["default"].resolved_endpoints()[0].api_key == "literal-key-123456"
    for spec in specs.values():
        public = str(spec.public_dict())
        assert "model-key-555555" not in public and "literal-key-123456" not in public
        assert "MODEL_KEY" not in public and "api_key" not in spec.public_dict()
    assert mask("auth failed for model-key-555555") == "auth failed for ***"


@pytest.mark.parametrize(
    ("entry", "field", "hint"),
    [
        ("parralel: 4", "parralel", "parallel"),
        ("max_token: 10", "max_token", "max_tokens"),
        ("colour: blue", "colour", None),
        ("endpoints:\n    - api_base: http://x/v1\n      api_keys: k", "api_keys", "api_key"),
    ],
)
def test_an_unknown_field_is_an_error_with_a_suggestion(
    tmp_path: Path, entry: str, field: str, hint: str | None
) -> None:
    path = write(tmp_path, f"good:\n  model: m\n  top_p: 0.5\n  seed: 3\nbad:\n  model: m\n  {entry}\n")
    with pytest.raises(InputError) as info:
        load_models_file(path, env={"OPENAI_API_KEY": "sk-x-123456"})
    message = str(info.value)
    assert str(path) in message and "'bad'" in message and f"unknown field {field!r}" in message
    assert (f"did you mean {hint!r}" in message) if hint else ("did you mean" not in message)


def test_a_duplicate_alias_is_an_error_naming_it_and_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "judge:\n  model: a\nother:\n  model: b\njudge:\n  model: c\n")
    with pytest.raises(InputError) as info:
        load_models_file(path, env={"OPENAI_API_KEY": "sk-x-123456"})
    message = str(info.value)
    assert "'judge'" in message and "line 5" in message and "line 1" in message


def test_a_duplicate_field_is_an_error_too(tmp_path: Path) -> None:
    path = write(tmp_path, "judge:\n  model: a\n  parallel: 2\n  parallel: 4\n")
    with pytest.raises(InputError, match=r"line 4.*'parallel' is given twice"):
        load_models_file(path, env={"OPENAI_API_KEY": "sk-x-123456"})


def test_a_key_with_a_line_break_is_an_error_that_does_not_show_it(tmp_path: Path) -> None:
    path = write(tmp_path, "m:\n  model: m\n  api_key: |\n    sk-secret-multiline-42\n")
    with pytest.raises(InputError) as info:
        load_models_file(path, env={})
    message = str(info.value)
    assert "line break" in message and "sk-secret" not in message and "\n" not in message


def test_short_keys_are_masked_as_whole_tokens_only() -> None:
    from jurist.redact import mask, register_secret

    register_secret("k9")
    register_secret("abc12")
    assert mask("Authorization: Bearer k9") == "Authorization: Bearer ***"
    assert mask("key=abc12, other='k9'") == "key=***, other='***'"
    assert mask("rank9 task k99 abc123 xk9") == "rank9 task k99 abc123 xk9"  # not inside other words
    with pytest.raises(ValueError, match="line break") as info:
        register_secret("two\nlines")
    assert "two" not in str(info.value)


def test_dotenv_values_are_read_and_python_dotenv_waits_for_a_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    from jurist.config import load_dotenv_values

    (tmp_path / ".env").write_text("JURIST_TEST_KEY=abc\nEMPTY\n")
    assert load_dotenv_values(tmp_path) == {"JURIST_TEST_KEY": "abc"}
    probe = (
        "import sys; from pathlib import Path; from jurist.config import load_dotenv_values; "
        f"assert load_dotenv_values(Path({str(tmp_path / 'none')!r})) == {{}}; "
        "print('dotenv' in sys.modules)"
    )
    seen = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert seen.stdout.strip() == "False"
