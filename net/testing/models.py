"""The simulator's models of the laptops' clocks and of the links between them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ClockModel", "LinkModel"]


@dataclass(frozen=True)
class ClockModel:
    """Each peer's clock reads ``offset + (1 + drift) * simulated time``, with its offset drawn
    in [0, max_offset] seconds and its drift in [-max_drift, max_drift] (0.00005: 50 ppm)."""

    max_offset: float = 0.0
    max_drift: float = 0.0


@dataclass(frozen=True)
class LinkModel:
    """One-way delay in [delay_min, delay_max]; a lost frame arrives `retransmit_delay` late; a
    duplicated frame (probability `duplicate`, outside TCP's contract: a resend bug) arrives
    twice, the copy after a delay of its own, still in order on its link."""

    delay_min: float = 0.001
    delay_max: float = 0.005
    loss: float = 0.0
    retransmit_delay: float = 0.2
    duplicate: float = 0.0
