"""The window's LAN lobby hands the player's session to the table screen once a round is dealt,
with what happened since: a deal whose news and view reach the window in two frames (the network
thread posts them one after the other) loses nothing, as a spectator joining mid-match found
("Round 1: you are watching" never showed, once in a busy full-suite run)."""

from __future__ import annotations

from nerts_lan.rules.engine import deal_round
from nerts_lan.rules.state import Options, Table
from nerts_lan.table.session import PeerWentSilent, RoundStarted, SessionEvent
from ui.lobby.lan import LanLobby


class _SplitDeal:
    """A LAN session whose round-start news arrives one poll before its view (the interleaving
    of two posts from the network thread with the window's frames)."""

    def __init__(self, batches: list[tuple[list[SessionEvent], bool]]) -> None:
        self._batches = batches
        self._waiting: list[SessionEvent] = []
        self.dealt = False

    def poll(self, now: float | None = None) -> list[SessionEvent]:
        events, self._waiting = self._waiting, []
        batch, self.dealt = self._batches.pop(0) if self._batches else ([], self.dealt)
        return [*events, *batch]

    def requeue(self, events: list[SessionEvent]) -> None:
        self._waiting = [*events, *self._waiting]

    def start_error(self) -> str | None:
        return None

    def close(self) -> None:
        pass


def _round_started() -> RoundStarted:
    table = Table(Options(), ("red", "blue"), (("Ann",), ("Bo",)))
    return RoundStarted(1, deal_round(table, "handover"))


def test_a_round_start_seen_before_its_view_reaches_the_table_screen() -> None:
    started = _round_started()
    silent = PeerWentSilent("cy-1", "Cy")
    session = _SplitDeal([([silent], False), ([started], False), ([], True)])
    lobby = LanLobby("127.0.0.1")
    lobby.session = session  # type: ignore[assignment]
    try:
        assert lobby.poll(0.0) is None  # lobby news before any deal: the lobby's own
        assert lobby.poll(0.1) is None  # the deal's news, its view not yet here
        handed = lobby.poll(0.2)
        assert handed is session
        assert handed.poll(0.3) == [started]  # the table screen hears of the deal
    finally:
        lobby.close()


def test_a_round_start_with_its_view_in_one_frame_is_handed_over_once() -> None:
    started = _round_started()
    session = _SplitDeal([([started], True)])
    lobby = LanLobby("127.0.0.1")
    lobby.session = session  # type: ignore[assignment]
    try:
        assert lobby.poll(0.0) is session
        assert session.poll(0.1) == [started]
        assert session.poll(0.2) == []
    finally:
        lobby.close()
