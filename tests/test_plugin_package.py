"""examples/plugin-benchmark, pip-installed into a fresh virtual environment, run end to end.

How the environment is made, and why it proves what it should:

* ``python -m venv --without-pip`` makes a venv that sees nothing of the dev environment (no
  ``--system-site-packages``).
* One ``.pth`` file in its site-packages adds two folders to its ``sys.path``: this checkout's ``src`` (the
  jurist under test, first) and the dev environment's site-packages (jurist's dependencies, and pip). Python
  does not read ``.pth`` files inside folders added that way, so the dev environment's own editable jurist
  is not what gets imported; the test checks which one is.
* The venv's own pip (found through that line) installs the example with ``--no-deps --no-build-isolation
  --no-index`` into the venv's site-packages: a real wheel, built by the dev environment's setuptools
  (pinned in requirements.lock), its ``*.dist-info`` with ``entry_points.txt``, offline.

So ``jurist run --bench plain-language`` can only find the benchmark as any installed plugin is found: by
importlib.metadata reading that distribution's entry points. Then against the mock server, with a grader
whose verdicts follow a rule on the criterion: ``jurist run`` (the score is the one the rule implies),
``jurist show`` (the same row), a second run (nothing sent), ``--judge-prompt`` in place of the package's
prompt, ``jurist view`` (the static page),
``jurist list`` (the plugin and its package) and the judge card.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from conftest import write_models_file
from mock_openai import MockOpenAI

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugin-benchmark"
GRADER_START = "You are checking one answer against one point of a marking scheme."
_CRITERION = re.compile(r"<criterion>\n(.*?)\n</criterion>", re.DOTALL)

pytestmark = pytest.mark.slow  # a venv and a pip install, then five jurist processes: ~30 s under load


def met_rule(criterion: str) -> bool:
    """The mock grader's verdict: met when the criterion starts "Says" or "Uses" (one of those describes a
    fault, so a met negative criterion is exercised too)."""
    return criterion.startswith(("Says", "Uses"))


class GradingMock(MockOpenAI):
    """The mock server, answering the plugin's grader requests with a JSON verdict that follows
    :func:`met_rule`; every other request as the mock answers it."""

    def _reply(self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> web.Response:
        response = super()._reply(model, messages, body)
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        if user.startswith(GRADER_START):
            found = _CRITERION.search(user)
            assert found is not None
            payload = json.loads(response.body)  # type: ignore[arg-type]
            verdict = {"met": met_rule(found.group(1)), "reason": "the test's rule"}
            payload["choices"][0]["message"]["content"] = json.dumps(verdict)
            response.body = json.dumps(payload).encode()
        return response


def expected_score() -> float:
    """The mean over the three answers of (points of met criteria / positive points), clipped to [0, 1]."""
    source = EXAMPLE / "src" / "jurist_plain_language" / "questions.jsonl"
    scores = []
    for line in source.read_text(encoding="utf-8").splitlines():
        rubric = json.loads(line)["rubric"]
        possible = sum(item["points"] for item in rubric if item["points"] > 0)
        scores.append(sum(item["points"] for item in rubric if met_rule(item["criterion"])) / possible)
    return min(1.0, max(0.0, sum(scores) / len(scores)))


def fresh_venv(folder: Path) -> tuple[Path, dict[str, str]]:
    """The venv with the example installed, and the environment its commands run in (no PYTHONPATH)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    dev_site = sysconfig.get_paths()["purelib"]
    Path(purelib, "jurist-under-test.pth").write_text(f"{ROOT / 'src'}\n{dev_site}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env |= {"COLUMNS": "400", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    source = shutil.copytree(
        EXAMPLE, folder.parent / "plugin-source", ignore=shutil.ignore_patterns("__pycache__")
    )
    pip = [
        str(python),
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        str(source),
    ]
    installed = subprocess.run(pip, capture_output=True, text=True, timeout=300, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert list(Path(purelib).glob("jurist_plain_language-0.1.0.dist-info/entry_points.txt"))
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import jurist, jurist_plain_language as p; print(jurist.__file__); print(p.__file__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    jurist_file, plugin_file = where.stdout.split()
    assert Path(jurist_file).is_relative_to(ROOT / "src") and Path(plugin_file).is_relative_to(purelib)
    return python, env


def test_the_example_plugin_installed_by_pip_runs_shows_views_and_lists(tmp_path: Path) -> None:
    python, env = fresh_venv(tmp_path / "venv")

    def jurist(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), "-m", "jurist", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )

    server = GradingMock()
    server.start()
    try:
        write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}, "g": {}})
        common = [
            "run",
            "--bench",
            "plain-language",
            "--model",
            "m",
            "--judge",
            "g",
            "--models-file",
            "m.yaml",
        ]
        common += ["--format", "json", "--no-progress", "--no-check"]
        args = [*common, "--out", "run", "--judge-card", "10"]
        first = jurist(*args)
        assert first.returncode == 0, first.stderr
        (row,) = json.loads(first.stdout)
        assert row["model"] == "m" and row["judge"] == "g" and row["n_answers"] == 3
        assert row["score"] == pytest.approx(expected_score(), abs=1e-12)
        graded = [b for b in server.stats.bodies if b["model"] == "g"]
        assert graded and all(b["messages"][0]["content"].startswith(GRADER_START) for b in graded)
        assert server.stats.requests_by_model["m"] == 3
        shown = jurist("show", "run", "--format", "json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout) == [row]
        sent = server.stats.requests
        again = jurist(*args)
        assert again.returncode == 0 and server.stats.requests == sent, again.stderr  # all found on disk
        packaged = (EXAMPLE / "src" / "jurist_plain_language" / "grader_prompt.txt").read_text(
            encoding="utf-8"
        )
        (tmp_path / "mine.txt").write_text(packaged.replace("Judge only this criterion.", "Be brief."))
        custom = jurist(*common, "--out", "run-mine", "--judge-prompt", "mine.txt")
        assert custom.returncode == 0, custom.stderr  # --judge-prompt replaces the plugin's own prompt
        regraded = [b for b in server.stats.bodies if b["model"] == "g"][len(graded) :]
        assert regraded and all("Be brief." in b["messages"][0]["content"] for b in regraded)
    finally:
        server.stop()

    run_json = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert run_json["bench"] == "plain-language" and run_json["judge_kind"] == "rubric"
    card = json.loads((tmp_path / "run" / "judge_card.json").read_text(encoding="utf-8"))["judges"]["g"]
    assert card["kind"] == "rubric" and card["probe_requests"] > 0
    lenience = card["probes"]["lenience"]  # the rule meets "Says ..." criteria whatever the answer says
    assert lenience["n"] > 0 and lenience["estimate"] > lenience["threshold"]

    page = jurist("view", "run", "--out", "page.html")
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "plain-language" in html and "fixed-rate mortgage" in html

    listed = jurist("list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    (record,) = [r for r in json.loads(listed.stdout) if r["name"] == "plain-language"]
    assert record["package"] == "jurist-plain-language 0.1.0" and record["kind"] == "rubric"
    assert all(need["present"] and need["source"] == "package" for need in record["needs"])
    table = jurist("list")
    assert "plain-language: from the installed package jurist-plain-language 0.1.0" in table.stdout
