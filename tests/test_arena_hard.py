"""Arena-Hard run faithfully: upstream's own judge texts (checked, loaded at run time), per-category
baselines and prompts, official baseline answers, and a stratified --limit."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.arena_hard import ARENA_HARD_BASELINES, load_question_file
from jurist.config import ModelSpec
from jurist.errors import JuristError
from jurist.judging import upstream
from jurist.judging.kinds import judge_kind_for
from jurist.judging.protocols import protocol_for
from jurist.store.jsonl import read_jsonl
from jurist.store.line_index import answer_text

OFFICIAL = SHARED_DATA / "arena-hard" / "official-prompts"
V2 = SHARED_DATA / "arena-hard" / "data" / "arena-hard-v2.0"
JUDGE = ModelSpec(alias="j", model="j")
pytestmark = pytest.mark.skipif(not OFFICIAL.is_dir(), reason="shared data not present")


def official_settings() -> dict[str, Any]:
    return dict(json.loads((OFFICIAL / "judge_settings.json").read_text(encoding="utf-8")))


def official_template() -> str:
    config = yaml.safe_load((OFFICIAL / "arena-hard-v2.0.yaml").read_text(encoding="utf-8"))
    return str(config["prompt_template"])


# -- upstream's texts reach the judge ------------------------------------------------------------------------


def test_upstream_system_prompts_and_template_reach_the_judge_byte_for_byte(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    """Each question is judged with upstream's system prompt for its category and upstream's template,
    filled as upstream fills it (``str.format``), with no paraphrase anywhere."""
    server = mock_server()
    rows = [
        {"uid": "h1", "category": "hard_prompt", "prompt": "Write a {python} sort. 'quoted'\n\nTwo lines."},
        {"uid": "c1", "category": "creative_writing", "prompt": "A poem about {braces} and rain."},
        {"uid": "h2", "category": "hard_prompt", "prompt": "Prove 1+1=2."},
    ]
    questions = tmp_path / "question.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"strong": {}, "baseline": {}, "judge-good": {}}
    )
    run_quiet(
        bench=str(questions),
        models_file=models,
        models=["strong"],
        baseline="baseline",
        judges=["judge-good"],
        out=tmp_path / "run",
    )
    settings, template = official_settings(), official_template()
    bodies = [b for b in server.stats.bodies if b["model"] == "judge-good"]
    assert len(bodies) == 2 * len(rows)
    seen = Counter()
    for body in bodies:
        system, user = body["messages"]
        row = next(r for r in rows if f"\n{r['prompt']}\n" in user["content"])
        ours, base = f"[strong] {row['prompt']}", f"[baseline] {row['prompt']}"
        expected = {
            template.format(QUESTION=row["prompt"], ANSWER_A=base, ANSWER_B=ours),
            template.format(QUESTION=row["prompt"], ANSWER_A=ours, ANSWER_B=base),
        }
        assert system == {"role": "system", "content": settings[row["category"]]["system_prompt"]}
        assert user["role"] == "user" and user["content"] in expected
        seen[row["category"]] += 1
    assert seen == {"hard_prompt": 4, "creative_writing": 2}
    records = {
        r["uid"]: r for r in read_jsonl(tmp_path / "run" / "judgments" / "judge-good" / "strong.jsonl")
    }
    assert records["c1"]["protocol"] == "arena-hard-creative" and records["h1"]["protocol"] == "arena-hard"
    assert records["c1"]["prompt_hash"] != records["h1"]["prompt_hash"] == records["h2"]["prompt_hash"]


def test_arena_hard_is_never_jurists_paraphrase() -> None:
    settings = official_settings()
    hard, creative = protocol_for("arena-hard", JUDGE), protocol_for("arena-hard-creative", JUDGE)
    assert hard.system_prompt == settings["hard_prompt"]["system_prompt"]
    assert creative.system_prompt == settings["creative_writing"]["system_prompt"]
    own = protocol_for("jurist-pairwise", JUDGE)
    assert own.system_prompt != hard.system_prompt
    assert protocol_for("jurist-creative", JUDGE).system_prompt != creative.system_prompt
    assert own.fingerprint(JUDGE) != hard.fingerprint(JUDGE)


def test_the_pairwise_kind_keys_each_category_by_its_own_prompt() -> None:
    kind = judge_kind_for("pairwise", protocol="arena-hard", default_protocol="arena-hard", spec=JUDGE)
    prompts = {c: kind.protocol_for(c).system_prompt for c in ("hard_prompt", "creative_writing", "other")}  # type: ignore[attr-defined]
    assert prompts["creative_writing"] == official_settings()["creative_writing"]["system_prompt"]
    assert prompts["other"] == prompts["hard_prompt"] != prompts["creative_writing"]
    assert kind.prompt_hash("creative_writing") != kind.prompt_hash("math") == kind.fingerprint  # type: ignore[attr-defined]
    single = judge_kind_for("pairwise", protocol="simple", default_protocol="arena-hard", spec=JUDGE)
    assert single.fingerprint == protocol_for("simple", JUDGE).fingerprint(JUDGE)


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("... my final verdict is [[a>b]]", "A>B"),  # upper-cased first, as upstream
        ("[[A>B]] on reflection [[B>>A]]", "B>>A"),  # the last match wins
        ("[[A>B]] and later [B>A]", "A>B"),  # the first pattern that matches decides
        ("no double brackets: [B<A]", "A>B"),  # the single-bracket fallback; mirrored spelling
        ("[[A>>>B]]", None),  # upstream stores it and crashes its leaderboard; jurist: no verdict
        ("[[A>B]] then [[AB]]", None),  # the last match is not a label
        ("[[ A>B ]]", None),  # upstream's patterns take no spaces
        ('{"verdict": "A>B"}', None),  # no JSON verdicts upstream
    ],
)
def test_verdicts_are_read_with_upstreams_patterns(reply: str, label: str | None) -> None:
    assert upstream.read_verdict(reply) == label
    assert protocol_for("arena-hard", JUDGE).read(reply, None, ())[0] == label


def test_the_loaded_config_names_the_patterns_the_reader_applies() -> None:
    config = yaml.safe_load((OFFICIAL / "arena-hard-v2.0.yaml").read_text(encoding="utf-8"))
    assert tuple(config["regex_patterns"]) == upstream.VERDICT_PATTERNS


# -- loading: checked files, local folder or download --------------------------------------------------------


def test_an_altered_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "prompts"
    shutil.copytree(OFFICIAL, copy)
    target = copy / "judge_settings.json"
    target.chmod(0o644)
    target.write_text(target.read_text(encoding="utf-8").replace("impartial", "partial", 1), encoding="utf-8")
    monkeypatch.setenv(upstream.PROMPTS_ENV, str(copy))
    with pytest.raises(JuristError, match=r"judge_settings\.json: sha256 .* refusing it") as caught:
        upstream.load_arena_hard_settings()
    assert "\n" not in str(caught.value)
    monkeypatch.setenv(upstream.PROMPTS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(JuristError, match=r"JURIST_ARENA_HARD_PROMPTS=.*not a folder"):
        protocol_for("arena-hard", JUDGE)


def _judge_utils_like_upstream() -> str:
    """A module shaped as upstream's (a prompt constant, then JUDGE_SETTINGS naming it), from the data."""
    settings = official_settings()
    og = settings["hard_prompt"]["system_prompt"]
    entries = []
    for category, entry in settings.items():
        prompt = "OG_ARENA_HARD_PROMPT" if entry["system_prompt"] == og else repr(entry["system_prompt"])
        baseline = entry["baseline"]
        entries.append(f'    {category!r}: {{"baseline": {baseline!r},\n        "system_prompt": {prompt}}},')
    body = "\n".join(entries)
    return f"OG_ARENA_HARD_PROMPT = {og!r}\n\nimport os  # never run\n\nJUDGE_SETTINGS = {{\n{body}\n}}\n"


