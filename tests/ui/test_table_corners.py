"""What a player meets at the table in the corners issue 25 found, in a real window: real keys
and clicks, checked against what is said, drawn and shown."""

from __future__ import annotations

from typing import Any

from nerts_lan.practice import PracticeConfig, PracticeSession
from tests.kit import layout, team
from tests.ui.conftest import Harness

_RIVAL = {"nerts": "KD QD", "work": ("KC", "KH", "KS", "QC"), "stock": "2D 3D"}


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


def test_a_watcher_gets_no_hint_stuck_or_nerts_button(harness: Harness) -> None:
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
    harness.frame()  # the HUD's refresh has no Nerts button to enable, and does not fail
