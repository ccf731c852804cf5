"""What a new user still tripped over (the [first-use] issue): one test per item, from the command line as a
user types it, against the mock server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file


def jurist(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def question_file(tmp_path: Path, n: int = 4) -> Path:
    path = tmp_path / "question.jsonl"
    path.write_text("".join(json.dumps({"uid": f"q{i}", "prompt": f"prompt {i}"}) + "\n" for i in range(n)))
    return path


@pytest.fixture
def models(tmp_path: Path, mock_server: Any) -> Path:
    server = mock_server()
    aliases = ["strong", "mixed", "judge-good", "judge-broken", "base"]
    return write_models_file(tmp_path / "models.yaml", server.base_url, {a: {} for a in aliases})


# -- item 2: every unknown name gets the closest valid spelling ---------------------------------------------
@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["run", "--model", "opnai/gpt-4", "--no-check"], "did you mean openai/gpt-4?"),
        (["run", "--models-file", "models.yaml", "--model", "strnog", "--no-check"], "did you mean strong?"),
        (["run", "--models-file", "models.yaml", "--judge", "judge-god", "--no-check"], "judge-good?"),
        (["run", "--bench", "ifevl"], "did you mean ifeval?"),
        (["run", "--style-control", "lenght"], "did you mean length?"),
        (["run", "--method", "btt"], "did you mean bt?"),
        (["run", "--format", "jsno"], "did you mean json?"),
        (["run", "--batch", "judge"], "did you mean judges?"),
        (["run", "--judge-protocol", "arena-hrad", "--limit", "1", "--no-check"], "did you mean arena-hard?"),
        (["show", "RUN", "--style-control", "lenght"], "did you mean length?"),
        (["show", "RUN", "--method", "elo"], "is not winrate or bt"),
        (["show", "RUN", "--format", "markdwn"], "did you mean markdown?"),
    ],
)
def test_an_unknown_name_gets_the_closest_valid_spelling(
    tmp_path: Path, models: Path, args: list[str], meant: str
) -> None:
    (tmp_path / "RUN").mkdir()
    result = jurist(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()  # one line
    assert meant in line and "vllm/opnai" not in line and "several run directories" not in line
