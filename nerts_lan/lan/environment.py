"""What tests and benchmarks ask of a LAN peer through its environment, read in one place:

- ``NERTS_LAN_LINK_DELAY_MS="LOW,HIGH"`` and ``NERTS_LAN_LINK_LOSS=P``: hold this peer's frames
  back, as on a slow or lossy Wi-Fi link (``mesh_factory``);
- ``NERTS_LAN_DATAGRAMS=0``: TCP alone, no datagram path (``datagrams_wanted``);
- ``NERTS_LAN_TRACE=FILE``: timing records for the benchmark (``Trace``).

A player sets none of them: unset, the peer is the game's own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from net import Mesh, MeshFactory

__all__ = ["Trace", "datagrams_wanted", "mesh_factory"]

log = logging.getLogger(__name__)


def mesh_factory() -> MeshFactory:
    """The mesh itself, or one that holds this peer's frames back when asked to (fault injection
    for tests and benchmarks, order kept: see ``_injected_delay``)."""
    delay = _injected_delay()
    if delay is None:
        return Mesh
    from net.testing import delayed_mesh  # a lab tool, loaded only when a test asks for it

    return delayed_mesh(delay)


def _injected_delay() -> Callable[[], float] | None:
    """Fault injection for tests and benchmarks, on the frames this peer sends (order kept):

    - ``NERTS_LAN_LINK_DELAY_MS="LOW,HIGH"``: each frame waits a random time in that range, as
      on a slow Wi-Fi link;
    - ``NERTS_LAN_LINK_LOSS=P``: with probability P a frame waits 200 ms more, which is what a
      lost TCP segment costs (the minimum retransmission timeout), the frames behind it waiting
      too.
    """
    import os
    import random

    low = high = loss = 0.0
    try:
        if os.environ.get("NERTS_LAN_LINK_DELAY_MS"):
            low, high = (float(x) / 1000 for x in os.environ["NERTS_LAN_LINK_DELAY_MS"].split(","))
        if os.environ.get("NERTS_LAN_LINK_LOSS"):
            loss = float(os.environ["NERTS_LAN_LINK_LOSS"])
    except ValueError:
        log.warning("ignoring a malformed NERTS_LAN_LINK_DELAY_MS or NERTS_LAN_LINK_LOSS")
        return None
    if high <= 0 and loss <= 0:
        return None
    chance = random.Random()
    return lambda: chance.uniform(low, high) + (0.2 if chance.random() < loss else 0.0)


def datagrams_wanted() -> bool:
    """Whether small frames go by UDP datagram too (``net._mesh.fastpath``): yes unless
    ``NERTS_LAN_DATAGRAMS=0`` (the benchmark compares with TCP alone)."""
    import os

    return os.environ.get("NERTS_LAN_DATAGRAMS", "1") != "0"


class Trace:
    """Timing records for the benchmark: ``NERTS_LAN_TRACE=FILE`` appends one JSON line per
    submitted, remotely applied and stable action (monotonic clock, shared by the processes of
    one machine)."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1 << 16, encoding="utf-8")  # noqa: SIM115 - closed in close()

    @classmethod
    def from_environment(cls) -> Trace | None:
        import os

        path = os.environ.get("NERTS_LAN_TRACE")
        return cls(path) if path else None

    def record(self, kind: str, key: tuple[int, str]) -> None:
        self._file.write(f'["{kind}", {key[0]}, "{key[1]}", {time.monotonic():.6f}]\n')

    def close(self) -> None:
        self._file.close()
