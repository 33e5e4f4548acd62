"""The real window on the LAN (127.0.0.1): host or join from the lobby, ready, start, play.

The window runs headless (EGL) and is driven by dispatched mouse events; the other laptops are a
LAN session in this process or headless peers in processes of their own. Network time is real,
so the frames are paced by the wall clock here (the window itself never sleeps).
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from nerts_lan.bots.bot import Bot
from nerts_lan.lan.advert import LanOptions
from nerts_lan.lan.seat import LanSession
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.replica import ActionApplied, RoundEnded
from tests.net_real.peers import PeerProcess, headless
from tests.ui.conftest import Harness
from tests.ui.lan_kit import button_named as _button
from tests.ui.lan_kit import run_until as _run
from ui.lobby.lan import LanLobby
from ui.table.message_strip import MessageKind

LOOPBACK = ["--interface", "127.0.0.1"]


def _join_button(screen: Any, name: str) -> Any:
    """The Join (or Watch) button of the table named ``name`` in the menu's list."""
    rows = [t.name for t in screen._tables[:8]]
    buttons = [b for b in screen.buttons if b.text.text in ("Join", "Watch")]
    assert name in rows and len(buttons) == len(rows), (rows, [b.text.text for b in buttons])
    return buttons[rows.index(name)]


def _own_tables(lobby: LanLobby) -> list[Any]:
    """The listed tables that are the window's own (other tests may host tables meanwhile)."""
    assert lobby.session is not None
    return [t for t in lobby.tables() if t.table_id == lobby.session.status.table_id]


def _unique(name: str) -> str:
    """A table name no other test on this machine uses (they share the loopback's mDNS)."""
    return f"{name} {secrets.token_hex(2)}"


def _texts(screen: Any) -> list[str]:
    return [item.text for item in screen.items if hasattr(item, "text")]


def _screen(harness: Harness) -> str:
    return type(harness.window.current).__name__


def test_a_table_hosted_from_the_window_fills_readies_starts_and_shares_pointers(
    lan_harness: Harness,
) -> None:
    harness = lan_harness
    window = harness.window
    window.show_menu()
    harness.frame()
    harness.click(*window.current.name_field.rect.center)
    harness.send("on_text", "Ann")
    harness.click(*_button(window.current, "Host a table").rect.center)
    assert _screen(harness) == "LobbyScreen"
    form = window.current
    harness.click(*_button(form, "off").rect.center)  # partnership on
    harness.click(*_button(window.current, "Open table").rect.center)

    lobby = window.lobby
    _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
    view = lobby.lobby()
    assert view.is_host and view.settings.partnership and view.settings.name == "Ann's table"
    assert view.my_seat.team == 0
    # Move to the green team (the third) from the screen.
    sit_buttons = [b for b in window.current.buttons if b.text.text == "Sit here"]
    assert len(sit_buttons) == 3  # every team but the player's own
    harness.click(*sit_buttons[1].rect.center)
    _run(harness, lambda: lobby.lobby().my_seat.team == 2)
    start = _button(window.current, "Start")
    assert not start.enabled
    assert any("team Green needs two players" in t for t in _texts(window.current))

    # The table shows up in the LAN's list; a second laptop joins it (it picks Ann's team, the
    # only one with a free seat beside someone) and its bot says ready by itself.
    listed = _run(harness, lambda: _own_tables(lobby))
    assert [(t.name, t.host, t.partnership) for t in listed] == [("Ann's table", "Ann", True)]
    advert = lobby.advertised(listed[0].table_id)
    guest = LanSession.join(
        LanOptions("Bo", "bo-7", interface="127.0.0.1", bot="easy", bot_delay=1e6), advert
    )
    try:
        _run(harness, lambda: len(lobby.lobby().seats) == 2 and len(lobby.lobby().ready) == 1)
        assert lobby.lobby().team(2)[1].player == "Bo"
        screen = window.current
        assert any("Bo: ready" in t for t in _texts(screen))
        assert any("Ann (host) — you: not ready" in t for t in _texts(screen))
        assert not _button(screen, "Start").enabled
        assert any("waiting for Ann to be ready" in t for t in _texts(screen))

        harness.click(*_button(screen, "I'm ready").rect.center)
        _run(harness, lambda: _button(window.current, "Start").enabled)
        harness.click(*_button(window.current, "Start").rect.center)
        table_screen = _run(
            harness, lambda: window.current if _screen(harness) == "TableScreen" else None
        )
        session = table_screen.session
        assert session.local_players == ("Ann",) and not table_screen.read_only
        assert session.table.team_players == (("Ann", "Bo"),)

        # Bo's pointer appears on Ann's table, as his partner's.
        def pointer() -> bool:
            guest.poll()
            guest.send_cursor("Bo", 0.3, 0.6, ("2C",))
            return "Bo" in table_screen.view.pointers.cursors

        _run(harness, pointer)
    finally:
        guest.close()


