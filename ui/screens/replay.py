"""A match log played back on the table: the game screen, read-only, with replay controls.

``ReplayScreen`` is the ``TableScreen`` drawing a ``ReplaySession``: the same cards, flights,
banners and scoreboards as a game, seen from the log writer's seat (or team 1's). Nobody can move
a card; keys and buttons drive the playback instead: Space play/pause, → one action, N/P next or
previous round, ↑/↓ speed, Esc leave (each button names its key). The HUD says where the replay
is ("round 2 of 3 · action 120 of 260") and what is wrong with a damaged log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyglet.window import key as keys

from nerts_lan.replay import ReplaySession
from nerts_lan.table.session import RoundStarted
from ui.config import Settings
from ui.kit.geometry import Rect
from ui.kit.theme import TEXT_DIM, WARN
from ui.kit.widgets import Button, Panel, label
from ui.kit.wording import team_label
from ui.screens.table import TableScreen, TableWindow
from ui.table.hud import ButtonSpec
from ui.table.message_strip import MessageKind
from ui.table.overlays import ScoreOverlay
from ui.table.view import TableView

__all__ = ["ReplayScreen"]

_NEXT = (keys.N, keys.PAGEDOWN)
_PREVIOUS = (keys.P, keys.PAGEUP)
_FASTER = (keys.UP, keys.PLUS, keys.EQUAL, keys.NUM_ADD)
_SLOWER = (keys.DOWN, keys.MINUS, keys.NUM_SUBTRACT)


class ReplayScreen(TableScreen):
    """The table of a replay; ``update(now)`` plays it on, keys and buttons steer it."""

    def __init__(
        self,
        window: TableWindow,
        batch: Any,
        session: ReplaySession,
        settings: Settings,
        save_settings: Callable[[Settings], None],
        on_leave: Callable[[], None],
        note: str | None = None,
    ) -> None:
        """``note``: what the coach says about the moment the replay opens at."""
        self.replay = session
        self.note = note
        self._play_button: Button | None = None
        self._speed_button: Button | None = None
        self._notice_label: Any = None
        super().__init__(window, batch, session, settings, save_settings, on_leave)
        self.read_only = True

    # --- input ---------------------------------------------------------------------------------

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        self.dirty = True
        replay = self.replay
        if symbol == keys.ESCAPE:
            self.leave()
            return
        if symbol == keys.SPACE:
            replay.toggle()
        elif symbol == keys.RIGHT:
            replay.step()
        elif symbol in _NEXT:
            replay.next_round()
        elif symbol in _PREVIOUS:
            replay.previous_round()
        elif symbol in _FASTER:
            replay.faster()
        elif symbol in _SLOWER:
            replay.slower()
        else:
            super().on_key_press(symbol, modifiers)  # help, options
            return
        self._refresh_hud()

    def _overlay_key(self, symbol: int) -> None:
        """On the scoreboard, → and N also go on to the next round."""
        if isinstance(self.overlay, ScoreOverlay) and symbol in (keys.RIGHT, *_NEXT):
            self.dirty = True
            self._next_round()
        else:
            super()._overlay_key(symbol)

    # --- the table screen, for a replay ---------------------------------------------------------

    def _new_view(self) -> TableView:
        if self.replay.viewer_team is not None:
            self.team = self.replay.viewer_team
        return super()._new_view()

    def _hud_buttons(self) -> list[ButtonSpec]:
        """The replay's buttons instead of the game's."""
        replay = self.replay
        return [
            ("Leave (Esc)", self.leave, (70, 70, 80)),
            ("Options (O)", self.open_options, (52, 70, 84)),
            ("Speed (↑/↓)", self._control(replay.cycle_speed), (52, 70, 84)),
            ("Previous round (P)", self._control(replay.previous_round), (52, 70, 84)),
            ("Next round (N)", self._control(replay.next_round), (52, 70, 84)),
            ("Step (→)", self._control(replay.step), (40, 96, 70)),
            ("Pause (Space)", self._control(replay.toggle), (40, 110, 70)),
        ]

    def _build_hud(self, width: int, height: int) -> None:
        """The table screen's HUD with the replay's buttons, and what is wrong with the log."""
        super()._build_hud(width, height)
        self._nerts_button = None
        self._speed_button = self.hud.buttons[2]
        self._play_button = self.hud.buttons[-1]
        size = self.hud.round_label.font_size / 0.75
        if self.replay.notice is not None:
            self._build_notice(f"Damaged log: {self.replay.notice}", size)

    def _refresh_hud(self) -> None:
        """Where the replay is, who is stuck, and what is wrong with the log."""
        replay = self.replay
        if replay.finished:
            mode = "end of the match" if replay.match.over else "end of the log"
        elif replay.waiting_for_next_round:
            mode = "round over"
        else:
            mode = f"{'playing' if replay.playing else 'paused'} {replay.speed}×"
        progress = (
            f"round {replay.round_number} of {replay.last_round_number} · "
            f"action {replay.action_number} of {replay.action_total} · {mode}"
        )
        state, table = self.session.view, self.session.table
        stuck = [team_label(table, i) for i in range(len(table.team_names)) if state.teams[i].stuck]
        self.hud.set_round_line(progress)
        self.say(MessageKind.STUCK, "Stuck: " + ", ".join(stuck) if stuck else "")
        if self._play_button is not None and self._speed_button is not None:
            self._play_button.set_caption("Pause (Space)" if replay.playing else "Play (Space)")
            self._speed_button.set_caption(f"Speed {replay.speed}× (↑/↓)")

    def _handle(self, event: Any) -> None:
        super()._handle(event)
        if isinstance(event, RoundStarted):
            replaying = f"Replay: round {event.number}"
            self.say(MessageKind.ROUND, replaying, colour=TEXT_DIM, lifetime=None)
            if self.note is not None and self.replay.marked is not None:
                self.say(MessageKind.HINT, f"Coach: {self.note}", lifetime=None)

    def _after_change(self, animate: bool) -> None:
        """The table's own, then the coach's missed move outlined while at its moment."""
        super()._after_change(animate)
        marked = self.replay.marked
        if marked is not None:
            self.marking.hint = marked
            self.mark_selection()

    def _build_notice(self, text: str, size: float) -> None:
        """What is wrong with the log, on a panel at the bottom of the middle of the table."""
        layout = self.view.layout
        assert layout is not None
        middle = layout.center
        self._notice_label = label(
            self.batch,
            self.hud.text_group,
            text,
            middle.center[0],
            middle.y + 16,
            size=size,
            colour=WARN,
            anchor_x="center",
            anchor_y="bottom",
            bold=True,
            width=middle.w - 40,
        )
        self._notice_label.set_style("align", "center")
        high = self._notice_label.content_height + 12
        area = Rect(middle.x + 12, middle.y + 10, middle.w - 24, high)
        panel = Panel(self.batch, self.hud.group, area, alpha=215)
        self.hud.labels.extend([panel, self._notice_label])

    def _control(self, command: Callable[[], None]) -> Callable[[], None]:
        """A button's action: steer the replay, then show its new state."""

        def run() -> None:
            command()
            self._refresh_hud()

        return run
