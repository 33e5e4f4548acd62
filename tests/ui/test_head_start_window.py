"""Issue 25 in a real window: the host gives a team a head start from the host form, the lobby
and the table show it in what it does ("Pile 10 · +1 work pile · ×1.5"), never as a level, the
deal honours it, and the scoreboard shows the multiplier beside the round's score."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.actions import DeclareStuck
from nerts_lan.rules.handicap import Handicap
from tests.ui.conftest import Harness
from tests.ui.test_lan_window import _button, _run, _screen, _texts

HEAD_START = "Pile 10 · +1 work pile · ×1.5"
LEVEL_WORDS = ("beginner", "easy", "novice", "weak", "handicap")


def _words(items: list[Any]) -> str:
    return " ".join(str(item.text) for item in items if hasattr(item, "text")).lower()


def test_the_host_gives_a_team_a_head_start_and_the_table_shows_it(lan_harness: Harness) -> None:
    from ui.table.overlays import ScoreOverlay

    harness = lan_harness
    window = harness.window
    _choose_a_head_start_for_blue(harness)
    harness.click(*_button(window.current, "Open table").rect.center)

    lobby = window.lobby
    _run(harness, lambda: lobby.lobby() is not None and lobby.lobby().my_seat is not None)
    view = lobby.lobby()
    assert view.settings.options.handicaps == (("Blue", Handicap(pile=10, work=5, score=150)),)
    # Ann sits on Blue, the team with the head start; the lobby says what it gets.
    _run(harness, lambda: any(HEAD_START in t for t in _texts(window.current)))
    sit = [b for b in window.current.buttons if b.text.text == "Sit here"]
    harness.click(*sit[0].rect.center)
    _run(harness, lambda: lobby.lobby().my_seat.team == 1)
    harness.click(*_button(window.current, "I'm ready").rect.center)
    _run(harness, lambda: _button(window.current, "Start").enabled)
    harness.click(*_button(window.current, "Start").rect.center)
    screen = _run(harness, lambda: window.current if _screen(harness) == "TableScreen" else None)

    session = screen.session
    own = session.view.teams[0]
    assert (len(own.nerts), len(own.work)) == (10, 5)
    assert len(screen.view.layout.own_area.work) == 5
    harness.frame()
    names = [label.text for label in screen.view.felt._team_labels]
    assert names == [f"Ann  · {HEAD_START}"]
    assert not any(word in " ".join(names).lower() for word in LEVEL_WORDS)
    assert "this round -20 ×1.5" in screen.hud.round_label.text

    # Stuck again and again: the round ends dead, and its scores show the multiplier.
    def scores_up() -> bool:
        if screen.round_number == 1 and not session.view.teams[0].stuck:
            session.submit(DeclareStuck("Ann"))
        return isinstance(screen.overlay, ScoreOverlay)

    _run(harness, scores_up, timeout=30)
    _run(harness, lambda: screen.overlay.tally.done(harness.clock[0]))  # the scores counted up
    harness.frame()
    rows = _texts(screen.overlay)
    assert "-20 ×1.5" in rows  # 10 nerts cards left: -20, which a multiplier never deepens


def _plain(button: Any) -> str:
    """A button's caption without the arrows of one that cycles both ways."""
    return str(button.text.text).strip("‹› ").strip()


def _cycling(screen: Any, caption: str) -> Any:
    found = [b for b in screen.buttons if _plain(b) == caption]
    assert found, f"no {caption!r} button in {[_plain(b) for b in screen.buttons]}"
    return found[0]


def _caption(screen: Any, team: str) -> str:
    """What the head-start row gives the team its team button shows (``team``)."""
    chooser = _cycling(screen, team)
    row = [b for b in screen.buttons if abs(b.rect.y - chooser.rect.y) < 1 and b is not chooser]
    return _plain(row[0])


def _choose_a_head_start_for_blue(harness: Harness) -> None:
    """The host form, from the menu: Blue gets Pile 10 · +1 work pile · ×1.5, step by step."""
    window = harness.window
    window.show_menu()
    harness.frame()
    harness.click(*window.current.name_field.rect.center)
    harness.send("on_text", "Ann")
    harness.click(*_button(window.current, "Host a table").rect.center)
    assert _screen(harness) == "LobbyScreen"
    assert "Head start" in _texts(window.current)
    # The team button goes to Blue; its head start cycles none → Pile 10 → Pile 10 · +1 work
    # pile → Pile 10 · +1 work pile · ×1.5.
    harness.click(*_cycling(window.current, "for Red").rect.center)
    seen = [_caption(window.current, "for Blue")]
    for _ in range(3):
        harness.click(*_cycling(window.current, seen[-1]).rect.center)
        seen.append(_caption(window.current, "for Blue"))
    assert seen == ["none", "Pile 10", "Pile 10 · +1 work pile", HEAD_START]
    # Green has none of its own; back to Blue, which keeps its choice.
    harness.click(*_cycling(window.current, "for Blue").rect.center)
    assert _caption(window.current, "for Green") == "none"
    green = _cycling(window.current, "for Green").rect
    harness.click(green.x + 6, green.y + green.h / 2)  # its left part steps back
    assert _caption(window.current, "for Blue") == HEAD_START
    words = " ".join(b.text.text for b in window.current.buttons) + _words(window.current.items)
    assert not any(word in words.lower() for word in LEVEL_WORDS)


def test_each_team_block_has_its_own_number_of_work_piles() -> None:
    from ui.table.layout import compute_layout

    layout = compute_layout(1024, 720, 3, 0, (4, 5, 3))
    assert [len(area.work) for area in layout.teams] == [4, 5, 3]
    same = compute_layout(1024, 720, 3, 0, 5)
    assert layout.teams[1] == same.teams[1]  # every block is laid out as wide as the most
