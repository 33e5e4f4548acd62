"""Every way out of the app is a leave: the other laptops at the table hear a goodbye.

A real headless window hosts a table on 127.0.0.1 from its lobby, a LAN session in this process
joins it, then the app is quit one way or another while pyglet's loop runs: the way macOS's
Cmd+Q is answered (``ui.quitting.request_quit``, what the application delegate calls), a SIGTERM
(a ``kill``), a SIGHUP (the terminal closed), ``pyglet.app.exit()``, the window's close button.
"""

from __future__ import annotations

import os
import secrets
import signal
from collections.abc import Callable
from typing import Any

import pytest

from nerts_lan.lan.advert import LanOptions
from nerts_lan.lan.seat import LanSession
from nerts_lan.table.session import PeerGone
from tests.ui.conftest import Harness
from tests.ui.lan_kit import run_until
from tests.waiting import until
from ui.lobby.provider import HostRequest

pyglet = pytest.importorskip("pyglet")


def _quit_like_cmd_q(window: Any) -> None:
    from ui.quitting import request_quit

    request_quit()


def _close_button(window: Any) -> None:
    window.dispatch_event("on_close")


def _signal(number: int) -> Callable[[Any], None]:
    return lambda window: os.kill(os.getpid(), number)


WAYS_OUT: dict[str, Callable[[Any], None]] = {
    "cmd-q": _quit_like_cmd_q,
    "sigterm": _signal(signal.SIGTERM),
    "sighup": _signal(signal.SIGHUP),
    "app-exit": lambda window: pyglet.app.exit(),
    "close-button": _close_button,
}


@pytest.mark.parametrize("way_out", list(WAYS_OUT))
def test_every_way_out_of_the_app_says_goodbye_to_the_table_once(
    lan_harness: Harness, way_out: str
) -> None:
    from ui.app import _loop

    harness = lan_harness
    window = harness.window
    lobby = window.lobby
    name = f"Quit {secrets.token_hex(2)}"
    window.show_menu()
    lobby.host("Ann", HostRequest(name))
    window.show_host_form()  # the lobby screen shows the table the window sits at
    run_until(harness, lambda: lobby.lobby() is not None)
    advert = run_until(harness, lambda: lobby.advertised(lobby.session.status.table_id))
    guest = LanSession.join(
        LanOptions("Bo", f"bo-{secrets.token_hex(2)}", interface="127.0.0.1"), advert
    )
    try:
        run_until(harness, lambda: len(lobby.lobby().seats) == 2)
        ann = lobby.session.status.peer_id
        # The app's own loop runs; a moment later, the way out.
        pyglet.clock.schedule_once(lambda dt: WAYS_OUT[way_out](window), 0.05)
        try:
            _loop(window)
        finally:
            pyglet.window.Window._enable_event_queue = True

        gone: list[PeerGone] = []

        def heard() -> bool:
            gone.extend(e for e in guest.poll() if isinstance(e, PeerGone) and e.peer == ann)
            return bool(gone)

        until(heard, 10.0, what="the table hearing that Ann went", step=0.01)
        assert gone[0].left, "Ann's quitting reached the table as a crash, not a goodbye"
        assert len(gone) == 1
    finally:
        guest.close()