def test_the_window_joins_a_headless_table_plays_a_round_and_ends_with_the_same_hash(
    lan_harness: Harness, tmp_path: Path
) -> None:
    harness = lan_harness
    window = harness.window
    # Bots slow enough that the window's own seat gets to play on a loaded machine too.
    common = [*LOOPBACK, "--bot", "hard", "--bot-delay", "0.3", "--rounds", "1", "--timeout", "90"]
    e2e = _unique("E2E")
    host = PeerProcess(
        ["host", "--headless", "--name", "Cy", "--table", e2e, "--players", "3", *common],
        tmp_path / "cy",
    )
    peers = [host]
    try:
        host.wait_for("hosting")
        peers.append(
            PeerProcess(
                ["join", "--headless", "--name", "Di", "--table", e2e, *common], tmp_path / "di"
            )
        )
        window.show_menu()
        # The table appears in the menu's list by itself; join it with the Join button.
        _run(harness, lambda: any(t.name == e2e for t in window.current._tables))
        harness.click(*_join_button(window.current, e2e).rect.center)
        assert _screen(harness) == "LobbyScreen"
        lobby = window.lobby
        _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
        harness.click(*_button(window.current, "I'm ready").rect.center)
        table_screen = _run(
            harness,
            lambda: window.current if _screen(harness) == "TableScreen" else None,
            timeout=20,
        )
        session = table_screen.session
        me = session.local_players[0]
        assert len(session.table.team_names) == 3 and not table_screen.read_only

        # The window's seat is played through session.submit by a bot of the test's own.
        bot = Bot(me, "hard", seed="window", delay_scale=0.05)
        next_move = [0.0]
        ended: list[RoundEnded] = []
        mine: list[ActionApplied] = []

        def round_over() -> bool:
            events = table_screen.last_events
            ended.extend(e for e in events if isinstance(e, RoundEnded))
            mine.extend(e for e in events if isinstance(e, ActionApplied) and e.local)
            now = time.monotonic()
            if not ended and now >= next_move[0]:
                action = bot.decide(session.view, now)
                if action is not None:
                    session.submit(action)
                next_move[0] = now + max(bot.reaction_delay(action), 0.01)
            return bool(ended)

        _run(harness, round_over, timeout=60)
        hashes = [peer.wait_for("round_over", round=1)["state_hash"] for peer in peers]
        assert hashes == [ended[0].digest.hex()] * 2
        assert len(mine) >= 5  # the window's seat did play
        for peer in peers:
            assert peer.finish(20) == 0
    finally:
        for peer in peers:
            peer.stop()


