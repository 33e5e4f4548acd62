"""The table's input: the pointer (a press picks or flips, a drag moves, a release drops, with
``DragControl``; the pointer is shared with the table) and the keys (Esc leaves or drops the
pick, ? / F1 help, O options, H hint; the others play, see ``intents.KEY_HELP``).

They turn input into the table screen's commands (``TableCommands``); while a panel is open it
takes the clicks and keys first (``Panels``), so these see only what reaches the table.
"""

from __future__ import annotations

import functools
from typing import Protocol

from pyglet.window import key as keys
from pyglet.window import mouse

from nerts_lan.rules.actions import REACTIONS, Action, CallNerts, DeclareStuck, Flip, React
from nerts_lan.table.session import Session
from ui.table import intents
from ui.table.drag import DragControl
from ui.table.hud import ButtonSpec, Hud
from ui.table.layout import Placement, pile_at
from ui.table.marking import Marking
from ui.table.message_strip import MessageKind
from ui.table.overlays import Overlay
from ui.table.panels import HELP_KEYS
from ui.table.reactions import REACTION_WORDS, ReactionBoard
from ui.table.stuck_check import CONFIRM_SECONDS, StuckCheck
from ui.table.view import TableView

__all__ = ["KeyControl", "PointerControl", "TableCommands", "game_buttons", "reaction_buttons"]

_KEY_NAMES = {
    keys.SPACE: "space",
    keys.N: "n",
    keys.W: "w",
    keys.F: "f",
    keys.ENTER: "enter",
    keys.RETURN: "enter",
    keys.NUM_ENTER: "enter",
    keys.UP: "up",
    keys.DOWN: "down",
    keys.S: "s",
    keys.X: "x",
    keys.ESCAPE: "escape",
    **{getattr(keys, f"_{i}"): str(i) for i in range(1, 7)},
    **{getattr(keys, f"NUM_{i}"): str(i) for i in range(1, 7)},
}
"""The play keys, by the names ``intents.key_action`` knows them."""


class TableCommands(Protocol):
    """What the controls see of the table screen and may ask of it."""

    read_only: bool
    dirty: bool
    player: str
    team: int
    now: float
    session: Session
    view: TableView
    hud: Hud
    marking: Marking
    reactions: ReactionBoard
    shown: list[Placement]
    """The cards on the table as drawn now."""

    @property
    def overlay(self) -> Overlay | None: ...

    def submit(self, action: Action) -> None: ...

    def share_cursor(self, x: float, y: float, holding: tuple[str, ...]) -> None: ...

    def leave(self) -> None: ...

    def open_help(self) -> None: ...

    def open_options(self) -> None: ...

    def show_hint(self) -> None: ...

    def mark_selection(self) -> None: ...

    def say(self, kind: MessageKind, text: str, *, lifetime: float | None = ...) -> None: ...


class PointerControl:
    """The mouse over the table: the guide's panel and the HUD's buttons first, then another
    team's piles (their reactions muted or heard again), the own cards (picked, dragged,
    dropped or clicked) and the stock (flipped)."""

    def __init__(self, table: TableCommands) -> None:
        self.table = table
        self.drag = DragControl(table.submit)

    def press(self, x: float, y: float, button: int) -> None:
        table = self.table
        table.dirty = True
        guide_panel = table.marking.guide_panel
        if guide_panel is not None and guide_panel.on_click(x, y):
            return
        if table.hud.click(x, y):
            return
        layout = table.view.layout
        if button != mouse.LEFT or layout is None:
            return
        muting = table.reactions.toggle_mute_at(layout, table.session.table, table.team, x, y)
        if muting is not None:  # a click on another team's piles: mute their reactions here
            table.say(MessageKind.TABLE, muting)
            return
        if table.read_only:
            return
        if self.drag.press(table.shown, table.session.view, table.team, x, y):
            return
        pointed = pile_at(layout, x, y)
        if pointed is not None and pointed.kind == "stock":
            table.submit(Flip(table.player))

    def drag_to(self, x: float, y: float) -> None:
        table = self.table
        if table.read_only:
            return
        table.share_cursor(x, y, self.drag.holding)
        if self.drag.drag_to(table.view, x, y):
            table.dirty = True

    def motion(self, x: float, y: float) -> None:
        table = self.table
        if not table.read_only:
            table.share_cursor(x, y, ())
        if table.overlay is None:
            table.hud.highlight(x, y)
            table.view.point_at(x, y)
            table.dirty = True

    def release(self) -> None:
        table = self.table
        if self.drag.release(table.view, table.session.view, table.player, table.now):
            table.dirty = True


