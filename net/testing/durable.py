"""What a simulated laptop keeps on disk across its restarts: the stable prefix of its match log
(the position its core's stable stream stood at, and the application's stable state there), as
a real laptop's match log holds it. A restarted incarnation starts with it (`Recovered`); see
"Recovery from durable prefixes" in docs/protocol.md.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from net._order.core import OrderingCore
from net._order.recovery import Recovered
from net.events import Payload

__all__ = ["DurableApp", "kept_durably"]


@runtime_checkable
class DurableApp(Protocol):
    """An application whose stable state survives a crash (its match log on disk)."""

    def stable_snapshot(self) -> Payload:
        """The application's stable state now: what its core's stable stream delivered."""


def kept_durably(core: OrderingCore, app: object, kept: Recovered | None) -> Recovered | None:
    """What the laptop of `core` and `app` holds on disk when it dies: its stable prefix now if
    the core holds a state of its own (else what it kept from an earlier incarnation); nothing
    for an application that keeps no state (`DurableApp`)."""
    position = core.durable_position()
    if position is None or not isinstance(app, DurableApp):
        return kept
    return Recovered(position, app.stable_snapshot())
