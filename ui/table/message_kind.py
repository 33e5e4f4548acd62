"""What a message of the table's message area is about (pure: no pyglet, so the move readout
and its tests need no window); ``ui.table.message_strip`` shows them."""

from __future__ import annotations

from enum import Enum

__all__ = ["MessageKind"]


class MessageKind(Enum):
    """What a message is about; a newer message of a kind replaces the older one."""

    ROUND = "round"
    """"Round 3: go!" (stale once the round ends or a panel opens)."""
    HINT = "hint"
    """A suggested move (stale once it no longer holds: its move refused, or ours made)."""
    REFUSAL = "refusal"
    """Why the player's last move did not count."""
    TABLE = "table"
    """Who left the table, who came back."""
    STUCK = "stuck"
    """Who is stuck: stays while it holds."""
    ROTATION = "rotation"
    """Everyone was stuck and the stocks rotated."""
    MOVE = "move"
    """The move readout: the last move made, as a sentence (an accessibility option)."""
