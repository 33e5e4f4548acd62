"""Hostile input against a real listening peer, in the middle of a real game.

Two headless peers play a match over real TCP on 127.0.0.1 while a stranger connects to the host's
port again and again: random bytes, an oversized frame, a truncated one, hellos with a wrong
version, wrong table or wrong types, a hello without a peer key, a well-formed hello (with a key
of the stranger's own, proven) followed by forged ordering frames, and a flood. Every time the
host closes that connection with a logged reason naming the problem, and at the end the honest
game has gone on: both peers finish their rounds with the same state hashes.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path

import msgpack

from nerts_lan.lan.advert import PROTOCOL
from net import PeerKey
from net._mesh.handshake import proof_message
from net._order.messages import Action, Heartbeat, encode_message
from tests.net_real.peers import PeerProcess, headless

SLOW = ["--bot", "hard", "--bot-delay", "0.3", "--verbose"]
_HEADER = struct.Struct(">I")
_HELLO, _DATA, _EPHEMERAL, _PROOF = 0, 1, 5, 8


def test_a_stranger_throwing_garbage_at_the_host_spoils_nothing(tmp_path: Path) -> None:
    host = PeerProcess(
        headless("host", "Ann", "Hostile", *SLOW, "--players", "2", "--rounds", "2"),
        tmp_path / "ann",
    )
    bo = None
    try:
        hosting = host.wait_for("hosting")
        table_id, port = hosting["id"], hosting["port"]
        bo = PeerProcess(headless("join", "Bo", "Hostile", *SLOW, "--rounds", "2"), tmp_path / "bo")
        host.wait_for("round_started", round=1, timeout=30)
        rng = random.Random(7)

        # Noise: the host reads a length and a body, and closes at the first thing that is wrong.
        _closed_after(port, rng.randbytes(3000))
        _closed_after(port, _HEADER.pack(0xFFFF_FFF0) + b"x" * 64)
        _closed_after(port, _HEADER.pack(100) + b"\x93" * 10, expect_close=False)
        _closed_after(port, _frame(rng.randbytes(200)))
        _closed_after(port, _frame(msgpack.packb({"kind": "hello"})))
        # Hellos that are well formed but wrong, answered with a reason a person can read.
        refusal = _closed_after(port, _hello(99, table_id, "mallory"))
        assert b"protocol version 99" in refusal
        refusal = _closed_after(port, _hello(PROTOCOL, "not-this-table", "mallory"))
        assert b"not-this-table" in refusal
        _closed_after(port, _frame(msgpack.packb([_HELLO, 1, table_id, 7, "x", 1, 0, -1, None])))
        # A hello without a peer key: every peer of the game has one.
        refusal = _closed_after(port, _hello(PROTOCOL, table_id, "mallory"))
        assert b"needs a peer key" in refusal
        # A stranger with a proper hello (and a key), then ordering frames that make no sense.
        for payload in (
            rng.randbytes(50),
            msgpack.packb([1, 2, 3]),
            encode_message(Heartbeat(ts=5, incarnation=1, seen={})),
            encode_message(Action(ts=10**15, incarnation=1, seen={}, payload={"k": "start"})),
        ):
            _closed_after(
                port,
                _frame(msgpack.packb([_DATA, 1, payload])),
                expect_close=False,
                opening=_keyed_hello(table_id, "mallory"),
            )
        # A flood of pointer frames and data frames: it must not stall the honest game.
        flood = b"".join(
            _frame(msgpack.packb([_EPHEMERAL, rng.randbytes(100)])) for _ in range(20000)
        )
        opening = _keyed_hello(table_id, "flooder")
        _closed_after(port, flood, expect_close=False, linger=1.0, opening=opening)

        for peer in (host, bo):
            assert peer.finish(150) == 0, peer.stderr[-3000:]
        hashes = [
            {r["round"]: r["state_hash"] for r in peer.events("round_over")} for peer in (host, bo)
        ]
        assert sorted(hashes[0]) == [1, 2] and hashes[0] == hashes[1]
        problems = host.stderr
        for reason in ("over the", "undecodable frame", "malformed hello", "protocol version 99"):
            assert reason in problems, (reason, problems[-3000:])
        assert "mallory" in problems  # the stranger's forged frames are logged by its name
    finally:
        host.stop()
        if bo is not None:
            bo.stop()


# --- a raw client ---------------------------------------------------------------------------


def _frame(body: bytes) -> bytes:
    return _HEADER.pack(len(body)) + body


def _hello(protocol: int, table: str, peer: str) -> bytes:
    incarnation = int(time.time() * 1000)
    return _frame(msgpack.packb([_HELLO, protocol, table, peer, peer, incarnation, 0, -1, None]))


def _keyed_hello(table: str, name: str) -> Callable[[socket.socket], None]:
    """An opening that links as a stranger with a key of its own: its hello, then the proof
    of its key once the host's hello and proof have come."""

    def opening(connection: socket.socket) -> None:
        key = PeerKey.generate()
        nonce = random.randbytes(16)
        incarnation = int(time.time() * 1000)
        hello = [_HELLO, PROTOCOL, table, key.peer_id(name), name, incarnation, 0, -1, None]
        mine = msgpack.packb([*hello, None, [key.public_bytes, nonce]])
        connection.sendall(_frame(mine))
        theirs = _read_frame(connection)
        _read_frame(connection)  # the host's proof
        proof = key.sign(proof_message(True, mine, theirs, b""))
        connection.sendall(_frame(msgpack.packb([_PROOF, proof])))

    return opening


def _read_frame(connection: socket.socket) -> bytes:
    def exactly(size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = connection.recv(size - len(data))
            assert chunk, "the host closed the connection during the handshake"
            data += chunk
        return data

    (length,) = _HEADER.unpack(exactly(_HEADER.size))
    return exactly(length)


def _closed_after(
    port: int,
    data: bytes,
    expect_close: bool = True,
    linger: float = 0.3,
    opening: Callable[[socket.socket], None] | None = None,
) -> bytes:
    """Send ``data`` to the host (after ``opening``, a handshake) and return what it answered
    before closing the connection. With ``expect_close``, the host must close it within a few
    seconds (it did not wait for more); otherwise we close it ourselves after ``linger``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        if opening is not None:
            opening(connection)
        try:
            connection.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            return b""  # the host closed it while we were still writing
        received = b""
        deadline = time.monotonic() + (5.0 if expect_close else linger)
        connection.settimeout(0.1)
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                return received
            if not chunk:
                return received
            received += chunk
        assert not expect_close, "the host kept a connection open after a protocol breach"
        return received