def test_a_window_that_joins_mid_match_watches_the_table_read_only(lan_harness: Harness) -> None:
    from pyglet.window import key

    harness = lan_harness
    window = harness.window
    # A one-player table that starts by itself; its bot is too slow to ever move.
    under_way = _unique("Under way")
    host = LanSession.host(
        LanOptions("Eve", "eve-3", interface="127.0.0.1", bot="easy", bot_delay=1e6, players=1),
        TableSettings(under_way),
    )
    try:
        window.show_menu()
        _run(
            harness, lambda: any(t.started and t.name == under_way for t in window.current._tables)
        )
        watch = _join_button(window.current, under_way)
        assert watch.text.text == "Watch"
        harness.click(*watch.rect.center)
        screen = _run(
            harness, lambda: window.current if _screen(harness) == "TableScreen" else None
        )
        assert screen.read_only and screen.session.local_players == ()
        assert screen.session.table.team_players == (("Eve",),)
        before = screen.session.view
        stock = screen.view.layout.own_area.stock
        harness.click(*stock.center)  # a spectator's click flips nothing
        harness.key(key.SPACE)
        # The round's news reaches the window from the network thread: wait for it to be said.
        _run(harness, lambda: "watching" in (screen.messages.text_of(MessageKind.ROUND) or ""))
        assert screen.session.view is before
    finally:
        host.close()


def test_a_private_table_asks_for_its_code_and_a_wrong_one_is_refused(
    lan_harness: Harness, tmp_path: Path
) -> None:
    harness = lan_harness
    window = harness.window
    private = _unique("Private")
    host = PeerProcess(
        headless("host", "Cy", private, "--private", "--players", "2"),
        tmp_path / "cy",
    )
    try:
        code = host.wait_for("hosting")["code"]
        assert code and len(code) == 4
        window.show_menu()
        _run(harness, lambda: any(t.name == private for t in window.current._tables))
        assert any("needs a code" in t for t in _texts(window.current))
        harness.click(*_join_button(window.current, private).rect.center)
        form = window.current
        assert _screen(harness) == "LobbyScreen" and not window.lobby.active
        assert any("This table is private" in t for t in _texts(form))

        # A wrong code: the table refuses it and the form asks again, saying so.
        wrong = "ZZZZ" if code != "ZZZZ" else "YYYY"
        harness.send("on_text", wrong)
        harness.click(*_button(form, "Join").rect.center)
        _run(harness, lambda: "wrong code" in window.lobby.problem, timeout=20)
        _run(harness, lambda: any("This table is private" in t for t in _texts(window.current)))
        assert window.lobby.lobby() is None
        # Said under the code's field, as large as the form's words (issue 25: a small line at
        # the window's bottom, far from the field).
        field_rect = window.current.name_field.rect
        said = _run(harness, lambda: _item_saying(window.current, "wrong code"))
        words = _item_saying(window.current, "This table is private")
        assert said.font_size > words.font_size and abs(said.x - field_rect.x) < 1
        assert field_rect.y - 60 < said.y < field_rect.y

        # The right code, typed in lower case with a dash, lets the player in.
        field = window.current.name_field
        for _ in range(len(field.value)):
            harness.send("on_key_press", _key("BACKSPACE"), 0)
        harness.send("on_text", f"{code[:2].lower()}-{code[2:].lower()}")
        harness.send("on_key_press", _key("ENTER"), 0)
        lobby = window.lobby
        _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
        assert lobby.lobby().settings.name == private
        assert any(f"Table code: {code}" in t for t in _texts(window.current))
    finally:
        host.stop()


def _item_saying(screen: Any, words: str) -> Any:
    """The text item of ``screen`` that says ``words`` (None: none does)."""
    return next((i for i in screen.items if words in getattr(i, "text", "")), None)


def _key(name: str) -> int:
    from pyglet.window import key

    return int(getattr(key, name))


