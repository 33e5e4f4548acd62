"""``nerts-lan join --headless --address HOST:PORT`` between real processes on 127.0.0.1: the
table's own answer instead of mDNS, the same JSON lines as a join after mDNS, and one plain
error line (exit 1) for nothing listening, something that is not a table, and a refused code.
Multicast blocked end to end is tests/net_real/test_netns_by_address.py."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net_real.peers import FAST, PeerProcess


def _host(tmp: Path, *extra: str) -> PeerProcess:
    args = ["host", "--headless", "--name", "Ann", "--interface", "127.0.0.1", *FAST, *extra]
    return PeerProcess(args, tmp / "host")


def _join(tmp: Path, name: str, address: str, *extra: str) -> PeerProcess:
    args = ["join", "--headless", "--name", name, "--interface", "127.0.0.1", "--address"]
    return PeerProcess([*args, address, *FAST, *extra], tmp / name)


def _error(peer: PeerProcess) -> str:
    assert peer.finish(30) == 1, peer.stderr[-2000:]
    message: str = peer.wait_for("error")["message"]
    return message


@pytest.fixture
def foreign_server() -> Iterator[int]:
    """A program that is not a table: it greets every connection with an SSH banner."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

    thread = threading.Thread(target=serve, name="foreign-server")
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_a_joiner_by_address_plays_a_round_with_the_host(tmp_path: Path) -> None:
    host = _host(tmp_path, "--table", "By hand", "--players", "2", "--rounds", "1")
    peers = [host]
    try:
        hosting = host.wait_for("hosting")
        port = hosting["port"]
        assert hosting["addresses"] == [f"127.0.0.1:{port}"]  # what to type: its one address
        peers.append(_join(tmp_path, "Bo", f"127.0.0.1:{port}", "--rounds", "1"))
        found = peers[1].wait_for("table_found")
        assert (found["table"], found["host"], found["address"], found["port"]) == (
            "By hand",
            "Ann",
            "127.0.0.1",
            port,
        )
        assert found["needs_code"] is False
        for peer in peers:
            assert peer.finish(60) == 0, peer.stderr[-2000:]
        hashes = [{r["round"]: r["state_hash"] for r in p.events("round_over")} for p in peers]
        assert hashes[0] and hashes[0] == hashes[1]
    finally:
        for peer in peers:
            peer.stop()


def test_nothing_listening_and_a_program_that_is_no_table_are_one_plain_line_each(
    tmp_path: Path, foreign_server: int
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        free = unused.getsockname()[1]
    nobody = _join(tmp_path, "Bo", f"127.0.0.1:{free}")
    foreign = _join(tmp_path, "Cy", f"127.0.0.1:{foreign_server}")
    try:
        assert _error(nobody).startswith(f"nothing is listening at 127.0.0.1:{free}")
        assert _error(foreign) == f"127.0.0.1:{foreign_server} is not a nerts-lan table"
    finally:
        nobody.stop()
        foreign.stop()


def test_a_private_table_by_address_takes_its_code(tmp_path: Path) -> None:
    host = _host(tmp_path, "--table", "Secret", "--code", "K7PX", "--players", "2")
    peers = [host]
    try:
        port = host.wait_for("hosting")["port"]
        address = f"127.0.0.1:{port}"
        without = _join(tmp_path, "Bo", address)
        wrong = _join(tmp_path, "Cy", address, "--code", "ZZZZ")
        right = _join(tmp_path, "Di", address, "--code", "k7-px")
        peers += [without, wrong, right]
        assert without.wait_for("table_found")["needs_code"] is True
        assert _error(without) == "this table needs a code: ask its host, add --code"
        assert _error(wrong) == "the table refused us: wrong table code"
        right.wait_for("joined")
        right.wait_for("seated")
    finally:
        for peer in peers:
            peer.stop()
