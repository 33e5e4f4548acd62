"""What a player meets at the table in the corners issue 25 found, in a real window: real keys
and clicks, checked against what is said, drawn and shown."""

from __future__ import annotations

from typing import Any

from nerts_lan.practice import PracticeConfig, PracticeSession
from tests.kit import layout, team
from tests.ui.conftest import Harness
from ui.table.message_strip import MessageKind

_RIVAL: dict[str, Any] = {"nerts": "KD QD", "work": ("KC", "KH", "KS", "QC"), "stock": "2D 3D"}


def _deal(**piles_of_you: Any) -> Any:
    return layout(team("You", ("You",), **piles_of_you), team("Ada", ("Ada",), **_RIVAL))


def _config() -> PracticeConfig:
    return PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)


class _Watching(PracticeSession):
    """A practice table seen from no seat of its own: what a spectator's window gets."""

    @property
    def local_players(self) -> tuple[str, ...]:
        return ()


def _captions(screen: Any) -> list[str]:
    return [button.text.text for button in screen.hud.buttons]


def test_a_watcher_gets_no_hint_stuck_nerts_nor_reaction_button(harness: Harness) -> None:
    deal = _deal(nerts="9C 5H", work=("9D", "8D", "7H", "QC"), stock="3S 4S 6D")
    harness.window.start_practice(_config(), first_deal=deal)
    harness.frame()
    playing = _captions(harness.window.current)
    assert {"Hint (H)", "Stuck (S)", "NERTS! (X)"} <= set(playing), playing

    harness.window.start_session(_Watching(_config(), first_deal=deal))
    harness.frame()
    screen = harness.window.current
    assert screen.read_only
    watching = _captions(screen)
    assert watching == ["Menu", "Options (O)", "Help (?)"], watching
    assert screen.hud.reaction_buttons == []  # no seat to react from
    harness.frame()  # the HUD's refresh has no Nerts button to enable, and does not fail


def _panel_rect_and_pixels(harness: Harness, deal: Any) -> tuple[Any, bytes, int]:
    """The help panel's rect and the window's pixels, the help open over ``deal``."""
    from pyglet.window import key

    from ui.kit.widgets import Panel

    harness.window.start_practice(_config(), first_deal=deal)
    harness.settle(0.3)
    harness.key(key.F1)
    overlay = harness.window.current.overlay
    panel = next(item for item in overlay.items if isinstance(item, Panel))
    data, width, _ = harness.pixels()
    return panel.rect, data, width


def _opacity_of_panel(overlay: Any) -> int:
    from ui.kit.widgets import Panel

    return int(next(item for item in overlay.items if isinstance(item, Panel)).shape.opacity)


def test_no_card_shows_through_the_panels_over_the_table(harness: Harness) -> None:
    """Issue 25: the help, the scores and the question whether to leave were see-through: the
    cards under the help showed in its backdrop (up to 9 levels brighter)."""
    from pyglet.window import key

    from ui.table.overlays import ScoreOverlay
    from ui.table.scoreboard import BANNER_SECONDS

    cards = _deal(nerts="9C 5H", work=("9D", "8D", "7H", "QC"), stock="3S 4S 6D")
    rect, with_cards, width = _panel_rect_and_pixels(harness, cards)
    bare = _deal(nerts="", work=("", "", "", ""), stock="3S 4S 6D")  # no card under the panel
    same_rect, without, _ = _panel_rect_and_pixels(harness, bare)
    assert rect == same_rect
    rows = range(int(rect.y) + 14, int(rect.top) - 14)
    see_through = [
        (x, y)
        for y in rows
        for x in range(int(rect.x) + 14, int(rect.right) - 14)
        if with_cards[(y * width + x) * 3 : (y * width + x) * 3 + 3]
        != without[(y * width + x) * 3 : (y * width + x) * 3 + 3]
    ]
    assert see_through == [], f"{len(see_through)} pixels of the help show the cards under it"

    harness.key(key.ESCAPE)  # the help closes; Esc again asks whether to leave
    harness.key(key.ESCAPE)
    screen = harness.window.current
    assert screen.panels.asking and _opacity_of_panel(screen.overlay) == 255
    harness.key(key.ESCAPE)  # stay
    harness.key(key.X)  # the nerts pile is empty: Nerts!, then the scores
    harness.settle(BANNER_SECONDS + 0.5)
    assert isinstance(screen.overlay, ScoreOverlay)
    assert _opacity_of_panel(screen.overlay) == 255


def _count_near(harness: Harness, rect: Any, colour: tuple[int, int, int]) -> int:
    """Pixels of ``rect`` within a small distance of ``colour``."""
    data, width, _ = harness.pixels()
    count = 0
    for y in range(int(rect.y), int(rect.top)):
        for x in range(int(rect.x), int(rect.right)):
            offset = (y * width + x) * 3
            if all(abs(data[offset + i] - colour[i]) < 24 for i in range(3)):
                count += 1
    return count


