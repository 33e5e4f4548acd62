"""What teaches a first-time player, in the real window: hints and their highlight."""

from __future__ import annotations

from typing import Any

from nerts_lan.practice import PracticeConfig
from nerts_lan.rules.actions import CallNerts, DeclareStuck, Play
from tests.kit import layout, team
from tests.ui.conftest import Harness
from ui.kit.theme import GOOD
from ui.table.message_strip import MessageKind

_ADA = team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2S 3S")


def _practice(
    harness: Harness, mine: dict[str, Any], rival: dict[str, Any] = _ADA, **state_options: Any
) -> Any:
    """A practice table with a known deal; the bot never moves."""
    state = layout(mine, rival, **state_options)
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state)
    harness.settle(0.2)
    return harness.window.current


def _hint(harness: Harness) -> None:
    from pyglet.window import key

    harness.key(key.H)
    harness.settle(0.1)


def _is_mark(colour: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 30 for a, b in zip(colour, GOOD))


def _column_marks(harness: Harness, x: float, y0: float, y1: float) -> list[int]:
    """The rows from ``y0`` to ``y1`` at column ``x`` drawn in the hint's colour."""
    data, width, _ = harness.pixels()
    found = []
    for y in range(int(y0), int(y1)):
        offset = (y * width + int(x)) * 3
        if _is_mark((data[offset], data[offset + 1], data[offset + 2])):
            found.append(y)
    return found


def test_a_hint_in_a_cascade_outlines_the_card_it_names_not_the_cards_on_it(
    harness: Harness,
) -> None:
    eights = ("AD 2D 3D 4D 5D 6D 7D 8D", " ".join(["Ada"] * 8))
    mine = team("You", ("You",), nerts="KC", work=("9D 8C 7H", "9H", "KD", "QH"), stock="3S")
    screen = _practice(harness, mine, foundations=(eights,))
    area = screen.view.layout.own_area
    eight = area.work_card(0, 1, 3)
    seven = area.work_card(0, 2, 3)

    _hint(harness)

    assert isinstance(screen.marking.hint, Play) and str(screen.marking.hint.card) == "8C"
    column = eight.x + eight.w * 0.5
    marks = _column_marks(harness, column, seven.y, eight.top + 8)
    assert marks, "the 8♣ is not outlined"
    assert min(marks) >= seven.top - 4, "the outline reaches down over the 7♥"


