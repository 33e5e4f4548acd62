"""Tools for tests, benchmarks and the lab, beside the protocol rather than in it: the
deterministic simulator of a group of cores (``simnet``), the benchmarks ``nerts-lan bench``
prints (``bench``), a mesh that holds frames back (``faults``), and the wire messages a
hand-made misbehaving peer writes. The game itself never imports this package.
"""

from __future__ import annotations

from net._order.messages import (
    Accept,
    Action,
    Expulsion,
    Heartbeat,
    Message,
    ViewDecision,
    decode_message,
    encode_message,
)
from net._order.signatures import change_digest
from net._order.wirefields import REASON_EXCLUDED, REASON_LEFT, Removal, Seen
from net.testing.bench import run_benchmarks
from net.testing.faults import DelayedMesh, delayed_mesh
from net.testing.simnet import (
    ClockModel,
    FrameFilter,
    HashChainApp,
    LinkModel,
    NullApp,
    SimApp,
    SimNetwork,
    SimNode,
    sim_keys,
)

__all__ = [  # noqa: RUF022 - grouped by tool
    # The simulator
    "ClockModel",
    "FrameFilter",
    "HashChainApp",
    "LinkModel",
    "NullApp",
    "SimApp",
    "SimNetwork",
    "SimNode",
    "sim_keys",
    # The benchmarks
    "run_benchmarks",
    # Fault injection on real sockets
    "DelayedMesh",
    "delayed_mesh",
    # The wire messages, for peers that misbehave on purpose (and what a vote signs)
    "REASON_EXCLUDED",
    "REASON_LEFT",
    "Accept",
    "Action",
    "Expulsion",
    "Heartbeat",
    "Message",
    "Removal",
    "Seen",
    "ViewDecision",
    "change_digest",
    "decode_message",
    "encode_message",
]
