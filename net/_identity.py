"""Who a peer is: an Ed25519 key pair, the peer id derived from its public key, and signatures.

A peer id is self-certifying: ``peer_id_of(public_key, label)`` is the readable ``label`` (a name
slug, may be empty) and 20 base32 characters of a SHA-256 hash over the label and the key. Anyone
can check that a key belongs to an id (``owns``) without asking anyone, so a key may travel with
what it signs, from any sender: nobody can bind another's id to a key of theirs.

Why 100 bits: claiming an existing peer's id takes a key whose hash matches those 100 bits, a
second preimage (some 2^100 hashes per id, out of anyone's reach); a birthday collision (2^50)
only gives someone two keys for ids of their own, which grants nothing they could not do with one.

A proof (``Proof``) is what travels with a signed entry: the 64-byte signature, then the
author's 32-byte public key. Ed25519 signatures are deterministic, so the sans-IO core stays so.
See "Identity and signatures" in docs/protocol.md.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import os
import secrets
import struct
import sys
import time
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

__all__ = [
    "DIGEST_CHARS",
    "PROOF_SIZE",
    "PUBLIC_KEY_SIZE",
    "SIGNATURE_SIZE",
    "PeerKey",
    "author_key",
    "owns",
    "peer_id_of",
    "signed_message",
    "verify",
    "verify_proof",
]

PUBLIC_KEY_SIZE: Final = 32
SIGNATURE_SIZE: Final = 64
PROOF_SIZE: Final = SIGNATURE_SIZE + PUBLIC_KEY_SIZE
"""A proof: the signature, then the signer's public key."""
DIGEST_CHARS: Final = 20
"""Base32 characters of a peer id's hash part: 100 bits."""
MAX_LABEL: Final = 43
"""Longest label: with the dash and the hash, a peer id fits the core's 64 characters."""
_ID_DOMAIN: Final = b"nerts-lan peer id v1\0"
_PRIVATE_SIZE: Final = 32
_SHARING_WAIT: Final = 1.0
"""Seconds a read of the key file waits out Windows' refusal while another process deletes
its aside name (a sharing violation, which Python raises as ``PermissionError``)."""
_ON_WINDOWS: Final = sys.platform == "win32"


