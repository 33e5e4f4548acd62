"""The hello with a peer key and the handshake's proofs, as pure functions (net._mesh.handshake)."""

from __future__ import annotations

import hashlib

import pytest

from net import PeerKey
from net._codec import Broken, Refused, UnpackLimits, pack_body, unpack_untrusted
from net._mesh.handshake import (
    KEY_NEEDED,
    NO_KEYS_HERE,
    Hello,
    check_hello,
    check_proof,
    hello_body,
    parse_hello,
    proof_message,
)

LIMITS = UnpackLimits(4096, 4096, 64, 64)
NONCE = b"n" * 16


def key_of(name: str) -> PeerKey:
    return PeerKey.from_seed(hashlib.sha256(name.encode()).digest())


ANN, BO = key_of("ann"), key_of("bo")
ME = Hello(1, "t1", ANN.peer_id("ann"), "Ann", 0, ANN.public_bytes)
THEM = Hello(1, "t1", BO.peer_id("bo"), "Bo", 3, BO.public_bytes)


@pytest.mark.parametrize("coded", [False, True])
def test_a_hello_with_a_key_reads_back_as_it_was_written(coded: bool) -> None:
    body = pack_body(hello_body(THEM, 4, 0, ("10.0.0.2", 5000), coded, NONCE))
    received = parse_hello(unpack_untrusted(body, LIMITS), "x")
    assert received.hello == THEM
    assert received.scheme == ("spake2" if coded else None)
    assert check_hello(received, ME, coded) == 4


def test_a_hello_without_a_key_is_the_original_byte_for_byte() -> None:
    keyless = Hello(1, "t1", "a", "A", 5)
    assert pack_body(hello_body(keyless, 3, 7, ("10.0.0.1", 4000), False)).hex() == (
        "990001a27431a161a14105030792a831302e302e302e31cd0fa0"
    )


@pytest.mark.parametrize(
    ("them", "me", "reason"),
    [
        (Hello(1, "t1", "bo", "Bo", 0), ME, KEY_NEEDED),
        (THEM, Hello(1, "t1", "ann", "Ann", 0), NO_KEYS_HERE),
        (Hello(1, "t1", ANN.peer_id("bo"), "Bo", 0, BO.public_bytes), ME, "not the id of the key"),
        (Hello(1, "t1", BO.peer_id("bo"), "Bo", 0, ANN.public_bytes), ME, "not the id of the key"),
    ],
)
def test_a_hello_whose_key_is_missing_or_not_its_ids_is_refused(
    them: Hello, me: Hello, reason: str
) -> None:
    body = hello_body(them, 0, None, None, False, NONCE)
    with pytest.raises(Refused, match=reason):
        check_hello(parse_hello(body, "x"), me, coded=False)


@pytest.mark.parametrize(
    "identity",
    [[b"k" * 31, NONCE], [b"k" * 32, b"short"], ["k" * 32, NONCE], [b"k" * 32], b"k" * 48],
)
def test_a_malformed_identity_field_breaks_the_connection(identity: object) -> None:
    body = [*hello_body(Hello(1, "t1", "b", "B", 0), 0, None, None, False), None, identity]
    with pytest.raises(Broken, match="identity"):
        parse_hello(body, "x")


def test_a_proof_holds_for_its_own_role_hellos_and_binding_only() -> None:
    message = proof_message(True, b"dialer hello", b"listener hello", b"")
    signature = BO.sign(message)
    check_proof(THEM, message, signature)
    for other in (
        proof_message(False, b"dialer hello", b"listener hello", b""),  # reflected
        proof_message(True, b"dialer hello", b"another listener hello", b""),  # replayed
        proof_message(True, b"dialer hello", b"listener hello", b"another session"),  # relayed
    ):
        with pytest.raises(Refused, match="did not prove"):
            check_proof(THEM, other, signature)
    with pytest.raises(Refused, match="did not prove"):
        check_proof(THEM, message, ANN.sign(message))
