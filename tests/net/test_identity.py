"""Peer keys, self-certifying peer ids and signatures (net._identity), in memory."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path

import pytest

from net import PeerKey, owns, peer_id_of, verify
from net._identity import DIGEST_CHARS, PROOF_SIZE, author_key, verify_proof
from net._order.wirefields import Limits
from tests.platforms import not_on_windows

PLAY = "4♣ to foundation 1".encode()


def key_of(name: str) -> PeerKey:
    return PeerKey.from_seed(hashlib.sha256(name.encode()).digest())


def test_a_peer_id_is_its_label_and_100_bits_of_its_keys_hash() -> None:
    key = key_of("ann")
    peer = key.peer_id("ann")
    assert peer.startswith("ann-") and len(peer) == len("ann-") + DIGEST_CHARS
    assert peer == peer_id_of(key.public_bytes, "ann") == key.peer_id("ann")
    assert set(peer[4:]) <= set("abcdefghijklmnopqrstuvwxyz234567")
    assert len(key.peer_id()) == DIGEST_CHARS
    longest = key.peer_id("x" * 43)
    assert len(longest) <= Limits().max_peer_id_len


def test_an_id_belongs_only_to_its_own_key_and_label() -> None:
    ann, bo = key_of("ann"), key_of("bo")
    assert owns(ann.peer_id("ann"), ann.public_bytes)
    assert owns(ann.peer_id(), ann.public_bytes)
    assert not owns(ann.peer_id("ann"), bo.public_bytes)
    # The label is bound too: nobody renames an id of someone else's key.
    renamed = "bo" + ann.peer_id("ann")[3:]
    assert not owns(renamed, ann.public_bytes)
    assert not owns("ann", ann.public_bytes)
    assert not owns(ann.peer_id("ann"), b"short")


def test_a_signature_verifies_only_for_its_message_and_key() -> None:
    ann, bo = key_of("ann"), key_of("bo")
    signature = ann.sign(PLAY)
    assert signature == ann.sign(PLAY)  # deterministic
    assert verify(ann.public_bytes, PLAY, signature)
    assert not verify(ann.public_bytes, "5♣ to foundation 1".encode(), signature)
    assert not verify(bo.public_bytes, PLAY, signature)
    forged = bytes([signature[0] ^ 1]) + signature[1:]
    assert not verify(ann.public_bytes, PLAY, forged)
    assert not verify(ann.public_bytes, b"x", signature[:-1])
    assert not verify(b"\xff" * 32, b"x", signature)  # not a point of the curve


def test_a_proof_carries_the_key_and_is_checked_against_the_claimed_id() -> None:
    ann, bo = key_of("ann"), key_of("bo")
    proof = ann.prove(b"message")
    assert len(proof) == PROOF_SIZE and author_key(proof) == ann.public_bytes
    assert verify_proof(ann.peer_id("ann"), b"message", proof)
    assert not verify_proof(bo.peer_id("bo"), b"message", proof)  # a true proof, not bo's
    assert not verify_proof(ann.peer_id("ann"), b"other", proof)
    # bo signs and claims ann's id with ann's public key: the signature fails.
    claimed = bo.sign(b"message") + ann.public_bytes
    assert not verify_proof(ann.peer_id("ann"), b"message", claimed)


def test_a_saved_key_loads_back_and_is_never_replaced(tmp_path: Path) -> None:
    key = PeerKey.generate()
    path = tmp_path / "keys" / "peer.key"
    key.save(path)
    assert PeerKey.load(path).public_bytes == key.public_bytes
    assert list(path.parent.iterdir()) == [path]  # nothing left aside
    with pytest.raises(FileExistsError):
        PeerKey.generate().save(path)  # a key in use is never replaced
    assert PeerKey.load(path).public_bytes == key.public_bytes


@not_on_windows("no POSIX modes (a key is private by the user folder's access list)")
def test_a_saved_key_is_private_to_its_user(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "peer.key"
    PeerKey.generate().save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_damaged_key_file_is_an_error_not_a_new_identity(tmp_path: Path) -> None:
    path = tmp_path / "peer.key"
    path.write_bytes(b"not a key")
    with pytest.raises(ValueError):
        PeerKey.load_or_create(path)


@pytest.mark.parametrize("race", range(10))
def test_processes_racing_to_make_the_key_all_end_with_the_same_one(
    tmp_path: Path, race: int
) -> None:
    """Windows refuses to open a file while another name of it is being deleted (the winner's
    aside): a loser reading the key then must wait that moment out, not fail."""
    path = tmp_path / "peer.key"
    found: list[bytes] = []
    barrier = threading.Barrier(6)

    def make() -> None:
        barrier.wait()
        found.append(PeerKey.load_or_create(path).public_bytes)

    threads = [threading.Thread(target=make) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 6 and set(found) == {PeerKey.load(path).public_bytes}
