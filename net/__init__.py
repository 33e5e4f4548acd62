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

The modules whose names start with ``_`` are parts of these, not API. Two public modules are
tools rather than protocol: ``net.simnet`` (a deterministic simulator of a group of cores, for
tests and benchmarks) and ``net.bench`` (the benchmarks ``nerts-lan bench`` prints).

Importing ``net`` imports nothing else: each name loads its module when first used, so that a
headless simulation never loads zeroconf, and the game's window never loads the simulator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._codec import UndecodableError, UnpackLimits, unpack_untrusted
    from ._describe import (
        Described,
        DescribeError,
        ForeignAnswer,
        NoAnswer,
        NothingDescribed,
        NothingListening,
        UnknownHost,
        async_describe,
    )
    from ._identity import PeerKey, owns, peer_id_of, verify
    from ._roaming import interface_addresses, interface_having
    from ._signatures import Identity
    from .core import CoreConfig, OrderingCore, Phase
    from .discovery import Advert, Discovery, DiscoveryError
    from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
    from .events import (
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
    from .node import Node
    from .runtime import NetworkThread
    from .transport import (
        CODE_NEEDED,
        MAX_EPHEMERAL,
        NO_CODE_HERE,
        WRONG_CODE,
        Hello,
        Mesh,
        MeshConfig,
        MeshListener,
        RateLimits,
    )

__all__ = [  # noqa: RUF022 - grouped by part, as zeroconf groups its own
    # The ordering core
    "CoreConfig",
    "OrderingCore",
    "Phase",
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
    # The transport
    "CODE_NEEDED",
    "MAX_EPHEMERAL",
    "NO_CODE_HERE",
    "WRONG_CODE",
    "Hello",
    "Mesh",
    "MeshConfig",
    "MeshListener",
    "RateLimits",
    # A peer on the network
    "Node",
    "NetworkThread",
    "interface_addresses",
    "interface_having",
    # Discovery
    "Advert",
    "Discovery",
    "DiscoveryError",
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
]

_MODULES = {
    "_codec": ("UndecodableError", "UnpackLimits", "unpack_untrusted"),
    "_describe": (
        "DescribeError",
        "Described",
        "ForeignAnswer",
        "NoAnswer",
        "NothingDescribed",
        "NothingListening",
        "UnknownHost",
        "async_describe",
    ),
    "_identity": ("PeerKey", "owns", "peer_id_of", "verify"),
    "_roaming": ("interface_addresses", "interface_having"),
    "_signatures": ("Identity",),
    "core": ("CoreConfig", "OrderingCore", "Phase"),
    "discovery": ("Advert", "Discovery", "DiscoveryError"),
    "errors": ("LocalProtocolError", "ProtocolError", "RemoteProtocolError"),
    "node": ("Node",),
    "runtime": ("NetworkThread",),
    "transport": (
        "CODE_NEEDED",
        "MAX_EPHEMERAL",
        "NO_CODE_HERE",
        "WRONG_CODE",
        "Hello",
        "Mesh",
        "MeshConfig",
        "MeshListener",
        "RateLimits",
    ),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Load a public name's module when the name is first used (PEP 562)."""
    if name not in __all__:
        raise AttributeError(f"module 'net' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME.get(name, 'events')}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
