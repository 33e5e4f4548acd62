"""Errors of the protocol core: who misbehaved, we or the peer, and in which field."""

from __future__ import annotations

__all__ = ["LocalProtocolError", "ProtocolError", "RemoteProtocolError"]


class ProtocolError(Exception):
    """Base class of every error the protocol core raises."""


class LocalProtocolError(ProtocolError):
    """The local application misused the core (bad argument, call in the wrong state)."""


class RemoteProtocolError(ProtocolError):
    """A peer sent something malformed or against the protocol; `field` names what was wrong."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