def test_a_table_hosted_private_from_the_window_shows_its_code_and_needs_it(
    lan_harness: Harness,
) -> None:
    harness = lan_harness
    window = harness.window
    window.show_menu()
    harness.frame()
    harness.click(*_button(window.current, "Host a table").rect.center)
    harness.click(*_button(window.current, "off (anyone joins)").rect.center)
    code = window.current.code
    assert code and any(b.text.text == f"code {code}" for b in window.current.buttons)
    harness.click(*_button(window.current, "Open table").rect.center)
    lobby = window.lobby
    _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
    assert any(f"Table code: {code}" in t for t in _texts(window.current))

    listed = _run(harness, lambda: _own_tables(lobby))
    assert listed[0].needs_code
    advert = lobby.advertised(listed[0].table_id)
    wrong = "".join("B" if ch != "B" else "C" for ch in code)
    outsider = LanSession.join(
        LanOptions("Eve", "eve-1", interface="127.0.0.1", table_code=wrong), advert, wait=False
    )
    guest = LanSession.join(
        LanOptions("Bo", "bo-7", interface="127.0.0.1", table_code=code, bot="easy"), advert
    )
    try:

        def refused() -> bool:
            outsider.poll()  # the session learns of the refusal from what its thread posted
            return outsider.start_error() == "wrong table code"

        _run(harness, refused, timeout=20)
        _run(harness, lambda: len(lobby.lobby().seats) == 2)
        assert outsider.status.peer_id not in dict(lobby.lobby().members)
    finally:
        outsider.close()
        guest.close()


def test_the_next_deal_waits_until_the_windows_player_presses_next_round(
    lan_harness: Harness, tmp_path: Path
) -> None:
    # Issue 25: the LAN scoreboard was up about 4 s and its Next round did nothing; now it stays
    # until every player at the table pressed Next round (or a stated time ran out).
    from pyglet.window import key

    from ui.table.overlays import ScoreOverlay

    harness = lan_harness
    window = harness.window
    name = _unique("Paced")
    options = ["--bot", "hard", "--bot-delay", "0.05", "--pile", "4", "--timeout", "120"]
    host = PeerProcess(
        ["host", "--headless", "--name", "Cy", "--table", name, "--players", "2", "--rounds",
         "2", *LOOPBACK, *options],
        tmp_path / "cy",
    )  # fmt: skip
    try:
        host.wait_for("hosting")
        window.show_menu()
        _run(harness, lambda: any(t.name == name for t in window.current._tables))
        harness.click(*_join_button(window.current, name).rect.center)
        lobby = window.lobby
        _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
        harness.click(*_button(window.current, "I'm ready").rect.center)
        screen = _run(
            harness, lambda: window.current if _screen(harness) == "TableScreen" else None, 20
        )
        session = screen.session
        me = session.local_players[0]
        bot = Bot(me, "hard", seed="paced", delay_scale=0.05)
        next_move = [0.0]

        def scores_up() -> bool:
            now = time.monotonic()
            if screen.round_number == 1 and now >= next_move[0]:
                action = bot.decide(session.view, now)
                if action is not None:
                    session.submit(action)
                next_move[0] = now + max(bot.reaction_delay(action), 0.01)
            return isinstance(screen.overlay, ScoreOverlay) and screen.overlay.ready()

        _run(harness, scores_up, timeout=60)
        my_id = session.status.peer_id
        # Cy's laptop (headless, no intermission) has committed to the next deal; only ours is
        # missing, so no deal can come until this player says so.
        _run(harness, lambda: session.lobby.deal_waits_for == (my_id,))
        assert screen.round_number == 1 and isinstance(screen.overlay, ScoreOverlay)
        next_button = screen.overlay.buttons[0]
        assert next_button.text.text == "Next round (Enter)" and next_button.enabled

        harness.key(key.ENTER)
        _run(harness, lambda: screen.round_number == 2, timeout=20)
        assert screen.overlay is None
        assert host.wait_for("round_started", round=2)
    finally:
        host.stop()


def test_the_pressed_next_round_names_whom_the_deal_waits_for() -> None:
    from ui.table.overlays import waiting_caption

    assert waiting_caption(()) == "Waiting for the others"
    assert waiting_caption(("Cy",)) == "Waiting for Cy"
    assert waiting_caption(("Cy", "Di")) == "Waiting for Cy and Di"
    assert waiting_caption(("Cy", "Di", "Ed")) == "Waiting for 3 players"
