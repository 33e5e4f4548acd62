"""What a first-time player trips over in the options and the lobby, in a real window."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.lan.advert import PROTOCOL, SERVICE_TYPE
from nerts_lan.practice import MAX_OPPONENTS
from net.discovery import Advert, Discovery
from net.runtime import NetworkThread
from tests.ui.conftest import Harness, frozen_practice
from tests.ui.test_lan_window import _button, _join_button, _run, _screen, _texts, _unique
from ui.lobby.lan import LanLobby
from ui.screens.lobby import OPEN_TIMEOUT

_RED = (204, 24, 36)
_BLUE = (22, 92, 210)


def _count_near(harness: Harness, rect: Any, colour: tuple[int, int, int]) -> int:
    """Pixels of ``rect`` within a small distance of ``colour`` (a suit's ink)."""
    data, width, _ = harness.pixels()
    count = 0
    for y in range(int(rect.y), int(rect.top)):
        for x in range(int(rect.x), int(rect.right)):
            offset = (y * width + x) * 3
            if all(abs(data[offset + i] - colour[i]) < 40 for i in range(3)):
                count += 1
    return count


def _until_restyled(harness: Harness, screen: Any) -> None:
    """Frames until the cards show the look the options ask for (a few dozen frames)."""
    for _ in range(200):
        if screen.restyle.atlas is None:
            return
        harness.frame()
    raise AssertionError("the cards never showed the new look")


def _option_button(screen: Any, row: int) -> Any:
    """The value button of the Options row ``row`` (0 sounds, 1 four-colour, 2 card size)."""
    return screen.overlay.buttons[row]


def test_an_option_shows_its_new_value_at_once_and_the_cards_follow_a_few_frames_later(
    harness: Harness,
) -> None:
    from pyglet.window import key

    screen = frozen_practice(harness, nerts="9C 5D", work=("9D", "6S", "", "2C"))
    nerts = screen.view.layout.own_area.nerts
    assert _count_near(harness, nerts, _RED) > 20 and _count_near(harness, nerts, _BLUE) == 0
    harness.key(key.O)
    four_colour = _option_button(screen, 1)
    assert four_colour.text.text == "off"

    harness.click(*four_colour.rect.center)
    # The button says "on" in the very next frame, while the cards are still being redrawn: the
    # click did not wait for 183 card images (that took seconds, and players clicked again).
    assert _option_button(screen, 1).text.text == "on"
    assert screen.view.atlas.four_colour is False
    # A player who changes their mind during the redraw is heard at once, and the last choice wins.
    harness.click(*four_colour.rect.center)
    assert _option_button(screen, 1).text.text == "off"
    harness.click(*four_colour.rect.center)
    assert _option_button(screen, 1).text.text == "on"
    harness.key(key.ESCAPE)
    _until_restyled(harness, screen)

    assert screen.view.atlas.four_colour is True and screen.settings.four_colour
    nerts = screen.view.layout.own_area.nerts
    assert _count_near(harness, nerts, _BLUE) > 20 and _count_near(harness, nerts, _RED) == 0


def test_a_new_card_size_shows_on_its_button_at_once_and_on_the_table_once_drawn(
    harness: Harness,
) -> None:
    from pyglet.window import key

    screen = frozen_practice(harness, nerts="9C 5D")
    before = screen.view.layout.own_area.nerts
    harness.key(key.O)
    size = _option_button(screen, 2)
    old_caption = size.text.text

    harness.click(*size.rect.center)
    assert _option_button(screen, 2).text.text != old_caption
    assert screen.view.layout.own_area.nerts == before
    _until_restyled(harness, screen)

    after = screen.view.layout.own_area.nerts
    assert (after.w, after.h) != (before.w, before.h)
    assert screen.view.atlas.sizes["own"] == (round(after.w), round(after.h))


# --- tables on the LAN (127.0.0.1) -----------------------------------------------------------


class _TableWithNobody:
    """The advert of a table with nobody behind it, as a laptop that slept or crashed leaves
    one: its port still accepts connections (nobody ever speaks) until ``stop_answering``."""

    def __init__(self, name: str, state: str = "playing", host_name: str = "Nobody") -> None:
        self.name = name
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        properties = {
            "v": str(PROTOCOL),
            "name": name,
            "host": "nobody-1",
            "hostname": host_name,
            "mode": "singles",
            "seats": "1/2",
            "state": state,
            "code": "0",
        }
        port = self.listener.getsockname()[1]
        advert = Advert(SERVICE_TYPE, secrets.token_hex(6), name, port, properties, ("127.0.0.1",))
        self.network = NetworkThread("nobody's table")
        self.discovery = Discovery("127.0.0.1")
        self.network.run(self._publish(advert), timeout=10)

    async def _publish(self, advert: Advert) -> None:
        await self.discovery.async_publish(advert)

    def stop_answering(self) -> None:
        self.listener.close()

    def close(self) -> None:
        self.network.run(self.discovery.async_close(), timeout=10)
        self.network.stop()
        self.listener.close()


@pytest.fixture
def quick_lan_harness(settings_dir: Path) -> Iterator[Harness]:
    """A window on the LAN of 127.0.0.1 whose browser checks the listed tables often."""
    from ui.app import make_window

    clock = [100.0]
    lobby = LanLobby("127.0.0.1", intermission=0.0, check_every=0.3)
    window = make_window(1024, 640, clock=lambda: clock[0], lobby=lobby)
    try:
        yield Harness(window, clock)
    finally:
        lobby.close()
        window.close()


def _listed(harness: Harness, name: str) -> bool:
    return any(t.name == name for t in harness.window.current._tables)


def test_a_table_that_stops_answering_leaves_the_list_though_its_advert_lingers(
    quick_lan_harness: Harness,
) -> None:
    harness = quick_lan_harness
    harness.window.show_menu()
    table = _TableWithNobody(_unique("Gone"))
    try:
        _run(harness, lambda: _listed(harness, table.name))
        harness.settle(0.5)
        assert _listed(harness, table.name)  # it answers: it stays

        table.stop_answering()  # no goodbye: caches keep the advert for an hour
        _run(harness, lambda: not _listed(harness, table.name))
    finally:
        table.close()


def test_opening_a_table_that_never_answers_gives_up_with_a_message_and_a_way_back(
    quick_lan_harness: Harness,
) -> None:
    harness = quick_lan_harness
    window = harness.window
    window.show_menu()
    table = _TableWithNobody(_unique("Silent"))
    try:
        _run(harness, lambda: _listed(harness, table.name))
        harness.click(*_join_button(window.current, table.name).rect.center)
        assert _screen(harness) == "LobbyScreen"
        assert "Opening the table…" in _texts(window.current)

        harness.frame(OPEN_TIMEOUT / 2)
        assert "Opening the table…" in _texts(window.current)
        harness.frame(OPEN_TIMEOUT / 2 + 1)
        harness.frame()
        texts = _texts(window.current)
        assert "Could not open the table" in texts
        assert any("did not answer" in text for text in texts)
        assert not window.lobby.active

        harness.click(*_button(window.current, "Back").rect.center)
        assert _screen(harness) == "MenuScreen"
    finally:
        table.close()


def test_a_long_table_name_is_cut_short_with_an_ellipsis_clear_of_its_join_button(
    quick_lan_harness: Harness,
) -> None:
    harness = quick_lan_harness
    window = harness.window
    window.show_menu()
    name = _unique("A table with a very long name, too")  # 39 characters
    table = _TableWithNobody(name, state="lobby", host_name="Somebody with a long name too")
    try:
        _run(harness, lambda: _listed(harness, name))
        join = _join_button(window.current, name)
        [row] = [
            item
            for item in window.current.items
            if str(getattr(item, "text", "")).startswith("A table")
        ]
        assert row.text.endswith("…")
        assert row.x + row.content_width < join.rect.x
    finally:
        table.close()


def test_the_name_field_says_its_limit_while_typing(harness: Harness) -> None:
    window = harness.window
    window.show_menu()

    def field() -> Any:
        return window.current.name_field  # the menu rebuilds its widgets now and then

    harness.click(*field().rect.center)
    for _ in range(len(field().value)):
        harness.key(_key("BACKSPACE"))
    assert field().count.text == "0/24"
    for letter in "Maximiliana Wilhelmina Ottoline":  # 31 characters
        harness.send("on_text", letter)
    assert field().value == "Maximiliana Wilhelmina O"
    assert field().count.text == "24 characters at most"
    harness.key(_key("BACKSPACE"))
    assert field().count.text == "23/24"


def _key(name: str) -> int:
    from pyglet.window import key

    return int(getattr(key, name))


def _right_click(harness: Harness, x: float, y: float) -> None:
    from pyglet.window import mouse

    harness.send("on_mouse_press", int(x), int(y), mouse.RIGHT, 0)
    harness.send("on_mouse_release", int(x), int(y), mouse.RIGHT, 0)


def _value_button(screen: Any, value: str) -> Any:
    """The cycling button that shows ``value``."""
    found = [b for b in screen.buttons if b.text.text == f"‹   {value}   ›"]
    assert found, [b.text.text for b in screen.buttons]
    return found[0]


def test_the_practice_choices_cycle_both_ways_and_show_that_they_do(harness: Harness) -> None:
    window = harness.window
    window.show_menu()
    opponents = window.current.settings.opponents
    level = window.current.settings.level
    button = _value_button(window.current, str(opponents))
    right_part = (button.rect.right - 10, button.rect.center[1])
    left_arrow = (button.rect.x + 10, button.rect.center[1])

    harness.click(*right_part)
    assert window.current.settings.opponents == (opponents + 1) % (MAX_OPPONENTS + 1)
    harness.click(*left_arrow)
    assert window.current.settings.opponents == opponents
    _right_click(harness, *_value_button(window.current, str(opponents)).rect.center)
    assert window.current.settings.opponents == (opponents - 1) % (MAX_OPPONENTS + 1)

    level_button = _value_button(window.current, level)
    _right_click(harness, *level_button.rect.center)
    harness.click(*level_button.rect.center)
    assert window.current.settings.level == level
    assert _value_button(window.current, "100")  # the match target cycles too


def test_a_click_on_the_drawn_arrows_of_a_short_value_steps_that_way(harness: Harness) -> None:
    window = harness.window
    window.show_menu()
    opponents = window.current.settings.opponents
    button = _value_button(window.current, str(opponents))
    text = button.text
    back_arrow = text.x - text.content_width / 2 + 3  # where the ‹ glyph is drawn
    on_arrow = text.x + text.content_width / 2 - 3
    harness.click(back_arrow, button.rect.center[1])
    assert window.current.settings.opponents == (opponents - 1) % (MAX_OPPONENTS + 1)
    button = _value_button(window.current, str(window.current.settings.opponents))
    harness.click(on_arrow, button.rect.center[1])
    assert window.current.settings.opponents == opponents


def test_the_host_form_cycles_both_ways_and_the_bot_level_says_whom_it_changes(
    quick_lan_harness: Harness,
) -> None:
    harness = quick_lan_harness
    window = harness.window
    window.show_menu()
    harness.click(*_button(window.current, "Host a table").rect.center)
    screen = window.current
    assert _screen(harness) == "LobbyScreen" and screen.teams == 4
    _right_click(harness, *_value_button(screen, "4").rect.center)
    assert screen.teams == 3
    harness.click(*_value_button(screen, "3").rect.center)
    assert screen.teams == 4
    _right_click(harness, *_value_button(screen, "100").rect.center)
    assert screen.target == 50

    screen.name_field.value = _unique("Cycles")
    harness.click(*_button(screen, "Open table").rect.center)
    bots = _run(harness, lambda: [b for b in screen.buttons if "Bots:" in b.text.text])[0]
    assert bots.text.text == "‹   Bots: medium   ›"
    _right_click(harness, *bots.rect.center)
    assert screen.table_page.bot_level == "easy"
    assert "for bots added from now on; seated bots keep theirs" in _texts(screen)
    harness.click(*_button(screen, "Leave").rect.center)
    assert _screen(harness) == "MenuScreen"


def test_the_host_form_opens_with_the_teams_it_last_showed(harness: Harness) -> None:
    """Issue 25: the Teams chosen in the host form were back at 4 when the form opened again
    (the next table, or the next run of the game)."""
    from ui.config import load_settings

    window = harness.window
    window.show_host_form()
    harness.frame()
    form = window.current
    assert form.teams == 4
    _right_click(harness, *_value_button(form, "4").rect.center)
    _right_click(harness, *_value_button(window.current, "3").rect.center)
    harness.click(*_button(window.current, "Back").rect.center)
    assert _screen(harness) == "MenuScreen"

    window.show_host_form()
    harness.frame()
    assert window.current.teams == 2
    assert _value_button(window.current, "2")  # the form shows them
    assert load_settings().host_teams == 2  # and the next run of the game opens with them


def test_a_symbol_the_font_lacks_is_drawn_as_a_stand_in_never_as_a_box(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.kit.widgets

    # DejaVu Sans has 🃏; its Mono sibling, like many a laptop's default font, does not.
    monkeypatch.setattr(ui.kit.widgets, "FONT", "DejaVu Sans Mono")
    window = harness.window
    window.show_menu()

    def field() -> Any:
        return window.current.name_field

    harness.click(*field().rect.center)
    for _ in range(len(field().value)):
        harness.key(_key("BACKSPACE"))
    for character in "🃏 Ada😀":
        harness.send("on_text", character)

    assert field().value == "🃏 Ada😀"  # the name is kept as typed; only its drawing changes
    assert field().text.text == "★ Ada|"
    labels = [item for item in window.current.items if hasattr(item, "document")]
    for item in [*labels, field().text]:
        font = item.document.get_font(0)
        assert all(font.face.get_character_index(c) for c in item.text if c.isprintable()), (
            item.text
        )