class KeyControl:
    """The keys at the table (a panel open takes them first: ``Panels.key``)."""

    def __init__(self, table: TableCommands) -> None:
        self.table = table
        self.stuck_check = StuckCheck()
        """Whether S (or the Stuck button) declares stuck now or asks first (``stuck_check``)."""

    def press(self, symbol: int) -> None:
        table = self.table
        table.dirty = True
        if symbol == keys.ESCAPE and table.marking.selection is None:
            table.leave()  # nothing picked to drop: Esc is the way out (it asks first)
            return
        if symbol in HELP_KEYS:
            table.open_help()
            return
        if symbol == keys.O:
            table.open_options()
            return
        if symbol == keys.H:
            table.show_hint()
            return
        if table.read_only:
            return
        name = _KEY_NAMES.get(symbol)
        if name is None:
            return
        marking = table.marking
        marking.selection, action = intents.key_action(
            table.session.view, table.player, table.team, marking.selection, name
        )
        table.mark_selection()
        if isinstance(action, DeclareStuck):
            self.declare_stuck()
        elif action is not None:
            table.submit(action)
        elif name in ("f", "enter"):
            # Nothing picked and no hinted card for a foundation: say so, not nothing at all.
            sent_by = "F" if name == "f" else "Enter"
            table.say(MessageKind.REFUSAL, f"Pick a card first (N, W or 1-6), then {sent_by}")

    def text(self, text: str) -> None:
        if text == "?":
            self.table.open_help()

    def declare_stuck(self) -> None:
        """S or the Stuck button: declare stuck, or first say which card still plays (a second
        S declares it all the same: see ``stuck_check``)."""
        table = self.table
        question = self.stuck_check.question(table.session.view, table.player, table.now)
        if question is None:
            table.submit(DeclareStuck(table.player))
        else:
            table.say(MessageKind.REFUSAL, question, lifetime=CONFIRM_SECONDS)


def game_buttons(table: TableCommands, key_control: KeyControl) -> list[ButtonSpec]:
    """The HUD's buttons in a game, bottom first (the last one calls Nerts; Stuck goes the way
    of ``key_control``'s S). A watcher (no seat: ``read_only``) gets no Hint, Stuck or Nerts:
    none of them could do anything for them."""
    watching: list[ButtonSpec] = [
        ("Menu", table.leave, (70, 70, 80)),
        ("Options (O)", table.open_options, (52, 70, 84)),
        ("Help (?)", table.open_help, (52, 70, 84)),
    ]
    if table.read_only:
        return watching
    return [
        *watching,
        ("Hint (H)", table.show_hint, (40, 96, 70)),
        ("Stuck (S)", key_control.declare_stuck, (150, 96, 30)),
        ("NERTS! (X)", lambda: table.submit(CallNerts(table.player)), (190, 40, 40)),
    ]


def reaction_buttons(table: TableCommands) -> list[ButtonSpec]:
    """The reactions' row, for the mouse (Shift+1 to Shift+5 send them too): one button a
    reaction, left to right; none for a watcher, who has no seat to send from."""
    if table.read_only:
        return []
    colour = (60, 66, 92)
    return [
        (REACTION_WORDS[name], functools.partial(_react, table, name), colour) for name in REACTIONS
    ]


def _react(table: TableCommands, name: str) -> None:
    table.submit(React(table.player, name))
