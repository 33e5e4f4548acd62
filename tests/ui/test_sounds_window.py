"""What the table makes heard, in a real window (the sounds asked for: there is no speaker):
your moves, someone else's foundation plays softly, the suit called when the player asks."""

from __future__ import annotations

from typing import Any

from pyglet.window import key

from nerts_lan.practice import PracticeConfig
from tests.kit import layout, team
from tests.ui.conftest import Harness


def _button(overlay: Any, caption: str) -> Any:
    return next(b for b in overlay.buttons if b.text.text == caption)


def test_your_plays_are_heard_with_the_suit_called_once_asked_for(harness: Harness) -> None:
    you = team("You", ("You",), nerts="9C AH", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    ada = team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D 3D")
    config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
    harness.window.start_practice(config, first_deal=layout(you, ada))
    harness.settle(0.2)
    screen = harness.window.current
    area = screen.view.layout.own_area

    harness.key(key.SPACE)  # a flip
    harness.settle(0.3)
    assert screen.sounds.played[-1:] == ["flip"]

    harness.key(key.O)
    sounds_button = _button(screen.overlay, "on")
    harness.click(*sounds_button.rect.center)
    assert _button(screen.overlay, "suits called")  # what the player reads
    harness.key(key.ESCAPE)

    harness.click(*area.nerts.center)  # A♥ to a foundation
    harness.settle()
    assert screen.sounds.played[-2:] == ["foundation", "suit_hearts"]
    assert harness.window.settings.suit_callouts  # remembered


def test_someone_elses_foundation_play_is_heard_softly_and_nothing_else_of_theirs(
    harness: Harness,
) -> None:
    you = team("You", ("You",), nerts="9C 5H", work=("9D", "6S", "", "2C"), stock="3S 4S 5S")
    ada = team("Ada", ("Ada",), nerts="KD QD 9H AS", work=("KC", "KH", "KS", "QC"), stock="2D")
    config = PracticeConfig(player="You", opponents=1, seed="race", level="instant")
    harness.window.start_practice(config, first_deal=layout(you, ada))
    screen = harness.window.current
    harness.settle(0.5)  # the instant bot plays its ace, then what else it can

    heard = screen.sounds.played
    assert "foundation_other" in heard
    assert "flip" not in heard and "play" not in heard  # the bot's other moves: not heard
    assert heard.count("foundation_other") == len(screen.session.view.f_cards[0])