@pytest.fixture
def upstream_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, dict[str, int]]]:
    """Raw files at ``/<commit>/<path>`` on 127.0.0.1, with RAW_BASE pointed there; counts the requests."""
    root = tmp_path / "served"
    config = root / upstream.COMMIT / upstream.CONFIG_FILE
    config.parent.mkdir(parents=True)
    shutil.copyfile(OFFICIAL / "arena-hard-v2.0.yaml", config)
    module = root / upstream.COMMIT / upstream.SETTINGS_FILE
    module.parent.mkdir(parents=True)
    module.write_text(_judge_utils_like_upstream(), encoding="utf-8")
    # judge_utils.py itself is not in the shared data: the stand-in gets its own expected hash.
    monkeypatch.setitem(
        upstream.SHA256, upstream.SETTINGS_FILE, hashlib.sha256(module.read_bytes()).hexdigest()
    )
    hits: dict[str, int] = Counter()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            hits[self.path] += 1
            super().do_GET()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.delenv(upstream.PROMPTS_ENV, raising=False)
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)  # else its arena-hard/official-prompts/ is read
    monkeypatch.setattr(upstream, "RAW_BASE", f"http://127.0.0.1:{server.server_address[1]}")
    yield root, hits
    server.shutdown()
    server.server_close()


