"""The opening of a connection, as pure functions: the hello codec and its checks, the keys a coded
table derives from SPAKE2 and both hellos, the per-direction frame tags, and the proofs by which
each end shows it holds the key of the peer id it claims. No sockets. (The gates that space out
failed code checks, per source address, are in ``net._mesh.strangers``.)
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass
from typing import Any

from net._codec import HEADER, KIND_HELLO, MAX_TEXT, Broken, Refused, is_refusal
from net._identity import PUBLIC_KEY_SIZE, owns, signed_message, verify
from net._mesh.addresses import parse_listen_address

__all__ = [
    "CODE_NEEDED",
    "CODE_SCHEME",
    "CONFIRMATION_SIZE",
    "HANDSHAKE_TIMEOUT",
    "KEY_EXCHANGE_ID",
    "KEY_EXCHANGE_SIZE",
    "KEY_NEEDED",
    "NONCE_SIZE",
    "NO_CODE_HERE",
    "NO_KEYS_HERE",
    "TAG_SIZE",
    "WRONG_CODE",
    "FrameTags",
    "Hello",
    "ReceivedHello",
    "SessionKeys",
    "check_hello",
    "check_proof",
    "check_veiled_hello",
    "hello_body",
    "parse_handshake_frame",
    "parse_hello",
    "proof_message",
    "refusal_from",
    "veiled_hello_body",
]

CODE_NEEDED = "this table needs a code"
"""Refusal of a peer without a code by a peer with one (each side refuses the other)."""
NO_CODE_HERE = "this table has no code"
"""Refusal of a peer with a code by a peer without one."""
WRONG_CODE = "wrong table code"
"""Refusal when the key confirmation fails: the two peers typed different codes."""
CODE_SCHEME = "spake2"
"""The tenth hello field of a peer with a code; a peer without one sends the original nine."""
KEY_NEEDED = "this table needs a peer key: update nerts-lan on every laptop"
"""Refusal of a peer without a key by a peer with one."""
NO_KEYS_HERE = "this table has no peer keys"
"""Refusal of a peer with a key by a peer without one."""
NONCE_SIZE = 16
"""Random bytes each end's hello carries: what the other end's proof signs, so that no proof
is worth anything on another connection."""
_PROOF_DOMAIN = b"net.transport proof v1"
HANDSHAKE_TIMEOUT = 5.0
"""Seconds for each step of the handshake (and for a code check's turn)."""
KEY_EXCHANGE_ID = b"net.transport table "
KEY_EXCHANGE_SIZE = 33
CONFIRMATION_SIZE = 32
TAG_SIZE = 16
_COUNTER = struct.Struct(">Q")


@dataclass(frozen=True)
class Hello:
    """Who is at this end of a connection."""

    protocol: int
    table: str
    peer: str
    name: str
    incarnation: int
    public_key: bytes | None = None
    """The Ed25519 public key whose id ``peer`` is (``net._identity``); None: no key (a mesh
    with no key sends the original hello, and links only with peers without one)."""


@dataclass(frozen=True)
class ReceivedHello:
    """A well-formed hello from the other side, not yet checked against ours."""

    hello: Hello
    resume: int
    """How far the other side has received our frames..."""
    known: int
    """...counted for this incarnation of ours (-1: it knows none)."""
    listen: tuple[str, int] | None
    scheme: str | None
    """``CODE_SCHEME`` from a peer with a code, None from one without."""


def hello_body(
    me: Hello,
    resume: int,
    known: int | None,
    listen: tuple[str, int] | None,
    coded: bool,
    nonce: bytes = b"",
) -> list[Any]:
    """Our hello: ``resume`` frames received from the incarnation ``known`` of the other side.
    With a key, an eleventh field ``[public key, nonce]`` follows the scheme (None when open)."""
    body: list[Any] = [
        KIND_HELLO,
        me.protocol,
        me.table,
        me.peer,
        me.name,
        me.incarnation,
        resume,
        -1 if known is None else known,
        list(listen) if listen is not None else None,
    ]
    if coded or me.public_key is not None:
        body.append(CODE_SCHEME if coded else None)
    if me.public_key is not None:
        if len(nonce) != NONCE_SIZE:
            raise ValueError(f"a hello with a key carries a nonce of {NONCE_SIZE} bytes")
        body.append([me.public_key, nonce])
    return body


def veiled_hello_body(me: Hello) -> list[Any]:
    """The listener's first hello at a coded table: only what the dialer checks before the key
    exchange (protocol, table, scheme). Who listens, under what name and where, follows in a
    tagged frame once the dialer has proven the code (``hello_body``)."""
    return [KIND_HELLO, me.protocol, me.table, CODE_SCHEME]


def check_veiled_hello(body: Any, me: Hello, who: str) -> None:
    """``Refused`` unless the veiled hello in ``body`` is of our protocol, table and scheme;
    ``Broken`` if it is a refusal or malformed (a nine-field hello: the listener has no code)."""
    if is_refusal(body):
        raise refusal_from(who, body[1])
    if isinstance(body, list) and len(body) >= 9 and body[0] == KIND_HELLO:
        raise Refused(CODE_NEEDED)  # a listener without a code answers with its whole hello
    if not (isinstance(body, list) and len(body) == 4 and body[0] == KIND_HELLO):
        raise Broken(f"malformed hello from {who}")
    _, protocol, table, scheme = body
    if not isinstance(protocol, int) or not isinstance(table, str):
        raise Broken(f"malformed hello from {who}")
    _check_terms(Hello(protocol, table, "?", "?", 0), scheme, me, coded=True)


def parse_hello(body: Any, who: str) -> ReceivedHello:
    """The hello in a decoded frame body; ``Broken`` if it is a refusal or malformed."""
    if is_refusal(body):
        raise refusal_from(who, body[1])
    if not (isinstance(body, list) and len(body) in (9, 10, 11) and body[0] == KIND_HELLO):
        raise Broken(f"malformed hello from {who}")
    _, protocol, table, peer, name, incarnation, resume, known, listen_field = body[:9]
    scheme = body[9] if len(body) >= 10 else None
    public_key = _parse_identity(body[10], who) if len(body) == 11 else None
    listen = parse_listen_address(listen_field, who)
    for label, value, kind in (
        ("protocol", protocol, int),
        ("table", table, str),
        ("peer", peer, str),
        ("name", name, str),
        ("incarnation", incarnation, int),
        ("resume", resume, int),
        ("known incarnation", known, int),
    ):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise Broken(f"hello field {label!r} from {who} has the wrong type")
        if isinstance(value, str) and not 0 < len(value) <= MAX_TEXT:
            raise Broken(f"hello field {label!r} from {who} has a bad length")
    hello = Hello(protocol, table, peer, name, incarnation, public_key)
    return ReceivedHello(hello, resume, known, listen, scheme)


def check_hello(received: ReceivedHello, me: Hello, coded: bool) -> int:
    """``Refused`` (with a reason a person can read) unless the other side may link with us;
    the resume number that counts: only one recorded against our present incarnation."""
    other = received.hello
    _check_terms(other, received.scheme, me, coded)
    if me.public_key is not None and other.public_key is None:
        raise Refused(KEY_NEEDED)
    if me.public_key is None and other.public_key is not None:
        raise Refused(NO_KEYS_HERE)
    if other.public_key is not None and not owns(other.peer, other.public_key):
        raise Refused(f"peer id {other.peer[:64]!r} is not the id of the key it showed")
    return received.resume if received.known == me.incarnation else 0


def proof_message(
    by_dialer: bool, dialer_hello: bytes, listener_hello: bytes, binding: bytes
) -> bytes:
    """What one end signs to prove it holds its key: both hellos as sent (with both ends' keys,
    peer ids and fresh nonces) and, at a coded table, a value of the session key (``binding``)
    so that nobody in the middle can pass a proof on from a connection of their own."""
    role = b"dialer" if by_dialer else b"listener"
    return signed_message(_PROOF_DOMAIN, role, dialer_hello, listener_hello, binding)


def check_proof(other: Hello, message: bytes, signature: bytes) -> None:
    """``Refused`` unless ``signature`` is ``other``'s signature of ``message``."""
    if other.public_key is None or not verify(other.public_key, message, signature):
        raise Refused(f"{other.peer[:64]} did not prove it holds the key of its peer id")


def _parse_identity(field: Any, who: str) -> bytes | None:
    """The public key in a hello's identity field ``[key, nonce]`` (None: none)."""
    if field is None:
        return None
    if not (
        isinstance(field, list)
        and len(field) == 2
        and isinstance(field[0], bytes)
        and len(field[0]) == PUBLIC_KEY_SIZE
        and isinstance(field[1], bytes)
        and len(field[1]) == NONCE_SIZE
    ):
        raise Broken(f"hello field 'identity' from {who} is malformed")
    key: bytes = field[0]
    return key


def _check_terms(other: Hello, scheme: Any, me: Hello, coded: bool) -> None:
    """``Refused`` unless the two ends speak the same protocol at the same table, are two, and
    agree on having a code."""
    if other.protocol != me.protocol:
        raise Refused(
            f"protocol version {other.protocol} does not match ours "
            f"({me.protocol}): update nerts-lan on every laptop"
        )
    if other.table != me.table:
        raise Refused(f"this is table {me.table}, not {other.table}")
    if other.peer == me.peer:
        raise Refused("a peer cannot connect to itself")
    if scheme is None and coded:
        raise Refused(CODE_NEEDED)
    if scheme is not None and not coded:
        raise Refused(NO_CODE_HERE)
    if scheme is not None and scheme != CODE_SCHEME:
        raise Refused(f"table code scheme {str(scheme)[:40]!r} is not ours: update every peer")


def parse_handshake_frame(
    body: Any, who: str, kind: int, size: int, believed: tuple[str, ...] = ()
) -> bytes:
    """The payload of a handshake frame of ``kind`` and ``size`` bytes; ``Broken`` otherwise
    (a refusal with a code reason is reported bare only if it is in ``believed``)."""
    if is_refusal(body):
        raise refusal_from(who, body[1], believed)
    if not (
        isinstance(body, list)
        and len(body) == 2
        and body[0] == kind
        and isinstance(body[1], bytes)
        and len(body[1]) == size
    ):
        raise Broken(f"malformed handshake frame from {who}")
    payload: bytes = body[1]
    return payload


def refusal_from(
    who: str, reason: str, believed: tuple[str, ...] = (CODE_NEEDED, NO_CODE_HERE)
) -> Broken:
    """The other side refused us during the handshake. A code refusal is reported as its bare
    constant, as the refusing side reports it, so that the application can tell the user, but
    only at the step where that refusal comes (``believed``): none is authenticated, and a
    "wrong table code" before our key confirmation was answered comes from someone who never
    checked our code (a stranger's forgery), so it is an ordinary broken connection, dialed
    again."""
    if reason in believed:
        return Broken(reason)
    if reason in (CODE_NEEDED, NO_CODE_HERE, WRONG_CODE):
        return Broken(f"{who} refused the connection out of turn ({reason}): not believed")
    return Broken(f"{who} refused the connection: {reason[:MAX_TEXT]}")


@dataclass(frozen=True)
class SessionKeys:
    """What one end of a connection derives from the SPAKE2 key and both hellos."""

    my_confirmation: bytes
    their_confirmation: bytes
    outgoing: bytes
    incoming: bytes
    binding: bytes
    """The same at both ends of this connection, and on no other: what the peer key proofs
    sign at a coded table."""

    @classmethod
    def derive(
        cls, shared: bytes, dialer_hello: bytes, listener_hello: bytes, dialed: bool
    ) -> SessionKeys:
        """The keys of the dialer (``dialed``) or of the listener."""
        # Every hello field was sent in the clear: binding both hellos into the session key
        # makes the confirmation fail if anyone changed one (or spliced another table's).
        transcript = hashlib.sha256()
        for hello in (dialer_hello, listener_hello):
            transcript.update(HEADER.pack(len(hello)) + hello)
        session = hmac.digest(shared, b"net.transport session " + transcript.digest(), "sha256")

        def key(label: bytes) -> bytes:
            return hmac.digest(session, label, "sha256")

        # Each direction has its own confirmation and frame key, so nothing one end writes can
        # be reflected back at it.
        by_dialer = key(b"confirm dialer to listener"), key(b"frames dialer to listener")
        by_listener = key(b"confirm listener to dialer"), key(b"frames listener to dialer")
        mine, theirs = (by_dialer, by_listener) if dialed else (by_listener, by_dialer)
        return cls(mine[0], theirs[0], mine[1], theirs[1], key(b"peer key proof binding"))


class FrameTags:
    """The tags of one direction of an authenticated connection: HMAC-SHA256, cut to 16 bytes,
    over the number of the frame in that direction (counted from 1 by both ends) and its body."""

    def __init__(self, key: bytes) -> None:
        self._mac = hmac.new(key, digestmod=hashlib.sha256)
        self.count = 0

    def next_tag(self, body: bytes) -> bytes:
        """The tag of the next frame, whose body is ``body``."""
        self.count += 1
        mac = self._mac.copy()
        mac.update(_COUNTER.pack(self.count))
        mac.update(body)
        return mac.digest()[:TAG_SIZE]

    def check(self, raw: bytes, who: str) -> bytes:
        """The body of the next frame ``raw`` (body and tag); ``Broken`` unless the tag is right."""
        number = self.count + 1
        body, tag = raw[:-TAG_SIZE], raw[-TAG_SIZE:]
        if len(raw) < TAG_SIZE or not hmac.compare_digest(tag, self.next_tag(body)):
            raise Broken(f"frame {number} from {who} failed authentication")
        return body
