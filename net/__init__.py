"""The network of a table: a sans-IO ordering core, and the asyncio transport that carries it.

The public names are the ones in ``__all__`` below, importable from ``net`` itself:

- the protocol core, pure (no sockets, no clock: the time is passed in): ``OrderingCore`` and
  ``CoreConfig``, its ``Phase``, the events it returns (frozen dataclasses, past tense) and its
  errors (``LocalProtocolError``: we misused it; ``RemoteProtocolError``: a peer misbehaved);
- the asyncio side: ``Mesh`` (reliable FIFO TCP links, configured by ``MeshConfig``, reporting to
  a ``MeshListener``), ``Node`` (a core driven by a mesh and a clock), ``Discovery`` (mDNS
  adverts of tables) and ``NetworkThread`` (an event loop in a thread of its own), with
  ``interface_having`` and ``interface_addresses`` (which interface has an address, and what
  addresses it has now: a laptop's address can change mid-game);
- who a peer is: ``PeerKey`` (its Ed25519 key pair), ``peer_id_of`` (the peer id of a public
  key), ``owns`` and ``verify``; an ``Identity`` makes a core sign its entries and check everyone's
  (see "Identity and signatures" in docs/protocol.md);
- ``async_describe``: which table listens at an address a player typed (the answer, ``Described``,
  or a ``DescribeError`` saying what is wrong), for networks where mDNS finds nothing;
- ``unpack_untrusted``: msgpack from another machine, decoded within limits.

Two halves sit behind this face and never import each other: ``net._order`` (the ordering
core, sans-IO) and ``net._mesh`` (the links, asyncio); ``node.py`` joins them, ``_codec.py`` and
``_identity.py`` serve both. Nothing outside ``net`` imports a module whose name starts with
``_``. The tools rather than the protocol (the simulator, the benchmarks, a mesh that injects
faults, the wire messages for hand-made peers) are ``net.testing``, a face of its own.

The names are imported when ``net`` is, except those of mDNS (``Advert``, ``Discovery``,
``DiscoveryError``, ``show_send_errors``): they load zeroconf on first use, so that a headless
simulation never does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from net._codec import (
    UndecodableError,
    UnpackLimits,
    unpack_untrusted,
)
from net._identity import (
    PeerKey,
    owns,
    peer_id_of,
    verify,
)
from net._mesh.describe import (
    Described,
    DescribeError,
    ForeignAnswer,
    NoAnswer,
    NothingDescribed,
    NothingListening,
    UnknownHost,
    async_describe,
)
from net._mesh.handshake import CODE_NEEDED, NO_CODE_HERE, WRONG_CODE, Hello
from net._mesh.mesh import MAX_EPHEMERAL, Mesh
from net._mesh.parts import MeshConfig, MeshListener
from net._mesh.ratelimit import RateLimits
from net._mesh.roaming import (
    interface_addresses,
    interface_having,
)
from net._mesh.sockets import (
    udp_socket,
)
from net._order.core import CoreConfig, OrderingCore, Phase
from net._order.signatures import (
    Identity,
)
from net._order.viewchange import VoteRecord
from net._order.voterecord import vote_record_from_data, vote_record_to_data
from net.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)
from net.events import (
    ClockSuspected,
    DivergenceDetected,
    EntriesRetracted,
    EntriesStabilized,
    EntryReceived,
    Event,
    Expelled,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberRecovered,
    MemberReturned,
    MemberSuspected,
    Payload,
    ProtocolViolated,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.interfaces import (
    NetworkInterface,
    default_route_interface,
    rank_interfaces,
    read_interfaces,
    skip_reason,
    usable_interfaces,
)
from net.node import (
    MeshFactory,
    Node,
)
from net.refusals import (
    CONNECT,
    MULTICAST_SEND,
    Refusal,
    record,
    seen_refusals,
)
from net.runtime import (
    NetworkThread,
)

if TYPE_CHECKING:
    from net.discovery import Advert, Discovery, DiscoveryError, show_send_errors

__all__ = [  # noqa: RUF022 - grouped by part, as zeroconf groups its own
    # The ordering core
    "CoreConfig",
    "OrderingCore",
    "Phase",
    "VoteRecord",
    "vote_record_from_data",
    "vote_record_to_data",
    # Its events
    "DivergenceDetected",
    "EntriesRetracted",
    "EntriesStabilized",
    "EntryReceived",
    "Event",
    "Expelled",
    "LogEntry",
    "MemberExcluded",
    "MemberJoined",
    "MemberLeft",
    "MemberRecovered",
    "ClockSuspected",
    "MemberReturned",
    "MemberSuspected",
    "Payload",
    "ProtocolViolated",
    "SnapshotInstalled",
    "SnapshotRequested",
    # Errors
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    # The mesh
    "CODE_NEEDED",
    "MAX_EPHEMERAL",
    "NO_CODE_HERE",
    "WRONG_CODE",
    "Hello",
    "Mesh",
    "MeshConfig",
    "MeshListener",
    "RateLimits",
    "udp_socket",
    # A peer on the network
    "MeshFactory",
    "Node",
    "NetworkThread",
    "interface_addresses",
    "interface_having",
    # This laptop's interfaces
    "NetworkInterface",
    "default_route_interface",
    "rank_interfaces",
    "read_interfaces",
    "skip_reason",
    "usable_interfaces",
    # What the system refused to send
    "CONNECT",
    "MULTICAST_SEND",
    "Refusal",
    "record",
    "seen_refusals",
    # Which table listens at an address (without mDNS)
    "DescribeError",
    "Described",
    "ForeignAnswer",
    "NoAnswer",
    "NothingDescribed",
    "NothingListening",
    "UnknownHost",
    "async_describe",
    # Identity
    "Identity",
    "PeerKey",
    "owns",
    "peer_id_of",
    "verify",
    # Decoding msgpack from strangers
    "UndecodableError",
    "UnpackLimits",
    "unpack_untrusted",
    # Discovery (mDNS: loaded on first use)
    "Advert",
    "Discovery",
    "DiscoveryError",
    "show_send_errors",
]


def __getattr__(name: str) -> Any:
    """Load discovery, and zeroconf with it, when one of its names is first used (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'net' has no attribute {name!r}")
    value = getattr(importlib.import_module("net.discovery"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


_LAZY = frozenset({"Advert", "Discovery", "DiscoveryError", "show_send_errors"})
"""The names of net.discovery: loading it loads zeroconf."""
