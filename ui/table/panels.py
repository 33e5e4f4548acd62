"""The panel over the table (the help, the options, the scores, the question whether to leave),
one at a time, on the window's handler stack while open: it takes the clicks, keys and text
(``PanelInput``), the table below still sees the pointer move and a card it held let go.

The question whether to leave covers whatever panel was open: Stay brings that panel back if
its round is still the current one; a scoreboard that comes up meanwhile waits beneath it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyglet.graphics import Group
from pyglet.window import key as keys

from nerts_lan.table.session import PausableSession, Session
from ui.config import Settings
from ui.kit.geometry import Rect
from ui.kit.handlers import HandlerStack, PanelInput
from ui.table.confirm import ConfirmOverlay
from ui.table.overlays import HelpOverlay, OptionsOverlay, Overlay, ScoreOverlay

__all__ = ["HELP_KEYS", "Panels"]

HELP_KEYS = (keys.F1, keys.SLASH, keys.QUESTION)
"""Keys that open the help (and close it again)."""
_ENTER_KEYS = (keys.ENTER, keys.RETURN, keys.NUM_ENTER)


class Panels:
    """The open panel (``overlay``, or None) and what the question to leave covers."""

    def __init__(
        self,
        window: HandlerStack,
        batch: Any,
        group: Group,
        on_key: Callable[[int], None],
        on_change: Callable[[bool | None], None],
        keep_clear: Callable[[], list[Rect]],
        round_number: Callable[[], int],
        session: tuple[Session, Callable[[], float]],
    ) -> None:
        """``on_key``: what a key does while a panel is open (see ``key``); ``on_change(opened)``
        is told after each open and close (``None``: after a click on the panel);
        ``keep_clear``: where the table's clickable piles and buttons are now (the scores' and
        the question's buttons keep clear of them); ``round_number``: the round being played
        now; ``session``: the table's, and the screen's clock (practice stops while the player
        reads a panel, not the scores)."""
        self.window = window
        self.batch = batch
        self.group = group
        self.overlay: Overlay | None = None
        self._input = PanelInput(window, self._click, on_key)
        self._on_change = on_change
        self._keep_clear = keep_clear
        self._round_number = round_number
        self._session, self._clock = session
        self._beneath: tuple[Overlay | None, int] | None = None
        """While the player is asked whether to leave: the panel the question covers, and the
        round it belongs to (Stay brings it back if that round is still the current one)."""

    @property
    def asking(self) -> bool:
        """Whether the player is being asked whether to leave."""
        return isinstance(self.overlay, ConfirmOverlay)

    def show(self, overlay: Overlay) -> None:
        """Show ``overlay`` instead of the panel open, if any."""
        if self.overlay is not None:
            self.overlay.delete()
        else:
            self.window.push_handlers(self._input)
        self.overlay = overlay
        overlay.build(self.window.width, self.window.height)
        self._pause_while_reading()
        self._on_change(True)

    def show_unless_asking(self, overlay: Overlay) -> None:
        """Show ``overlay``, or, while the player decides whether to leave, keep it beneath the
        question (for Stay to show)."""
        if self.asking:
            self._beneath = (overlay, self._round_number())
            return
        self.show(overlay)

    def help(self) -> None:
        """The keyboard help and the rules in short."""
        self.show(HelpOverlay(self.batch, self.group, self.close))

    def options(self, settings: Settings, apply: Callable[[Settings], None]) -> None:
        """The options (each change goes to ``apply`` at once)."""
        self.show(OptionsOverlay(self.batch, self.group, settings, apply, self.close))

    def key(self, symbol: int, on_enter: Callable[[], None], on_escape: Callable[[], None]) -> None:
        """A key while a panel is open: the question, the scoreboard (Enter: ``on_enter``, Esc:
        ``on_escape``) and the others (Esc and the help keys close them) each take their own
        keys; the scoreboard takes none in its quiet moment."""
        overlay = self.overlay
        if isinstance(overlay, ConfirmOverlay):
            overlay.on_key(symbol)
        elif isinstance(overlay, ScoreOverlay):
            if not overlay.ready():
                return  # a play key hammered as the round ended
            if symbol in _ENTER_KEYS:
                on_enter()
            elif symbol == keys.ESCAPE:
                on_escape()
        elif symbol in (keys.ESCAPE, *HELP_KEYS):
            self.close()

    def close(self) -> None:
        """Take the open panel away (if any): the input goes to the table again."""
        if self.overlay is not None:
            self.overlay.delete()
            self.overlay = None
            self.window.remove_handlers(self._input)
        self._pause_while_reading()
        self._on_change(False)

    def delete(self) -> None:
        """The screen goes: the panel and its hold on the input with it, telling nobody."""
        if self.overlay is not None:
            self.overlay.delete()
            self.overlay = None
            self.window.remove_handlers(self._input)

    def rebuild(self, width: int, height: int) -> None:
        """Lay the open panel out again for a new window size."""
        if self.overlay is not None:
            self._clear_of_piles(self.overlay)
            self.overlay.build(width, height)

    def ask_to_leave(self, leave: Callable[[], None], practice: bool) -> None:
        """Ask "Leave the match?" over the panel open (Leave runs ``leave``); ``practice``: a
        practice match (which ends there; at a LAN table a bot plays on)."""
        beneath = self._beneath
        if not self.asking:
            beneath = (self.overlay, self._round_number())
        self._beneath = None
        detail = "This practice match ends here." if practice else "A bot plays on in your seat."
        confirm = ConfirmOverlay(
            self.batch,
            self.group,
            "Leave the match?",
            detail,
            leave,
            self._stay,
            keep_clear=self._keep_clear(),
        )
        self.show(confirm)
        self._beneath = beneath

    # --- helpers -------------------------------------------------------------------------------

    def _stay(self) -> None:
        """The answer Stay: back to the panel the question covered, if it still holds."""
        beneath, self._beneath = self._beneath, None
        if beneath is not None and beneath[0] is not None and beneath[1] == self._round_number():
            self._clear_of_piles(beneath[0])  # the window may have changed size meanwhile
            self.show(beneath[0])
        else:
            self.close()

    def _click(self, x: float, y: float) -> None:
        self._on_change(None)
        if self.overlay is not None:
            self.overlay.on_click(x, y)

    def _pause_while_reading(self) -> None:
        """Practice stops while the player reads the help, the options or a question."""
        session = self._session
        if not isinstance(session, PausableSession):
            return
        if self.overlay is None or isinstance(self.overlay, ScoreOverlay):
            session.resume(self._clock())
        else:
            session.pause(self._clock())

    def _clear_of_piles(self, overlay: Overlay) -> None:
        """Tell a panel whose buttons must keep clear of the table where its piles are now."""
        if isinstance(overlay, (ScoreOverlay, ConfirmOverlay)):
            overlay.keep_clear = tuple(self._keep_clear())
