"""The real window joins by address (127.0.0.1): the menu's "Join by address", a typed address
(plain words for what is no address, for nothing listening there), a table's code when it is
private, and the host's lobby showing what to type.

The window runs headless (EGL) and is driven by dispatched events; the host is a headless peer
in a process of its own. Network time is real, so frames are paced by the wall clock here.
"""

from __future__ import annotations

import secrets
import socket
from pathlib import Path
from typing import Any

from tests.net_real.peers import PeerProcess, headless
from tests.ui.conftest import Harness
from tests.ui.lan_kit import button_named as _button
from tests.ui.lan_kit import run_until as _run


def _texts(screen: Any) -> list[str]:
    return [item.text for item in screen.items if hasattr(item, "text")]


def _shown(harness: Harness, words: str) -> bool:
    return any(words in text for text in _texts(harness.window.current))


def _key(name: str) -> int:
    from pyglet.window import key

    return int(getattr(key, name))


def _retype(harness: Harness, text: str) -> None:
    field = harness.window.current.name_field
    for _ in range(len(field.value)):
        harness.send("on_key_press", _key("BACKSPACE"), 0)
    harness.send("on_text", text)


def _address_form(harness: Harness) -> Any:
    window = harness.window
    window.show_menu()
    harness.frame()
    harness.click(*_button(window.current, "Join by address").rect.center)
    form = window.current
    assert type(form).__name__ == "LobbyScreen" and form.address_form
    assert _shown(harness, "type the address its host's lobby shows")
    return form


def test_a_typed_address_joins_the_table_after_plain_words_for_two_wrong_ones(
    lan_harness: Harness, tmp_path: Path
) -> None:
    harness = lan_harness
    window = harness.window
    name = f"By hand {secrets.token_hex(2)}"
    host = PeerProcess(headless("host", "Cy", name, "--players", "2"), tmp_path / "cy")
    try:
        port = host.wait_for("hosting")["port"]
        form = _address_form(harness)

        harness.send("on_text", "Cy's laptop")
        harness.click(*_button(form, "Join").rect.center)
        _run(harness, lambda: _shown(harness, "is not an IPv4 address or a host name"))
        assert window.current is form and form.address_form and not window.lobby.active

        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            free = unused.getsockname()[1]
        _retype(harness, f"127.0.0.1:{free}")
        harness.send("on_key_press", _key("ENTER"), 0)
        _run(harness, lambda: _shown(harness, f"nothing is listening at 127.0.0.1:{free}"))
        assert window.current is form and form.address_form

        _retype(harness, f"127.0.0.1:{port}")
        harness.click(*_button(window.current, "Join").rect.center)
        lobby = window.lobby
        _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
        assert lobby.lobby().settings.name == name
        assert _shown(harness, name) and not form.address_form
    finally:
        host.stop()


def test_a_private_table_found_by_address_asks_for_its_code(
    lan_harness: Harness, tmp_path: Path
) -> None:
    harness = lan_harness
    window = harness.window
    name = f"Secret {secrets.token_hex(2)}"
    host = PeerProcess(headless("host", "Cy", name, "--private", "--players", "2"), tmp_path / "cy")
    try:
        hosting = host.wait_for("hosting")
        _address_form(harness)
        harness.send("on_text", f"127.0.0.1:{hosting['port']}")
        harness.send("on_key_press", _key("ENTER"), 0)
        _run(harness, lambda: _shown(harness, "This table is private"))
        assert window.lobby.lobby() is None

        harness.send("on_text", hosting["code"].lower())
        harness.send("on_key_press", _key("ENTER"), 0)
        lobby = window.lobby
        _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
        assert lobby.lobby().settings.name == name
    finally:
        host.stop()


def test_the_hosts_lobby_shows_the_address_and_port_to_type(lan_harness: Harness) -> None:
    harness = lan_harness
    window = harness.window
    window.show_menu()
    harness.frame()
    harness.click(*_button(window.current, "Host a table").rect.center)
    harness.click(*_button(window.current, "Open table").rect.center)
    lobby = window.lobby
    _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
    assert lobby.session is not None
    port = lobby.session.status.port
    _run(harness, lambda: _shown(harness, "They join by address"))
    assert _shown(harness, f"127.0.0.1:{port}")  # the window plays on 127.0.0.1 only
