"""Peer keys in the handshake, over real sockets on 127.0.0.1: each end proves it holds the key of
the peer id it claims, so nobody links under (or replaces) another member's id."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import struct
from typing import Any

import msgpack
import pytest

from net import PeerKey
from net._mesh.handshake import KEY_NEEDED, NO_KEYS_HERE, proof_message
from tests.net_real.meshkit import Meshes, RecordingMesh, fake_peer, run_meshes, until

CODE = "7 tigers"
_HEADER = struct.Struct(">I")


def key_of(name: str) -> PeerKey:
    return PeerKey.from_seed(hashlib.sha256(name.encode()).digest())


ANN, BO, MAL = key_of("ann"), key_of("bo"), key_of("mallory")
ANN_ID, BO_ID = ANN.peer_id("ann"), BO.peer_id("bo")


def keyed(meshes: Meshes, key: PeerKey, label: str, **options: Any) -> RecordingMesh:
    return meshes.make(key.peer_id(label), key=key, **options)


def reasons(node: RecordingMesh) -> str:
    return " | ".join(reason for _, reason in node.problems)


@pytest.mark.parametrize("code", [None, CODE], ids=["open", "coded"])
def test_peers_with_keys_prove_them_link_and_exchange_frames(code: str | None) -> None:
    async def scenario(meshes: Meshes) -> None:
        ann = keyed(meshes, ANN, "ann", table_code=code)
        bo = keyed(meshes, BO, "bo", table_code=code)
        port = await ann.mesh.async_listen("127.0.0.1")
        bo.mesh.connect(ANN_ID, "127.0.0.1", port)
        await until(lambda: bool(ann.connected) and bool(bo.connected))
        bo.mesh.send(ANN_ID, "4♣ to foundation 1".encode())
        ann.mesh.send(BO_ID, b"hello")
        await until(lambda: bool(ann.frames) and bool(bo.frames))
        assert ann.frames == [(BO_ID, "4♣ to foundation 1".encode())]
        assert not ann.problems and not bo.problems

    run_meshes(scenario)


def test_a_key_and_a_peer_id_that_are_not_each_others_are_refused_at_construction() -> None:
    with pytest.raises(ValueError):
        RecordingMesh(ANN_ID, key=BO)
    with pytest.raises(ValueError):
        RecordingMesh("ann", key=ANN)


@pytest.mark.parametrize(
    ("listener_keyed", "reason_at_listener"),
    [(True, KEY_NEEDED), (False, NO_KEYS_HERE)],
    ids=["keyless-dialer", "keyless-listener"],
)
def test_a_peer_with_a_key_and_one_without_never_link(
    listener_keyed: bool, reason_at_listener: str
) -> None:
    async def scenario(meshes: Meshes) -> None:
        keyed_one = keyed(meshes, ANN, "ann")
        keyless = meshes.make("bo")
        listener, dialer = (keyed_one, keyless) if listener_keyed else (keyless, keyed_one)
        port = await listener.mesh.async_listen("127.0.0.1")
        dialer.mesh.connect(listener.mesh.me.peer, "127.0.0.1", port)
        await until(lambda: bool(listener.problems) and bool(dialer.problems))
        assert listener.problems[0][1] == reason_at_listener
        assert not listener.connected and not dialer.connected

    run_meshes(scenario)


class Impostor:
    """Mallory, speaking the mesh's framing by hand, claims ``peer`` with the public key
    ``shown`` and signs with its own key."""

    def __init__(self, peer: str, shown: bytes) -> None:
        self.peer, self.shown = peer, shown
        self.answers: list[Any] = []

    def hello(self) -> list[Any]:
        nonce = secrets.token_bytes(16)
        return [0, 1, "t1", self.peer, "Ann", 0, 0, -1, None, None, [self.shown, nonce]]

    async def dial(self, port: int) -> None:
        """Dial, say our hello, read the listener's hello and proof, and prove with our key."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            mine = _write_frame(writer, self.hello())
            theirs = await _read_raw(reader)
            self.answers.append(msgpack.unpackb(theirs))
            if self.answers[-1][0] != 0:
                return  # refused at the hello
            self.answers.append(msgpack.unpackb(await _read_raw(reader)))  # its proof
            _write_frame(writer, [8, MAL.sign(proof_message(True, mine, theirs, b""))])
            self.answers.append(msgpack.unpackb(await _read_raw(reader)))
        except (asyncio.IncompleteReadError, ConnectionError):
            self.answers.append("closed")
        finally:
            writer.close()


