"""jurist's langdetect (jurist.rules.language_detect) against langdetect itself: the same probabilities,
float for float, not only the same language, on the texts IFEval's language checks see and on texts
built to reach each branch of upstream's n-gram buffer and cleaning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurist.rules.evaluate import loose_variants
from jurist.rules.language_detect import _draws_as_choice, _loaded, detect, detected

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ifeval"
LANGUAGE_IDS = {"language:response_language", "change_case:english_capital", "change_case:english_lowercase"}

EDGE_TEXTS = [
    "Hello world. This is a plain test answer.",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG, AND THEN SOME",  # a capital word drops its n-grams
    "aB Cd EF gH IJK lmN",  # upper after lower, lower after upper, capital runs
    "double  spaces   and\ttabs\n\nand newlines  ",
    " leading and trailing spaces ",
    "mail me at someone@example.com or see https://example.com/a?b=c#d today",
    "Bonjour tout le monde, comment ça va ? Très bien, merci.",
    "Привет, мир! Как дела? Hello there, a few Latin words.",  # more non-Latin than Latin: Latin removed
    "こんにちは世界、カタカナもあります。漢字と日本語。",
    "你好，世界。这是一个简单的测试。",
    "안녕하세요 세계",
    "Xin chào thế giới, tiếng Việt có dấu: ạ ả ấ ầ ẩ ẫ ậ",
    "Tiếng Việt với dấu tổ hợp: a\u0300 e\u0301 o\u0303",  # combining marks: upstream's Vietnamese step
    "Romanian: ș ț şi ţ",
    "مرحبا بالعالم ی",
    "a",
    "Ab",
    "x" * 12000,  # past upstream's 10,000 characters
    "Eine Übersetzung ins Deutsche, bitte. Grüße aus München!",
    "emoji 😀 and a lone surrogate \ud83d here",
    "Ελληνικά γράμματα with some Latin words [brackets] and ^carets^ `ticks`",  # [\\]^_` are "Latin"
    "ấầẩẫậ ắằẳẵặ ẹẻẽ ab",  # Latin Extended Additional counts as non-Latin (upstream's slip)
    ("word " * 2500) + "   tail after the cut",
]


def _texts() -> list[str]:
    inputs = [json.loads(line) for line in (DATA / "input_data_gpt4_20231107_145030.jsonl").open()]
    answers = DATA / "input_response_data_gpt4_20231107_145030.jsonl"
    responses = [json.loads(line)["response"] for line in answers.open()]
    texts: dict[str, None] = {}
    for row, response in zip(inputs, responses, strict=True):
        if LANGUAGE_IDS & set(row["instruction_id_list"]):
            texts.update(dict.fromkeys(v for v in loose_variants(response) if v.strip()))
    return list(texts)


def _factory() -> Any:
    """langdetect's own factory, its profiles loaded as upstream loads them."""
    from langdetect import detector_factory

    detector_factory.init_factory()
    return detector_factory._factory


def _upstream(text: str) -> Any:
    """langdetect's own detector, seeded with 0: its probabilities and language, or the error it raises."""
    from langdetect.detector import Detector

    detector = Detector(_factory())
    detector.seed = 0
    detector.append(text)
    try:
        language = detector.detect()
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return repr(exc)
    return detector.langprob, language


def _jurist(text: str) -> Any:
    try:
        detector = detected(text, seed=0)
        return detector.langprob, detector.detect()
    except Exception as exc:  # noqa: BLE001
        return repr(exc)


def test_the_profiles_read_here_are_the_factorys_numbers() -> None:
    """Every n-gram upstream's factory knows, with every one of its 55 probabilities bit for bit, in the
    factory's language order, and nothing else."""
    import numpy as np

    from jurist.rules.language_detect import _word_keys

    factory, profiles = _factory(), _loaded()
    assert profiles.langlist == factory.langlist
    words = list(factory.word_lang_prob_map)
    keys = _word_keys(words)
    assert len(profiles.keys) == len(words)
    rows = profiles.rows_of(keys)
    assert len(rows) == len(words)
    expected = np.array([factory.word_lang_prob_map[word] for word in words], dtype=np.float64)
    assert np.array_equal(profiles.dense(rows).view(np.uint64), expected.view(np.uint64))


def test_ifeval_texts_get_upstreams_probabilities_exactly() -> None:
    texts = _texts()
    assert len(texts) > 150
    differ = [text[:60] for text in texts if _upstream(text) != _jurist(text)]
    assert differ == []


@pytest.mark.parametrize("text", EDGE_TEXTS, ids=range(len(EDGE_TEXTS)))
def test_edge_texts_get_upstreams_probabilities_exactly(text: str) -> None:
    assert _jurist(text) == _upstream(text)


def test_detect_names_the_language_and_raises_where_upstream_does() -> None:
    from langdetect import LangDetectException

    assert detect("Bonjour tout le monde, comment ça va ? Très bien, merci.") == "fr"
    assert detect("This is plainly an English sentence about the weather.") == "en"
    for featureless in ("12345 678", "😀😀", "someone@example.com"):
        with pytest.raises(LangDetectException):
            detect(featureless)


def test_the_fast_draws_are_the_ones_in_use_here() -> None:
    """On this Python, drawing by ``getrandbits`` repeats ``random.Random.choice``, so the fast path (not
    the ``choice`` fallback) is what the probabilities above were compared on."""
    from jurist.rules import language_detect

    _loaded()
    assert _draws_as_choice() and language_detect._BULK_DRAWS


def test_the_stepwise_trials_give_the_same_probabilities(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-draw-at-a-time trials (where bulk draws would not repeat ``choice``) are kept exact too."""
    from jurist.rules import language_detect

    texts = [*EDGE_TEXTS[:8], *_texts()[:20]]
    bulk = [_jurist(text) for text in texts]
    monkeypatch.setattr(language_detect, "_BULK_DRAWS", False)
    assert [_jurist(text) for text in texts] == bulk
