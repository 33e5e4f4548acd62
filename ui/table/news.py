"""What a LAN table says about itself and its players, told at the table: "Waiting for the
table…" while it is paused, where this laptop stands after it moved or slept, why it sits out
when the others cannot hear it, who left or came back; and that the table is gone (``gone``:
the screen goes back to the menu).
"""

from __future__ import annotations

from typing import Any, Protocol

from nerts_lan.lan.rejoining import unreachable_line
from nerts_lan.table.session import (
    AddressChanged,
    Away,
    BackAtTable,
    ClockLags,
    LeftBehind,
    PeerGone,
    PeerReturned,
    Reconnected,
    TableGone,
    TablePaused,
    Unreachable,
)
from ui.table.message_strip import KIND_LIFETIME, MessageKind
from ui.table.pause_banner import LEFT_BEHIND, PauseBanner, whereabouts_text

__all__ = ["Say", "TableNews", "comings_and_goings"]


class Say(Protocol):
    """``TableScreen.say``: a message of ``kind`` in the message area."""

    def __call__(
        self,
        kind: MessageKind,
        text: str,
        *,
        colour: tuple[int, int, int] | None = None,
        lifetime: float | None = KIND_LIFETIME,
    ) -> None: ...


class TableNews:
    """The table's news, said through ``say``, the pause shown on ``banner``."""

    def __init__(self, banner: PauseBanner, say: Say) -> None:
        self.banner = banner
        self.say = say
        self.gone: str | None = None
        """Why the table is gone (``TableGone``), once it is."""

    def handle(self, event: Any, width: int, height: int) -> bool:
        """Tell ``event`` if it is the table's news; False when it is not."""
        if isinstance(event, (TablePaused, LeftBehind)):
            self._paused(event, width, height)
        elif isinstance(event, (AddressChanged, Reconnected, Away, BackAtTable, TableGone)):
            self._whereabouts(event)
        elif isinstance(event, Unreachable):
            # Why this laptop sits out, until it tries again (a bot plays its seat meanwhile).
            line = unreachable_line(event.unheard, event.seconds)
            self.say(MessageKind.TABLE, line, lifetime=event.seconds)
        elif isinstance(event, (PeerGone, PeerReturned)):
            self.say(MessageKind.TABLE, comings_and_goings(event))
        elif isinstance(event, ClockLags):
            self.say(MessageKind.TABLE, clock_lags_line(event.name, event.lag))
        else:
            return False
        return True

    def _whereabouts(
        self, event: AddressChanged | Reconnected | Away | BackAtTable | TableGone
    ) -> None:
        """A laptop that moved or slept: say where it stands; a table gone ends the screen."""
        if isinstance(event, TableGone):
            self.gone = event.reason
            return
        if isinstance(event, BackAtTable):
            self.banner.hide()
        lasting = isinstance(event, (Away, AddressChanged))  # until what became of it is known
        self.say(MessageKind.TABLE, whereabouts_text(event), lifetime=None if lasting else 10.0)

    def _paused(self, event: TablePaused | LeftBehind, width: int, height: int) -> None:
        """The banner while the table waits; what became of the wait when it is over."""
        if isinstance(event, LeftBehind):
            # Our moves the others never got are undone as we catch up: say so, not silently.
            self.banner.hide()
            self.say(MessageKind.TABLE, LEFT_BEHIND, lifetime=10.0)
        elif event.paused:
            self.banner.show(width, height)
        elif self.banner.shown:
            self.banner.hide()
            self.say(MessageKind.TABLE, "The table is back")


def clock_lags_line(name: str, lag: float) -> str:
    """A member whose moves reach the table late (``ClockLags``), said without blame: a held
    clock and a slow link look the same."""
    return (
        f"{name}'s moves reach the table {round(lag * 1000)} ms late: they count as they "
        "arrive, so a late move wins no race"
    )


def comings_and_goings(event: PeerGone | PeerReturned) -> str:
    """Who left or came back, by the laptop's player ("Ann left the table"), never by the bots
    it ran: when a host goes, its bots go on under another laptop ("Bot 1 left" was wrong)."""
    who = event.name or ", ".join(event.players)
    if isinstance(event, PeerReturned):
        return f"{who} is back"
    if event.name and event.name not in event.players:
        return f"{who} left the table"  # a watcher, or a host of bots only: nobody's seat goes
    return f"{who} left the table (a bot plays on)"
