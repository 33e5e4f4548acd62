"""Reactions at the table: quick words ("Nice!") a player sends with Shift+1 to Shift+5, shown
for a moment by the sender's piles on every screen, and muted here per player by a click on
their piles.

Sending is an intent like any move (``React`` goes through the session into the ordered log, and
the engine refuses one too soon after the last); what is shown comes back as ``ActionApplied``,
local or remote alike. Muting is this window's alone: nothing of it reaches the table or its log.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from pyglet.graphics import Group
from pyglet.window import key as keys

from nerts_lan.rules.actions import REACTIONS, Action, React
from nerts_lan.rules.state import Table
from nerts_lan.table.replica import ActionApplied, EntryKey
from ui.kit.geometry import Rect
from ui.kit.theme import lighter, team_rgb
from ui.kit.widgets import Panel, label
from ui.table.layout import TableLayout

__all__ = [
    "REACTION_KEYS",
    "REACTION_WORDS",
    "SHOW_SECONDS",
    "ReactionBoard",
    "reaction_key",
]

REACTION_WORDS: Final[dict[str, str]] = {
    "nice": "Nice!",
    "wow": "Wow!",
    "oops": "Oops!",
    "hot": "Hot!",
    "gg": "GG",
}
"""What each reaction says on the screen (words: every font draws them)."""

REACTION_KEYS: Final[dict[int, str]] = {
    getattr(keys, f"_{i + 1}"): name for i, name in enumerate(REACTIONS)
}
"""Shift and a number key sends a reaction (the number keys alone pick work piles)."""

SHOW_SECONDS: Final = 2.0
"""How long a reaction stays by its sender's piles."""

_PAD: Final = 6.0


class Sender(Protocol):
    """What sending a reaction needs of the table screen."""

    read_only: bool
    player: str

    def submit(self, action: Action) -> None: ...


def reaction_key(screen: Sender, symbol: int, modifiers: int) -> bool:
    """Send the reaction of Shift+``symbol`` for the screen's player; True when it was one
    (a watcher, who has no seat, sends nothing: the key is still taken)."""
    name = REACTION_KEYS.get(symbol)
    if name is None or not modifiers & keys.MOD_SHIFT:
        return False
    if not screen.read_only:
        screen.submit(React(screen.player, name))
    return True


class ReactionBoard:
    """The reactions shown now, one per player, each by its sender's tableau; and whose this
    window mutes."""

    def __init__(self, batch: Any, group: Group) -> None:
        self._batch = batch
        self._back = Group(order=0, parent=group)
        self._front = Group(order=1, parent=group)
        self.muted: set[str] = set()
        """The players whose reactions this window does not show."""
        self._shown: dict[str, tuple[list[Any], float]] = {}
        self._seen: set[EntryKey] = set()
        """Entries shown once: a reorder that applies one again does not show it again."""

    def texts(self) -> dict[str, str]:
        """What each player's reaction shown now says."""
        return {player: items[-1].text for player, (items, _) in self._shown.items()}

    def places(self) -> dict[str, tuple[float, float]]:
        """Where each player's reaction shown now is (the right end of its words)."""
        return {player: (items[-1].x, items[-1].y) for player, (items, _) in self._shown.items()}

    def applied(
        self, event: ActionApplied, layout: TableLayout | None, table: Table, now: float
    ) -> bool:
        """Show the reaction an applied entry is (any other action: nothing); True if shown."""
        action = event.action
        if not isinstance(action, React) or layout is None or event.key in self._seen:
            return False
        self._seen.add(event.key)
        team = table.team_of(action.by)
        if action.by in self.muted or team is None:
            return False
        area = next((a for a in layout.teams if a.team == team), None)
        if area is None:
            return False
        self._hide(action.by)
        row = table.team_players[team].index(action.by)
        colour = lighter(team_rgb(table.back_colours[team]), 0.55)
        self._shown[action.by] = (self._bubble(area.area, row, action.say, colour), now)
        return True

    def toggle_mute_at(
        self, layout: TableLayout, table: Table, own_team: int, x: float, y: float
    ) -> str | None:
        """A click at ``x``, ``y``: on another team's piles it mutes their players' reactions
        (or hears them again); what to tell the player, None for a click elsewhere."""
        area = next((a for a in layout.teams if not a.own and a.area.contains(x, y)), None)
        if area is None or area.team == own_team:
            return None
        players = table.team_players[area.team]
        names = " & ".join(players)
        if all(player in self.muted for player in players):
            self.muted.difference_update(players)
            return f"{names}: reactions shown again"
        self.muted.update(players)
        for player in players:
            self._hide(player)
        return f"{names}: reactions muted (click their cards again to see them)"

    def expire(self, now: float) -> bool:
        """Take away the reactions shown long enough; True if any went."""
        old = [p for p, (_, since) in self._shown.items() if now - since >= SHOW_SECONDS]
        for player in old:
            self._hide(player)
        return bool(old)

    def new_round(self) -> None:
        self.clear()
        self._seen.clear()

    def clear(self) -> None:
        for player in list(self._shown):
            self._hide(player)

    def _hide(self, player: str) -> None:
        items, _ = self._shown.pop(player, ([], 0.0))
        for item in items:
            item.delete()

    def _bubble(self, area: Rect, row: int, say: str, colour: tuple[int, int, int]) -> list[Any]:
        """A reaction's words on a dark panel, in the top right corner of a team's area."""
        size = max(min(area.h * 0.09, 22.0), 12.0)
        right = area.x + area.w - _PAD
        top = area.y + area.h - _PAD - row * (size * 1.8 + _PAD)
        words = label(
            self._batch,
            self._front,
            REACTION_WORDS.get(say, say),
            right - _PAD,
            top - size * 0.9,
            size=size,
            colour=colour,
            anchor_x="right",
            bold=True,
        )
        width = words.content_width + 2 * _PAD
        rect = Rect(right - width, top - size * 1.8, width, size * 1.8)
        return [Panel(self._batch, self._back, rect, colour=(20, 24, 30), alpha=225), words]