class PeerKey:
    """An Ed25519 key pair: the one secret of a peer."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public_bytes: Final = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @classmethod
    def generate(cls) -> PeerKey:
        """A fresh random key."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> PeerKey:
        """The key of a 32-byte seed (the private key itself): for simulations and tests."""
        if len(seed) != _PRIVATE_SIZE:
            raise ValueError(f"a key seed is {_PRIVATE_SIZE} bytes")
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @classmethod
    def load(cls, path: Path) -> PeerKey:
        """The key saved in ``path``; ``ValueError`` if the file holds no key, ``OSError`` if it
        cannot be read."""
        data = _read_key_file(path)
        if len(data) != _PRIVATE_SIZE:
            raise ValueError(f"{path} does not hold a peer key")
        return cls.from_seed(data)

    def save(self, path: Path) -> None:
        """Write the key to ``path``, readable by this user only where the system allows it, and
        never over an existing file (``FileExistsError``): the first of two racing writers wins,
        whole (written aside, then linked in place)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(self._private_bytes())
                file.flush()
                os.fsync(file.fileno())
            os.link(aside, path)  # fails if the file exists: never replace a key in use
        finally:
            with contextlib.suppress(OSError):
                os.unlink(aside)

    @classmethod
    def load_or_create(cls, path: Path) -> PeerKey:
        """The key in ``path``, made and saved first if there is none there."""
        with contextlib.suppress(FileNotFoundError):
            return cls.load(path)
        key = cls.generate()
        try:
            key.save(path)
        except FileExistsError:
            return cls.load(path)  # another process made it meanwhile: use theirs
        return key

    def peer_id(self, label: str = "") -> str:
        """This key's peer id with the readable ``label`` (see ``peer_id_of``)."""
        return peer_id_of(self.public_bytes, label)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message`` (deterministic)."""
        return self._private.sign(message)

    def prove(self, message: bytes) -> bytes:
        """A proof of ``message``: its signature, then our public key."""
        return self.sign(message) + self.public_bytes

    def __repr__(self) -> str:
        return f"PeerKey(public={self.public_bytes.hex()[:16]}…)"

    def _private_bytes(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )


def peer_id_of(public_key: bytes, label: str = "") -> str:
    """The peer id of ``public_key``: ``label-<hash>`` (or ``<hash>`` without a label), the hash
    being 20 lower-case base32 characters (100 bits) of SHA-256 over the label and the key."""
    if len(public_key) != PUBLIC_KEY_SIZE:
        raise ValueError(f"a public key is {PUBLIC_KEY_SIZE} bytes")
    if len(label) > MAX_LABEL or "\0" in label:
        raise ValueError(f"a peer id label has at most {MAX_LABEL} characters and no NUL")
    digest = hashlib.sha256(_ID_DOMAIN + label.encode() + b"\0" + public_key).digest()
    tail = base64.b32encode(digest).decode("ascii")[:DIGEST_CHARS].lower()
    return f"{label}-{tail}" if label else tail


@functools.lru_cache(maxsize=1024)
def owns(peer_id: str, public_key: bytes) -> bool:
    """Whether ``peer_id`` is the id of ``public_key`` (under the label the id shows); kept, as
    every action of a peer is checked against the same pair."""
    if len(public_key) != PUBLIC_KEY_SIZE or len(peer_id) < DIGEST_CHARS:
        return False
    label = peer_id[: -DIGEST_CHARS - 1] if len(peer_id) > DIGEST_CHARS else ""
    try:
        return peer_id_of(public_key, label) == peer_id
    except ValueError:
        return False


def verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the Ed25519 signature of ``message`` by ``public_key``."""
    if len(signature) != SIGNATURE_SIZE:
        return False
    return _verified(bytes(public_key), bytes(message), bytes(signature))


@functools.lru_cache(maxsize=4096)
def _verified(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """`verify`, kept: a relayed entry or vote comes again (a view change relays what a removed
    member signed), and the simulator's laptops share one process, where each would check the
    same signature again (a check costs about 100 µs)."""
    loaded = _public_key(bytes(public_key))
    if loaded is None:
        return False
    try:
        loaded.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def author_key(proof: bytes) -> bytes:
    """The public key a proof carries."""
    return proof[SIGNATURE_SIZE:]


def verify_proof(peer_id: str, message: bytes, proof: bytes) -> bool:
    """Whether ``proof`` proves that ``peer_id`` signed ``message``: the key it carries is the
    key of that id, and the signature is right."""
    if len(proof) != PROOF_SIZE:
        return False
    key = author_key(proof)
    return owns(peer_id, key) and verify(key, message, proof[:SIGNATURE_SIZE])


def signed_message(domain: bytes, *parts: bytes) -> bytes:
    """What is signed: a domain (what kind of statement this is, so that a signature of one kind
    is never taken for another), then each part with its length."""
    return domain + b"\0" + b"".join(struct.pack(">I", len(p)) + p for p in parts)


@functools.lru_cache(maxsize=1024)
def _public_key(raw: bytes) -> Ed25519PublicKey | None:
    """A parsed public key, kept: every action of a peer is checked against the same key."""
    try:
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        return None


def _read_key_file(path: Path) -> bytes:
    """The bytes of the key file. On Windows a racing writer deleting its aside name (another
    name of the same file, ``PeerKey.save``) makes an open fail for that moment: try again."""
    deadline = time.monotonic() + _SHARING_WAIT
    while True:
        try:
            return path.read_bytes()
        except PermissionError:
            if not _ON_WINDOWS or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