def test_the_keyboard_pick_shows_on_the_card_the_hint_outlines(harness: Harness) -> None:
    """Issue 25: with the hint on the picked card, the hint's outline was drawn on the pick's
    and hid it: the player could not see what Enter would send."""
    from pyglet.window import key

    from tests.ui.conftest import practice_with_a_lone_ace
    from ui.kit.theme import ACCENT, GOOD

    screen = practice_with_a_lone_ace(harness)
    nerts = screen.view.layout.own_area.nerts
    assert _count_near(harness, nerts, ACCENT) == 0
    harness.key(key.N)  # pick the A♥
    picked = _count_near(harness, nerts, ACCENT)
    assert picked > 100
    harness.key(key.H)  # the hint: the A♥ to a foundation, on the same card
    assert "A♥" in (screen.messages.text_of(MessageKind.HINT) or "")
    assert _count_near(harness, nerts, GOOD) > 100  # the hint shows
    assert _count_near(harness, nerts, ACCENT) > picked * 0.7  # and so does the pick


def test_enter_with_nothing_to_send_says_how_to_pick_a_card(harness: Harness) -> None:
    """Issue 25: Enter (or F) with no card picked and none for a foundation did nothing, and
    said nothing: the player could not tell a missed key from a refused one."""
    from pyglet.window import key

    deal = _deal(nerts="9C 5H", work=("9D", "8D", "7H", "QC"), stock="3S 4S 6D")
    harness.window.start_practice(_config(), first_deal=deal)
    harness.frame()
    screen = harness.window.current
    before = screen.session.view
    harness.key(key.ENTER)
    said = screen.messages.text_of(MessageKind.REFUSAL)
    assert said == "Pick a card first (N, W or 1-6), then Enter"
    assert said in [shown.text for shown, _ in screen.hud.strip.lines]  # drawn, not only kept
    harness.key(key.F)
    assert screen.messages.text_of(MessageKind.REFUSAL) == "Pick a card first (N, W or 1-6), then F"
    assert screen.session.view is before  # nothing was sent

    harness.key(key.N)  # with the 5♥ picked, Enter sends it: the engine's refusal says why not
    harness.key(key.ENTER)
    harness.frame()
    assert screen.messages.text_of(MessageKind.REFUSAL) == "5♥ has nowhere to go"


def test_stuck_with_a_card_that_plays_names_it_and_asks_for_a_second_s(harness: Harness) -> None:
    """Issue 25: S with the A♣ free for a foundation declared the team stuck at once. Now the
    first S names the card; a second S soon after declares stuck all the same (the rules allow
    it, and the player may mean it); an S long after asks again."""
    from pyglet.window import key

    from ui.table.stuck_check import CONFIRM_SECONDS

    deal = _deal(nerts="9C 5H", work=("9D", "8D", "7H", "AC"), stock="3S 4S 6D")
    harness.window.start_practice(_config(), first_deal=deal)
    harness.frame()
    screen = harness.window.current

    def stuck() -> bool:
        return bool(screen.session.view.teams[screen.team].stuck)

    harness.key(key.S)
    asked = "A♣ still plays to a foundation: S again to declare stuck"
    assert not stuck() and screen.messages.text_of(MessageKind.REFUSAL) == asked
    line = next(shown for shown, _ in screen.hud.strip.lines if shown.text == asked)
    assert line.content_height < line.font_size * 2.6  # one line, not wrapped

    harness.settle(CONFIRM_SECONDS + 1.0)  # too late to be the second S: it asks again
    assert screen.messages.text_of(MessageKind.REFUSAL) is None
    button = next(b for b in screen.hud.buttons if b.text.text == "Stuck (S)")
    harness.click(*button.rect.center)  # the button asks the same
    assert not stuck() and screen.messages.text_of(MessageKind.REFUSAL) == asked
    harness.key(key.S)  # the second S: stuck all the same
    harness.frame()
    assert stuck()
    assert screen.messages.text_of(MessageKind.STUCK) == "You are stuck"


def test_stuck_with_only_a_nerts_card_for_a_work_pile_asks_too(harness: Harness) -> None:
    from pyglet.window import key

    deal = _deal(nerts="9C 5H", work=("9D", "8D", "7H", "6S"), stock="3S 4S 6D")
    harness.window.start_practice(_config(), first_deal=deal)
    harness.frame()
    screen = harness.window.current
    harness.key(key.S)
    said = screen.messages.text_of(MessageKind.REFUSAL)
    assert said == "5♥ still plays to work pile 4: S again to declare stuck"
    assert not screen.session.view.teams[screen.team].stuck


def test_stuck_with_no_card_that_plays_is_declared_at_once(harness: Harness) -> None:
    from pyglet.window import key

    # No black 6 or 4, no empty work pile, no foundation begun: no card plays anywhere.
    deal = _deal(nerts="9C 5H", work=("9D", "8D", "7H", "QC"), stock="3S 4S 6D")
    harness.window.start_practice(_config(), first_deal=deal)
    harness.frame()
    screen = harness.window.current
    harness.key(key.S)
    harness.frame()
    assert screen.session.view.teams[screen.team].stuck
    assert screen.messages.text_of(MessageKind.REFUSAL) is None