def test_a_hint_on_the_nerts_pile_leaves_the_name_above_it_whole(harness: Harness) -> None:
    mine = team("You", ("You",), nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S")
    screen = _practice(harness, mine)
    nerts = screen.view.layout.own_area.nerts
    _hint(harness)

    assert isinstance(screen.marking.hint, Play) and screen.marking.hint.source.kind == "nerts"
    column = nerts.x + nerts.w * 0.3
    assert _column_marks(harness, column, nerts.y, nerts.top)
    assert not _column_marks(harness, column, nerts.top, nerts.top + 20)
    assert not _column_marks(harness, column, nerts.y - 20, nerts.y)


def test_the_hint_says_stuck_after_a_pass_through_the_stock_that_played_nothing(
    harness: Harness,
) -> None:
    from pyglet.window import key

    mine = team(
        "You", ("You",), nerts="KD", work=("9D", "7H", "5D", "3H"), stock="QH JD 10H 8D 6H 4D"
    )
    screen = _practice(harness, mine)
    _hint(harness)
    assert "flip" in _hint_text(screen).lower()
    for _ in range(3):  # 3 + 3, then the waste turned over
        harness.key(key.SPACE)
        harness.settle(0.2)

    _hint(harness)

    assert screen.marking.hint == DeclareStuck("You")
    assert "press S" in _hint_text(screen)


def test_the_hint_says_nerts_once_the_pile_is_empty(harness: Harness) -> None:
    mine = team("You", ("You",), nerts="", work=("AS", "7H", "5D", "3H"), stock="QH JD")
    far_from_nerts = team("Ada", ("Ada",), nerts="KD QD JD 10D 9D", work=("KC", "KH", "KS", "QC"))
    screen = _practice(harness, mine, far_from_nerts)
    _hint(harness)
    assert screen.marking.hint == CallNerts("You")
    assert "Nerts" in _hint_text(screen)


def test_help_teaches_the_game_with_a_picture_and_fits_a_small_window(harness: Harness) -> None:
    from pyglet import shapes
    from pyglet.window import key

    mine = team("You", ("You",), nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S")
    screen = _practice(harness, mine)
    harness.key(key.F1)
    overlay = screen.overlay
    texts = " ".join(item.text for item in overlay.items if hasattr(item, "text"))
    for words in ("Goal", "nerts pile", "Foundations", "Work piles", "+1", "−2", "Stuck", "Space"):
        assert words in texts, words
    assert any(isinstance(item, shapes.Rectangle) and item.width < 200 for item in overlay.items)

    overlay.build(1024, 640)  # the smallest common window: nothing may spill out of the panel
    panel = overlay.items[1].rect
    for item in overlay.items:
        if hasattr(item, "text"):
            bottom = item.y - (item.content_height if item.anchor_y == "top" else 0)
            assert panel.y <= bottom and item.y <= panel.top, item.text
        elif isinstance(item, shapes.Rectangle) and item.width < 200:
            assert panel.y <= item.y and item.y + item.height <= panel.top


def test_a_new_players_first_practice_is_one_easy_bot_and_a_change_is_remembered(
    harness: Harness,
) -> None:
    from ui.config import load_settings

    harness.window.show_menu()
    harness.frame()
    menu = harness.window.current
    texts = [item.text for item in menu.items if hasattr(item, "text")]
    captions = [_bare(button.text.text) for button in menu.buttons]
    assert "1" in texts + captions and "easy" in texts + captions, (texts, captions)
    practice = next(b for b in menu.buttons if b.text.text == "Practice")
    harness.click(*practice.rect.center)
    harness.frame()
    session = harness.window.current.session
    assert len(session.table.team_names) == 2
    assert session.config.level == "easy"

    harness.window.show_menu()
    harness.frame()
    menu = harness.window.current
    level = next(b for b in menu.buttons if _bare(b.text.text) == "easy")
    harness.click(*level.rect.center)
    assert load_settings().level == "medium"


def test_the_first_practice_is_a_guided_round_offered_once_and_skippable(
    harness: Harness,
) -> None:
    from ui.config import load_settings
    from ui.table.guide import LESSONS

    def practice_from_menu() -> Any:
        harness.window.show_menu()
        harness.frame()
        menu = harness.window.current
        practice = next(b for b in menu.buttons if b.text.text == "Practice")
        harness.click(*practice.rect.center)
        harness.settle(0.3)
        return harness.window.current

    screen = practice_from_menu()
    panel = screen.marking.guide_panel
    assert panel is not None and load_settings().guide_offered
    assert screen.session.config.delay_scale > 1  # slow bots while the player reads
    lessons = [text for text in LESSONS.values() if text in panel.text]
    assert len(lessons) == 1, panel.text  # one explanation at a time
    assert screen.marking.hint is not None  # the next move is pointed at without asking
    marked = screen.view.pointers.marks
    assert marked, "the guide's move is not outlined"

    harness.click(*panel.skip.rect.center)
    assert (
        screen.marking.guide_panel is None
        and screen.marking.guide is None
        and not screen.view.pointers.marks
    )

    again = practice_from_menu()
    assert again.marking.guide_panel is None and again.session.config.delay_scale == 1


def test_the_guide_never_covers_the_foundation_its_move_goes_to(harness: Harness) -> None:
    foundations = (
        *((ace, "Ada") for ace in ("AS", "AH", "AC", "AD")),
        ("AS", "You"),
        ("AH", "You"),
        ("AC 2C", "You You"),
    )
    mine = team("You", ("You",), nerts="KD 3C", work=("9D", "7H", "5D", "3H"), stock="QH JD")
    state = layout(mine, _ADA, foundations=foundations)
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state, guided=True)
    harness.settle(0.2)
    screen = harness.window.current

    assert isinstance(screen.marking.hint, Play) and str(screen.marking.hint.card) == "3C"
    target = screen.view.layout.foundation_rect(6)
    panel = screen.marking.guide_panel
    assert panel is not None and panel._area.overlap(target) == 0
    assert _column_marks(harness, target.x + 1, target.y, target.top)  # its outline shows


def _bare(caption: str) -> str:
    """A button's value without the cycling marks around it ("‹ easy ›" is "easy")."""
    return caption.strip("‹› ")


def _hint_text(screen: Any) -> str:
    """What the hint says in the table's message area."""
    return screen.messages.text_of(MessageKind.HINT) or ""


def test_the_guide_panel_covers_no_foundation_in_play(harness: Harness) -> None:
    # Issue 25: the panel sat over foundations 5 and up (it only kept clear of the step's own).
    foundations = (*((ace, "Ada") for ace in ("AS", "AH", "AC", "AD")), ("AS", "You"))
    mine = team("You", ("You",), nerts="KD 9C", work=("9D", "7H", "5D", "3H"), stock="QH JD")
    state = layout(mine, _ADA, foundations=foundations)
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=state, guided=True)
    harness.settle(0.2)
    screen = harness.window.current
    panel = screen.marking.guide_panel
    assert panel is not None and panel.text
    in_play = [screen.view.layout.foundation_rect(i) for i in range(len(state.f_cards) + 1)]
    assert all(panel._area.overlap(rect) == 0 for rect in in_play), (
        panel._area,
        screen.view.layout.center,
        in_play,
    )
