"""What the operating system refused to send: the errors of multicast sends (zeroconf's, seen
by ``net.discovery``) and of dials (``net._mesh.mesh``), kept per kind and error number for the
application to name (a privacy setting, a firewall). Generic: which error means what on which
system is the application's business.

One record per process, safe from any thread (zeroconf sends from its own loop).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

__all__ = ["CONNECT", "MULTICAST_SEND", "Refusal", "clear", "record", "seen_refusals"]

MULTICAST_SEND = "multicast send"
CONNECT = "connect"


@dataclass(frozen=True)
class Refusal:
    """Sends of ``kind`` (``MULTICAST_SEND``, ``CONNECT``) refused with ``errno``: how many
    times, the last address, and when last (``time.monotonic``)."""

    kind: str
    errno: int
    count: int
    address: str
    last: float


_lock = threading.Lock()
_seen: dict[tuple[str, int], Refusal] = {}


def record(kind: str, error: OSError, address: str = "") -> None:
    """``error`` refused a send of ``kind`` to ``address``; errors without a number are not
    kept (a timeout is no refusal)."""
    if not isinstance(error.errno, int):
        return
    with _lock:
        before = _seen.get((kind, error.errno))
        count = 1 if before is None else before.count + 1
        _seen[(kind, error.errno)] = Refusal(kind, error.errno, count, address, time.monotonic())


def seen_refusals() -> list[Refusal]:
    """Every kind of refusal seen so far, oldest first."""
    with _lock:
        return sorted(_seen.values(), key=lambda r: r.last)


def clear() -> None:
    """Forget them (the application's network changed; and tests)."""
    with _lock:
        _seen.clear()
