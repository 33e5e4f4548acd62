"""The table's one message area: what the game tells the player, one line per message.

``MessageBoard`` is the logic, pure and driven by the time passed in: one message per
``MessageKind`` (a newer one of the same kind replaces it), each until its lifetime ends, the
newest shown first and at most a few at once (an older one comes back when a newer one goes).
What is stale is cleared by kind: the screen clears the round's "go!" when the round ends or a
panel opens, and a hint once it no longer holds (``ui.table.hints.hint_stands``).

``MessageStrip`` draws the board's visible lines in the layout's message strip
(``TableLayout.messages``: the full free width between the player's tableau and the middle of
the table), the newest line nearest the player's cards.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Final

from pyglet import shapes

from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, GOOD, TEXT, WARN
from ui.kit.widgets import label
from ui.table.message_kind import MessageKind

__all__ = [
    "DEFAULT_LIFETIMES",
    "KIND_LIFETIME",
    "Message",
    "MessageBoard",
    "MessageKind",
    "MessageStrip",
]

Colour = tuple[int, int, int]


DEFAULT_LIFETIMES: Final[dict[MessageKind, float | None]] = {
    MessageKind.ROUND: 3.0,
    MessageKind.HINT: 12.0,
    MessageKind.REFUSAL: 3.5,
    MessageKind.TABLE: 6.0,
    MessageKind.STUCK: None,
    MessageKind.ROTATION: 7.0,
    MessageKind.MOVE: 5.0,
}
"""Seconds each kind stays by default; None: until cleared or replaced."""

_COLOURS: Final[dict[MessageKind, Colour]] = {
    MessageKind.ROUND: GOOD,
    MessageKind.HINT: ACCENT,
    MessageKind.REFUSAL: WARN,
    MessageKind.TABLE: TEXT,
    MessageKind.STUCK: WARN,
    MessageKind.ROTATION: ACCENT,
    MessageKind.MOVE: TEXT,
}

KIND_LIFETIME: Final = -1.0
"""A lifetime that means the kind's own (``DEFAULT_LIFETIMES``): ``show``'s default."""


@dataclass(frozen=True, slots=True)
class Message:
    """One line of the message area, shown until ``until`` (None: until cleared or replaced)."""

    kind: MessageKind
    text: str
    colour: Colour
    until: float | None
    order: int
    """When it was shown, as a count: the newest has the highest."""
    about: object = None
    """What it was about (a hint: a token that lasts while it holds), or None; see
    ``MessageBoard.forget``."""


class MessageBoard:
    """The messages of one table: one per kind, at most ``lines`` visible, newest first."""

    def __init__(self, lines: int = 2) -> None:
        self.lines = lines
        self._messages: dict[MessageKind, Message] = {}
        self._counter = itertools.count(1)

    def show(
        self,
        kind: MessageKind,
        text: str,
        now: float,
        *,
        lifetime: float | None = KIND_LIFETIME,
        colour: Colour | None = None,
        about: object = None,
    ) -> bool:
        """Show ``text`` as the message of ``kind`` from ``now`` (an empty text clears it);
        True when what is shown changed. Showing the same lasting message again changes
        nothing; a timed one starts its time again and comes first. A message ``about``
        something goes when ``forget`` is told that it is no longer current."""
        if not text:
            return self.clear(kind)
        if lifetime == KIND_LIFETIME:
            lifetime = DEFAULT_LIFETIMES[kind]
        shade = colour if colour is not None else _COLOURS[kind]
        old = self._messages.get(kind)
        if lifetime is None and old is not None and (old.text, old.colour) == (text, shade):
            return False
        until = None if lifetime is None else now + lifetime
        self._messages[kind] = Message(kind, text, shade, until, next(self._counter), about)
        return True

    def clear(self, *kinds: MessageKind) -> bool:
        """Take the messages of ``kinds`` away (all of them when none is named); True when one
        was shown."""
        gone = [kind for kind in (kinds or tuple(self._messages)) if kind in self._messages]
        for kind in gone:
            del self._messages[kind]
        return bool(gone)

    def forget(self, current: object) -> bool:
        """Drop the messages about something other than ``current`` (a hint about an older
        state); True when one went."""
        stale = [
            kind
            for kind, message in self._messages.items()
            if message.about is not None and message.about is not current
        ]
        return self.clear(*stale) if stale else False

    def expire(self, now: float) -> bool:
        """Drop the messages whose time is up at ``now``; True when one went."""
        gone = [
            kind
            for kind, message in self._messages.items()
            if message.until is not None and now >= message.until
        ]
        return self.clear(*gone) if gone else False

    def visible(self) -> tuple[Message, ...]:
        """What the area shows: the newest messages first, at most ``lines``."""
        newest = sorted(self._messages.values(), key=lambda message: -message.order)
        return tuple(newest[: self.lines])

    def text_of(self, kind: MessageKind) -> str | None:
        """The text of the message of ``kind``, or None."""
        message = self._messages.get(kind)
        return message.text if message is not None else None


class MessageStrip:
    """Draws a board's visible lines in a rectangle of the window (a thin pyglet view)."""

    def __init__(self, batch: Any, group: Any, text_group: Any) -> None:
        self.batch = batch
        self.group = group
        self.text_group = text_group
        self.rect = Rect(0, 0, 0, 0)
        self.lines: list[tuple[Any, Any]] = []
        """Per drawn line, newest first: its label and its backdrop."""
        self._shown: tuple[tuple[str, Colour], ...] | None = None

    def place(self, rect: Rect) -> None:
        """Draw in ``rect`` from now on (the next ``show`` redraws)."""
        self.rect = rect
        self._shown = None

    def show(self, messages: tuple[Message, ...]) -> bool:
        """Draw ``messages`` (newest first); True when what is drawn changed."""
        wanted = tuple((message.text, message.colour) for message in messages)
        if wanted == self._shown:
            return False
        self._shown = wanted
        self._delete_lines()
        rows = max(len(wanted), 1)
        line_h = self.rect.h / max(rows, 2)
        size = max(line_h * 0.58, 9.0)
        for row, (text, colour) in enumerate(wanted):
            y = self.rect.y + line_h * (row + 0.5)
            self.lines.append(self._line(text, colour, y, size, line_h))
        return True

    def delete(self) -> None:
        self._delete_lines()
        self._shown = None

    # --- helpers -------------------------------------------------------------------------------

    def _line(self, text: str, colour: Colour, y: float, size: float, line_h: float) -> Any:
        centre = self.rect.x + self.rect.w / 2
        shown = label(
            self.batch,
            self.text_group,
            text,
            centre,
            y,
            size=size,
            colour=colour,
            anchor_x="center",
            bold=True,
        )
        room = self.rect.w - size * 2
        while shown.content_width > room and len(shown.text) > 2:
            shown.text = shown.text[:-2].rstrip() + "…"
        width = min(shown.content_width + size * 1.6, self.rect.w)
        backdrop = shapes.RoundedRectangle(
            centre - width / 2,
            y - line_h * 0.46,
            width,
            line_h * 0.92,
            min(8.0, line_h * 0.3),
            segments=6,
            color=(*_BACKDROP, 210),
            batch=self.batch,
            group=self.group,
        )
        return shown, backdrop

    def _delete_lines(self) -> None:
        for shown, backdrop in self.lines:
            shown.delete()
            backdrop.delete()
        self.lines = []


_BACKDROP: Final[Colour] = (14, 30, 22)