def test_a_peer_claiming_a_members_id_and_key_without_the_key_is_refused() -> None:
    async def scenario(meshes: Meshes) -> None:
        bo = keyed(meshes, BO, "bo")
        port = await bo.mesh.async_listen("127.0.0.1")
        mallory = Impostor(ANN_ID, ANN.public_bytes)
        await mallory.dial(port)
        assert mallory.answers[-1][0] == 3  # a refusal
        assert "did not prove it holds the key of its peer id" in mallory.answers[-1][1]
        await until(lambda: bool(bo.problems))
        assert "did not prove" in reasons(bo)
        assert bo.connected == [] and bo.frames == []

    run_meshes(scenario)


def test_a_peer_claiming_a_members_id_with_its_own_key_is_refused_at_the_hello() -> None:
    async def scenario(meshes: Meshes) -> None:
        bo = keyed(meshes, BO, "bo")
        port = await bo.mesh.async_listen("127.0.0.1")
        mallory = Impostor(ANN_ID, MAL.public_bytes)
        await mallory.dial(port)
        assert mallory.answers == [[3, f"peer id {ANN_ID!r} is not the id of the key it showed"]]
        assert bo.connected == []

    run_meshes(scenario)


def test_an_impostor_does_not_replace_a_linked_member() -> None:
    """Before peer keys, anyone who dialed bo saying ann's peer id in a hello took over the
    link bo had dialed to ann (its connection wins the pair's tie), and bo took its frames for
    ann's."""

    async def scenario(meshes: Meshes) -> None:
        ann, bo = keyed(meshes, ANN, "ann"), keyed(meshes, BO, "bo")
        port = await bo.mesh.async_listen("127.0.0.1")
        bo.mesh.connect(ANN_ID, "127.0.0.1", await ann.mesh.async_listen("127.0.0.1"))
        await until(lambda: bo.mesh.connected() == {ANN_ID})
        for _ in range(3):
            mallory = Impostor(ANN_ID, ANN.public_bytes)
            await mallory.dial(port)
            assert mallory.answers[-1][0] == 3  # refused, after its proof
        ann.mesh.send(BO_ID, b"still me")
        await until(lambda: bool(bo.frames))
        assert bo.frames == [(ANN_ID, b"still me")]
        assert bo.connected == [(ANN_ID, False)]  # linked once, by ann herself

    run_meshes(scenario)


def test_a_dialer_refuses_a_listener_that_cannot_prove_the_id_it_was_dialed_for() -> None:
    async def scenario(meshes: Meshes) -> None:
        refusal: list[Any] = []

        async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            theirs = await _read_raw(reader)
            nonce = secrets.token_bytes(16)
            hello = [0, 1, "t1", ANN_ID, "Ann", 0, 0, -1, None, None, [ANN.public_bytes, nonce]]
            mine = _write_frame(writer, hello)
            _write_frame(writer, [8, MAL.sign(proof_message(False, theirs, mine, b""))])
            refusal.append(msgpack.unpackb(await _read_raw(reader)))

        port = await fake_peer(meshes, impostor)
        bo = keyed(meshes, BO, "bo")
        bo.mesh.connect(ANN_ID, "127.0.0.1", port)
        await until(lambda: bool(refusal) and bool(bo.problems))
        assert refusal[0][0] == 3 and "did not prove" in refusal[0][1]
        assert bo.connected == []

    run_meshes(scenario)


def _write_frame(writer: asyncio.StreamWriter, body: Any) -> bytes:
    data: bytes = msgpack.packb(body, use_bin_type=True)
    writer.write(_HEADER.pack(len(data)) + data)
    return data


async def _read_raw(reader: asyncio.StreamReader) -> bytes:
    (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    return await reader.readexactly(length)