def test_the_pinned_files_are_downloaded_checked_and_cached(
    upstream_server: tuple[Path, dict[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, hits = upstream_server
    downloaded = upstream.load_arena_hard_settings()
    assert sorted(hits) == sorted(
        f"/{upstream.COMMIT}/{n}" for n in (upstream.CONFIG_FILE, upstream.SETTINGS_FILE)
    )
    monkeypatch.setenv(upstream.PROMPTS_ENV, str(OFFICIAL))
    local = upstream.load_arena_hard_settings()
    assert downloaded.system_prompts == local.system_prompts and downloaded.baselines == local.baselines
    assert downloaded.prompt_template == local.prompt_template
    monkeypatch.delenv(upstream.PROMPTS_ENV)
    cached = upstream.cache_root() / "arena-hard-auto" / upstream.COMMIT / upstream.CONFIG_FILE
    assert cached.read_bytes() == (OFFICIAL / "arena-hard-v2.0.yaml").read_bytes()
    upstream.load_arena_hard_settings()
    assert sum(hits.values()) == 2  # the second load reads the cache


def test_a_download_that_does_not_match_is_refused_and_not_kept(
    upstream_server: tuple[Path, dict[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = upstream_server
    config = root / upstream.COMMIT / upstream.CONFIG_FILE
    config.write_text(config.read_text() + "\n# tampered\n")
    with pytest.raises(JuristError, match=r"arena-hard-v2\.0\.yaml: sha256 .* refusing it"):
        upstream.load_arena_hard_settings()
    assert not (upstream.cache_root() / "arena-hard-auto" / upstream.COMMIT / upstream.CONFIG_FILE).exists()
    monkeypatch.setattr(upstream, "RAW_BASE", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(JuristError, match=r"could not download .*check the network, or set \$JURIST_ARENA"):
        upstream.load_arena_hard_settings()


# -- the v2.0 question file as a benchmark -------------------------------------------------------------------


@pytest.mark.skipif(not V2.is_dir(), reason="shared data not present")
def test_a_v2_folder_is_judged_per_category_against_official_baseline_answers() -> None:
    bench = load_question_file(V2 / "question.jsonl")
    assert dict(bench.baselines_by_category) == {
        "hard_prompt": "o3-mini-2025-01-31",
        "creative_writing": "gemini-2.0-flash-001",
    }
    assert {c: official_settings()[c]["baseline"] for c in ARENA_HARD_BASELINES} == ARENA_HARD_BASELINES
    assert bench.score_categories == ("hard_prompt", "creative_writing")
    assert bench.baselines() == ["o3-mini-2025-01-31", "gemini-2.0-flash-001"]
    shipped = bench.shipped_answers["o3-mini-2025-01-31"]  # gemini's answers are not in the folder
    assert list(bench.shipped_answers) == ["o3-mini-2025-01-31"] and len(shipped) == 750
    with (V2 / "model_answer" / "o3-mini-2025-01-31.jsonl").open() as fh:
        first = json.loads(fh.readline())
    assert shipped[first["uid"]] == answer_text(first)
    first500 = bench.limited(500)
    assert {q.category for q in first500.questions} == {"hard_prompt"}
    assert first500.baselines() == ["o3-mini-2025-01-31"] and first500.score_categories == ()
    overridden = bench.with_baseline("mine")
    assert overridden.baselines() == ["mine"]


def test_a_file_with_other_categories_still_needs_a_baseline(tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"uid": "a", "category": "hard_prompt", "prompt": "x"}\n{"uid": "b", "prompt": "y"}\n'
    )
    bench = load_question_file(questions)
    assert bench.baselines() == [] and bench.score_categories == () and not bench.shipped_answers


@pytest.mark.skipif(not V2.is_dir(), reason="shared data not present")
def test_a_stratified_limit_keeps_each_categorys_share_deterministically() -> None:
    bench = load_question_file(V2 / "question.jsonl")
    subset = bench.limited(30, sample="stratified", seed=0)
    counts = Counter(q.category for q in subset.questions)
    assert counts == {"hard_prompt": 20, "creative_writing": 10}
    order = {q.uid: i for i, q in enumerate(bench.questions)}
    assert [order[q.uid] for q in subset.questions] == sorted(order[q.uid] for q in subset.questions)
    again = bench.limited(30, sample="stratified", seed=0)
    assert [q.uid for q in again.questions] == [q.uid for q in subset.questions]
    other = bench.limited(30, sample="stratified", seed=1)
    assert [q.uid for q in other.questions] != [q.uid for q in subset.questions]
    selection = subset.info["selection"]
    assert selection["uids"] == [q.uid for q in subset.questions]
    assert selection["method"] == "stratified" and selection["seed"] == 0 and selection["of"] == 750
    assert (
        len(selection["uids_sha256"]) == 16
        and selection["uids_sha256"] != other.info["selection"]["uids_sha256"]
    )
    assert subset.score_categories == ("hard_prompt", "creative_writing")
    assert Counter(q.category for q in bench.limited(2, sample="stratified").questions) == {
        "hard_prompt": 1,
        "creative_writing": 1,
    }
    assert bench.limited(5).info["selection"]["method"] == "first"
    with pytest.raises(JuristError, match="--sample"):
        bench.limited(5, sample="random")  # type: ignore[arg-type]
