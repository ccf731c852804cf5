"""The pre-run check on a run the request cache answers: no chat probe when nothing is to be sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import write_models_file
from jurist.engine.servers.base import free_port
from jurist.errors import JuristError


def test_a_cached_rerun_into_a_new_directory_sends_no_chat_request(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge": {}})
    args: dict[str, Any] = {"models_file": models, "models": ["strong"], "judges": ["judge"], "limit": 3}
    first = run_quiet(**args, out=tmp_path / "one", check=True)
    assert first.exit_code == 0
    probes, requests = server.stats.probes, server.stats.requests
    assert probes == 2 and requests == 3 + 3 * 2  # a probe per model, then 3 answers and 3 x 2 games
    listings = server.models_requests
    again = run_quiet(**args, out=tmp_path / "two", check=True)
    assert again.exit_code == 0
    assert server.stats.probes == probes and server.stats.requests == requests  # 0 chat requests
    assert server.models_requests > listings  # what answers was asked with GET /v1/models only
    assert (tmp_path / "two" / "run.json").is_file()
    # One more question is not in the cache: its model and the judge are probed again.
    more = run_quiet(**args | {"limit": 4}, out=tmp_path / "three", check=True)
    assert more.exit_code == 0
    assert server.stats.probes == probes + 2 and server.stats.requests == requests + 1 + 2


def test_a_cached_model_whose_server_is_down_is_still_refused(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge": {}})
    args: dict[str, Any] = {"models": ["strong"], "judges": ["judge"], "limit": 2, "check": True}
    assert run_quiet(models_file=models, out=tmp_path / "one", **args).exit_code == 0
    data = yaml.safe_load(models.read_text())
    data["strong"]["endpoints"] = [{"api_base": f"http://127.0.0.1:{free_port()}/v1", "api_key": None}]
    models.write_text(yaml.safe_dump(data))
    requests = server.stats.requests
    # A server that does not answer cannot say which weights it serves: its cached answers do not stand in.
    with pytest.raises(JuristError, match="pre-run check found 1 problem"):
        run_quiet(models_file=models, out=tmp_path / "two", **args)
    assert server.stats.requests == requests and not (tmp_path / "two").exists()
