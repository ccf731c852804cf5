"""NLTK's tokenizers loaded part by part (:func:`jurist.rules.nltk_data.nltk_part`): the IFEval checks
import neither scipy nor scikit-learn, the tokens are NLTK's own on every IFEval and IFBench answer shipped,
and ``import nltk`` afterwards is the whole NLTK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import SHARED_DATA

SRC = Path(__file__).resolve().parents[1] / "src"

_PROGRAM = """
import json, sys
from jurist.rules import checkers
from jurist.rules.ifeval_words import _word_runs
from jurist.rules.nltk_data import sent_tokenize, word_tokenize

texts = [json.loads(line)[key] for path, key in json.loads(sys.argv[1]) for line in open(path)]
texts = list(dict.fromkeys(texts))
ours = [(sent_tokenize(t), word_tokenize(t), _word_runs().tokenize(t)) for t in texts]
heavy = sorted(m for m in ("scipy", "sklearn", "nltk.collocations", "nltk.tag") if m in sys.modules)
import nltk  # the whole of it, from here on
from nltk.tokenize import RegexpTokenizer
words = RegexpTokenizer(r"\\w+")
theirs = [(nltk.sent_tokenize(t), nltk.word_tokenize(t), words.tokenize(t)) for t in texts]
differ = [t[:60] for t, a, b in zip(texts, ours, theirs) if a != b]
print(json.dumps({"heavy": heavy, "texts": len(texts), "differ": differ, "whole": "scipy" in sys.modules,
                  "pos_tag": callable(nltk.pos_tag), "version": nltk.__version__}))
"""


def test_tokens_are_nltks_own_and_nothing_heavy_is_imported() -> None:
    files = [
        (str(SHARED_DATA / "ifeval" / "input_response_data_gpt4_20231107_145030.jsonl"), "response"),
        (str(SHARED_DATA / "ifbench" / "reference" / "sample_output.jsonl"), "response"),
    ]
    env = {**os.environ, "PYTHONPATH": str(SRC), "NLTK_DATA": str(SHARED_DATA / "nltk_data")}
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, json.dumps(files)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["heavy"] == []
    assert found["texts"] > 800
    assert found["differ"] == []
    assert found["whole"] and found["pos_tag"] and found["version"][0].isdigit()
