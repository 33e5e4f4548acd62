"""Headless nerts-lan peers in separate processes (``nerts_lan.lab.peerprocess``) for the tests."""

from __future__ import annotations

from nerts_lan.lab.peerprocess import PeerProcess

__all__ = ["FAST", "PeerProcess", "headless"]

FAST = ["--bot", "hard", "--bot-delay", "0.05"]


def headless(command: str, name: str, table: str, *options: str) -> list[str]:
    """The arguments of ``nerts-lan host|join --headless`` on 127.0.0.1."""
    return [
        command,
        "--headless",
        "--name",
        name,
        "--table",
        table,
        "--interface",
        "127.0.0.1",
        *options,
    ]
