"""The mock server in a process of its own: started again on other ports when one chosen for it was
taken before it could bind (the suite's own client connections share the port range)."""

from __future__ import annotations

import socket
import urllib.request

import pytest

import mock_process


def test_a_port_taken_before_the_mock_binds_it_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = mock_process.free_ports
    taken: list[socket.socket] = []

    def racing(count: int) -> list[int]:
        ports = chosen(count)
        if not taken:  # the first choice loses its first port to someone else
            sock = socket.socket()
            sock.bind(("127.0.0.1", ports[0]))
            sock.listen()
            taken.append(sock)
        return ports

    monkeypatch.setattr(mock_process, "free_ports", racing)
    process, urls = mock_process.spawn_mock(2)
    try:
        lost = taken[0].getsockname()[1]
        assert len(urls) == 2 and all(f":{lost}/" not in url for url in urls)
        for url in urls:
            urllib.request.urlopen(f"{url}/models", timeout=5).read()  # noqa: S310 (loopback)
    finally:
        mock_process.stop_process(process)
        taken[0].close()


def test_ports_chosen_together_are_distinct() -> None:
    assert len(set(mock_process.free_ports(64))) == 64
