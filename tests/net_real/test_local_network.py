"""macOS' Local Network privacy, recognised from the errors it gives (EHOSTUNREACH, errno 65 on
macOS): a real zeroconf on 127.0.0.1 whose socket refuses every send with that errno (a fault
injected at the socket-send level, as this machine's sends do not fail so) has its refusal
kept by ``net.refusals``, and the doctor and the window name the setting to change."""

from __future__ import annotations

import asyncio
import errno
import logging
import secrets
import time
from typing import Any

import pytest

from nerts_lan.doctor import blocks as network_blocks
from nerts_lan.doctor.blocks import MACOS_EHOSTUNREACH, local_network_denied, platform_findings
from net import refusals
from net.discovery import Advert, Discovery
from net.refusals import CONNECT, MULTICAST_SEND, Refusal
from tests.waiting import async_until

SETTING = "System Settings → Privacy & Security → Local Network → allow"


class _RefusingSocket:
    """A socket whose sends fail as macOS' Local Network privacy makes them fail."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def sendto(self, data: bytes, *where: Any) -> int:
        raise OSError(MACOS_EHOSTUNREACH, "No route to host")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _run_as_on_macos(scenario: Any) -> None:
    """Run on the selector loop, macOS' own: its datagram transport sends through the socket
    object, where the fault is injected (Windows' proactor sends past it, so the injection
    would not take there)."""
    loop = asyncio.SelectorEventLoop()
    try:
        loop.run_until_complete(scenario)
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


def _refusal(kind: str, number: int, address: str = "") -> Refusal:
    return Refusal(kind, number, 1, address, time.monotonic())


def test_a_refused_multicast_send_is_kept_and_named_on_macos(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="zeroconf")  # zeroconf says it once per socket
    refusals.clear()

    async def scenario() -> None:
        discovery = Discovery("127.0.0.1")
        try:
            await discovery._zeroconf.zeroconf.async_wait_for_start()
            for sender in discovery._zeroconf.zeroconf.engine.senders:
                sender.transport._sock = _RefusingSocket(sender.transport._sock)  # type: ignore[attr-defined]
            kind, name = "_nerts-test._tcp.local.", secrets.token_hex(4)
            await discovery.async_publish(Advert(kind, name, "T", 9, {}, ("127.0.0.1",)))
            await async_until(lambda: bool(_multicast_refusals()))
        finally:
            await discovery.async_close()

    _run_as_on_macos(scenario())
    seen = _multicast_refusals()  # (a connection refused elsewhere in this process is not ours)
    assert seen[0].errno == MACOS_EHOSTUNREACH

    monkeypatch.setattr(network_blocks, "PLATFORM", "darwin")
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    assert network_blocks.network_warning() == (
        f"macOS blocks this app from your network: {SETTING} iTerm (then start nerts-lan again)"
    )
    found = platform_findings("darwin", seen, lambda: pytest.fail("not Windows"))
    [check] = found.checks
    assert check.name == "local network" and not check.ok and SETTING in check.detail
    assert found.local_network_denied and "Joining by address fails" in found.advice[0]
    monkeypatch.setattr(network_blocks, "PLATFORM", "linux")
    assert network_blocks.network_warning() == ""  # errno 65 means something else there
    refusals.clear()


def _multicast_refusals() -> list[Any]:
    return [seen for seen in refusals.seen_refusals() if seen.kind == MULTICAST_SEND]


def test_which_refusals_are_local_network_privacy() -> None:
    lan_connect = _refusal(CONNECT, MACOS_EHOSTUNREACH, "192.168.1.20")
    assert local_network_denied([lan_connect], "darwin")
    assert local_network_denied([_refusal(MULTICAST_SEND, MACOS_EHOSTUNREACH)], "darwin")
    assert not local_network_denied([lan_connect], "linux")
    assert not local_network_denied([_refusal(CONNECT, MACOS_EHOSTUNREACH, "8.8.8.8")], "darwin")
    assert not local_network_denied([_refusal(CONNECT, MACOS_EHOSTUNREACH, "127.0.0.1")], "darwin")
    refused = _refusal(CONNECT, errno.ECONNREFUSED, "192.168.1.20")
    assert not local_network_denied([refused], "darwin")
    passed = platform_findings("darwin", [refused], lambda: pytest.fail("not Windows"))
    assert [(c.name, c.ok) for c in passed.checks] == [("local network", True)]
