"""The game screen: the table, the player's gestures and keys, and what the session reports.

Its parts are siblings in ``ui.table``: the pointer and key controls (``controls``, with the
drag controller ``drag``: press, motion, release, snap back), the HUD (``hud``: buttons, the
round's line, the message strip), what is pointed out (``marking``: the pick, a hint, the
guide), the scoreboard (``scoreboard``: the Nerts banner, the scores, the coach's lines), the
LAN table's news (``news``), the new look being drawn (``restyle``) and the panels over the
table with the question whether to leave (``panels``, on the window's handler stack while
open). The engine (through the session) is the only judge: a refused move comes back as
``ActionRejected`` and its cards fly back, the reason said in the player's words (``wording``).
Everything the game tells the player goes to one message area (``messages``) through ``say``;
with the move readout on (``readout``), each move as a sentence too, and to the readout's sink.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pyglet.graphics import Group

from nerts_lan.rules.actions import Action
from nerts_lan.table.replica import ActionApplied, ActionRejected, RoundEnded
from nerts_lan.table.session import (
    CursorMoved,
    DealOnSession,
    MatchEnded,
    PacedSession,
    RoundStarted,
    Session,
)
from ui.config import Settings
from ui.kit import wording
from ui.kit.geometry import Rect
from ui.kit.handlers import HandlerStack
from ui.kit.sounds import Sounds
from ui.kit.theme import TEXT_DIM
from ui.kit.widgets import Button
from ui.screen import Screen
from ui.table.controls import KeyControl, PointerControl, game_buttons, reaction_buttons
from ui.table.countdown import Countdown
from ui.table.cursor_frame import to_table_units
from ui.table.hud import ButtonSpec, Hud, round_line, stuck_line
from ui.table.layout import Placement, clickable_piles, placements
from ui.table.marking import Marking
from ui.table.message_strip import KIND_LIFETIME, MessageBoard, MessageKind
from ui.table.news import TableNews
from ui.table.overlays import Overlay, ScoreOverlay
from ui.table.panels import Panels
from ui.table.pause_banner import PauseBanner
from ui.table.race_flash import lost_race_card
from ui.table.reactions import ReactionBoard, reaction_key
from ui.table.readout import MoveReadout
from ui.table.restyle import Restyle, changes_look, new_view, use_access
from ui.table.scoreboard import Scoreboard, coach_lines
from ui.table.view import TableView

__all__ = ["TableScreen", "TableWindow"]

_PANEL_QUIET = 1.0
"""Seconds the round-over panel ignores keys and clicks: the player may still be hammering."""


class TableWindow(HandlerStack, Protocol):
    """What the table screen needs of its window: its size and scale, its handler stack (for
    the panels), and its current screen (the menu a table gone goes back to)."""

    @property
    def current(self) -> Screen | None: ...

    @property
    def readout_sink(self) -> Callable[[str], None] | None:
        """Where the move readout's sentences go besides the strip (None: nowhere)."""


class TableScreen(Screen):
    """One table in play; ``update(now)`` polls the session, the window hands it its input."""

    def __init__(
        self,
        window: TableWindow,
        batch: Any,
        session: Session,
        settings: Settings,
        save_settings: Callable[[Settings], None],
        on_leave: Callable[[], None],
        *,
        guided: bool = False,
    ) -> None:
        """``guided``: the guided first round (one explanation at a time, the next move shown)."""
        self.window = window
        self.batch = batch
        self.session = session
        self.settings = settings
        self._save_settings = save_settings
        self.on_leave = on_leave
        self.player, self.team, self.read_only = _seat(session)
        """``read_only``: a spectator (joined mid-match): the table is shown, every move of its
        own refused."""
        self.root = Group(order=0)
        self.overlay_group = Group(order=300)
        self.sounds = Sounds(settings.sounds, settings.suit_callouts)
        self.view = self._new_view()
        self.restyle = Restyle()
        self.round_number = 0
        self.panels = Panels(
            window,
            batch,
            self.overlay_group,
            self._overlay_key,
            self._panel_changed,
            self._keep_clear,
            lambda: self.round_number,
            (session, lambda: self.now),
        )
        self.scoreboard = Scoreboard(
            batch, self.overlay_group, self.sounds, session, lambda: self.now, self._coach_lines
        )
        # "Waiting for the table…" while a LAN table is paused (``TablePaused``).
        self.pause_banner = PauseBanner(batch, Group(order=250))
        self.news = TableNews(self.pause_banner, self.say)
        self.match_over, self.now, self.dirty = False, 0.0, True
        self.last_events: list[Any] = []
        self.pointer, self.keys = PointerControl(self), KeyControl(self)
        self.hud = Hud(batch, Group(order=200), Group(order=201))
        self.reactions = ReactionBoard(batch, Group(order=205))  # by their senders' piles
        self.countdown = Countdown(batch, Group(order=240))  # "3, 2, 1, go!" after a deal
        self.messages = MessageBoard()
        """What the game tells the player; shown in the HUD's message strip (see ``say``)."""
        self.readout = MoveReadout(settings, self.player, window.readout_sink, self.say)
        self._rotations_seen = session.view.rotations
        self.shown: list[Placement] = []
        """The cards on the table as drawn now."""
        self._nerts_button: Button | None = None
        self._changed = False
        self.marking = Marking(batch, guided and not self.read_only, self._end_guide)
        self.resize(window.width, window.height)

    @property
    def overlay(self) -> Overlay | None:
        """The panel open over the table, if any."""
        return self.panels.overlay

    # --- frame ---------------------------------------------------------------------------------

    def update(self, now: float) -> bool:
        """Poll the session and advance animations; True when the frame must be redrawn."""
        self.now = now
        events = self.session.poll(now)
        self.last_events = events
        self._changed = False
        for event in events:
            self._handle(event)
        if self.news.gone is not None:
            self._back_to_menu(self.news.gone)
            return True
        if self._changed:
            # One sync for all of this frame's events: the view follows the latest state.
            self._after_change(animate=True)
        if self.scoreboard.banner_over(now):
            self.dirty = True
            self._show_scores()
        self.scoreboard.draw_ahead()
        if isinstance(self.overlay, ScoreOverlay) and self.overlay.wake():
            self.dirty = True
        if self.scoreboard.follow_the_wait(self.overlay):
            self.dirty = True
        self._advance_restyle()
        self.readout.poll()
        self.messages.expire(now)
        self.dirty = self.reactions.expire(now) or self.dirty  # a reaction shown long enough
        self.dirty = self.countdown.tick(now) or self.dirty
        if self.hud.strip.show(self.messages.visible()):
            self.dirty = True
        moving = self.view.update(now)
        dirty = self.dirty or moving or bool(events)
        self.dirty = False
        return dirty

    def resize(self, width: int, height: int) -> None:
        self.view.resize(width, height, self.session.view)
        layout = self.view.layout
        assert layout is not None
        self.shown = placements(layout, self.session.view)
        self.reactions.clear()
        self._build_hud(width, height)
        self.hud.place_messages(layout, self.messages.visible())
        self._refresh_hud()
        self.pause_banner.resize(width, height)
        if self.marking.guide_panel is not None:
            self.marking.guide_panel.build(layout.center)
        self.panels.rebuild(width, height)
        self.dirty = True

    def close(self) -> None:
        self.view.delete()
        self.restyle.delete()
        self.hud.delete()
        self.reactions.clear()
        self.scoreboard.delete()
        self.pause_banner.hide()
        self.panels.delete()
        self.marking.delete()
        self.readout.close()
        self.session.close()

    def tell(self, text: str) -> None:
        """Something the window learnt (the match history could not be written): a line about
        the table."""
        self.say(MessageKind.TABLE, text)

    # --- input (a panel open takes the clicks and keys first: ``Panels``, ``_overlay_key``) ---

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.pointer.press(x, y, button)

    def on_mouse_drag(
        self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int
    ) -> None:
        self.pointer.drag_to(x, y)

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> None:
        self.pointer.motion(x, y)

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.pointer.release()

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        if not reaction_key(self, symbol, modifiers):  # Shift+1-5: a reaction
            self.keys.press(symbol)

    def on_text(self, text: str) -> None:
        self.keys.text(text)

    # --- events --------------------------------------------------------------------------------

    def _handle(self, event: Any) -> None:
        if isinstance(event, RoundStarted):
            self._round_started(event)
        elif isinstance(event, ActionApplied):
            self._changed = True
            self.readout.applied(event, self.session.view)
            self.sounds.play_move(event.action, own=event.local, key=event.key)
            self.reactions.applied(event, self.view.layout, self.session.table, self.now)
        elif isinstance(event, ActionRejected):
            self._changed = True
            if event.local:
                _refused(self, event)
        elif isinstance(event, RoundEnded):
            self._changed = True
            self._end_guide()
            _round_ended(self, event)
        elif isinstance(event, MatchEnded):
            self.match_over = True
        elif isinstance(event, CursorMoved):
            partner = self.session.table.team_of(event.player) == self.team
            self.view.set_cursor(event.player, event.x, event.y, event.holding, partner, self.now)
        elif self.news.handle(event, self.window.width, self.window.height):
            self.dirty = True

    def _round_started(self, event: RoundStarted) -> None:
        """A new deal: the last round's panel, pick, hint and messages go."""
        self.round_number = event.number
        self.sounds.new_round()
        self.scoreboard.new_round(self.window.width, self.window.height)
        self.match_over = False
        if isinstance(self.overlay, ScoreOverlay):
            self.panels.close()
        self.marking.new_round()
        self.reactions.new_round()
        if event.number > 1:
            self._end_guide()  # the guide is for the first round
        self.messages.clear()
        self._rotations_seen = event.state.rotations
        self.view.resize(self.window.width, self.window.height, event.state)
        self._after_change(animate=False)
        _count_in(self, event.number)

    def _back_to_menu(self, reason: str) -> None:
        """The table ended while this laptop slept: back to the menu, which says so."""
        self.on_leave()
        menu = self.window.current
        if menu is not self and menu is not None:
            menu.tell(reason)

    def _after_change(self, animate: bool) -> None:
        state = self.session.view
        self.view.sync(state, self.now, animate=animate)
        self.shown = self.view.last_placements
        layout = self.view.layout
        assert layout is not None
        seat = (self.player, self.team)
        self.marking.follow(state, layout, self.shown, seat, watching=self.read_only)
        self.messages.forget(self.marking.hint_token)  # a hint that no longer holds goes
        if state.rotations > self._rotations_seen:
            self.say(MessageKind.ROTATION, wording.stocks_rotated(state.rotations))
        self._rotations_seen = state.rotations
        self.mark_selection()
        self._refresh_hud()
        self.dirty = True

    # --- messages ------------------------------------------------------------------------------

    def say(
        self,
        kind: MessageKind,
        text: str,
        *,
        colour: tuple[int, int, int] | None = None,
        lifetime: float | None = KIND_LIFETIME,
    ) -> None:
        """Tell the player ``text`` in the message area, replacing the message of ``kind``
        (an empty text takes it away); ``lifetime`` in seconds, None for until replaced,
        by default the kind's (``messages.DEFAULT_LIFETIMES``). A hint goes once it no longer
        holds (``Marking.follow``)."""
        about = self.marking.hint_token if kind is MessageKind.HINT else None
        shown = self.messages.show(
            kind, text, self.now, lifetime=lifetime, colour=colour, about=about
        )
        if shown:
            self.dirty = True
            self.readout.news(kind, text)

    # --- actions -------------------------------------------------------------------------------

    def submit(self, action: Action) -> None:
        if self.read_only:
            return
        if self.countdown.holding(self.now):  # the card goes back like a refused one
            self.say(MessageKind.REFUSAL, "Wait for go!")
        else:
            self.session.submit(action)
        self.dirty = True

    def show_hint(self) -> None:
        if self.read_only:
            self.say(MessageKind.HINT, "You are watching this match", colour=TEXT_DIM)
            return
        hint = self.marking.next_hint(self.session.view, self.player)
        self.say(MessageKind.HINT, hint.text, colour=TEXT_DIM if hint.action is None else None)
        self.mark_selection()

    def mark_selection(self) -> None:
        layout = self.view.layout
        if layout is not None:
            marks = self.marking.marks(self.session.view, layout, self.shown, self.team)
            self.view.set_marks(marks)

    def _end_guide(self) -> None:
        """Skip or finish the guided round: its panel and its pointing go."""
        self.marking.end_guide()
        self.mark_selection()
        self.dirty = True

    def share_cursor(self, x: float, y: float, holding: tuple[str, ...]) -> None:
        layout = self.view.layout
        if layout is not None:
            u, v = to_table_units(layout, x, y)
            self.session.send_cursor(self.player, u, v, holding)

    # --- HUD -----------------------------------------------------------------------------------

    def _build_hud(self, width: int, height: int) -> None:
        layout = self.view.layout
        assert layout is not None
        self.hud.build(layout, width, self._hud_buttons(), reaction_buttons(self))
        self._nerts_button = None if self.read_only else self.hud.buttons[-1]

    def _hud_buttons(self) -> list[ButtonSpec]:
        return game_buttons(self, self.keys)

    def _refresh_hud(self) -> None:
        state, table = self.session.view, self.session.table
        if self._nerts_button is not None:
            can_call = not state.teams[self.team].nerts and state.outcome is None
            self._nerts_button.set_enabled(can_call)
        self.say(MessageKind.STUCK, stuck_line(table, state, self.team))
        match = self.session.match
        self.hud.set_round_line(round_line(self.round_number, table, state, match, self.team))

    def _show_scores(self) -> None:
        pacing = (0.0 if self.read_only else _PANEL_QUIET, not self.settings.reduced_motion)
        scores = self.scoreboard.panel(
            self.match_over, self._next_round, self.leave, self._keep_clear, *pacing
        )
        if scores is not None:
            self.panels.show_unless_asking(scores)  # the player may be deciding whether to leave

    def _coach_lines(self) -> list[tuple[str, Callable[[], None]]]:
        """The coach speaks to a player, not a spectator (nor to a replay's viewer)."""
        return coach_lines(self.session, self.window, self.player, self.read_only)

    def _next_round(self) -> None:
        self.scoreboard.next_round(self.overlay, self.read_only)
        self.dirty = True

    # --- panels --------------------------------------------------------------------------------

    def _overlay_key(self, symbol: int) -> None:
        """A key while a panel is open (see ``Panels.key``): on the scoreboard, Enter deals
        on and Esc leaves (a spectator's Esc only closes it)."""
        self.dirty = True
        escape = self.panels.close if self.read_only else self.leave
        self.panels.key(symbol, self._next_round, escape)

    def _panel_changed(self, opened: bool | None) -> None:
        """A panel opened, closed (or was clicked): "go!" is stale once a panel covers the
        table."""
        if opened:
            self.messages.clear(MessageKind.ROUND)
        self.dirty = True

    def open_help(self) -> None:
        self.panels.help()

    def open_options(self) -> None:
        self.panels.options(self.settings, self._apply_settings)

    def _keep_clear(self) -> list[Rect]:
        """What the player may have been clicking: the own piles and the table's buttons."""
        layout = self.view.layout
        piles = [rect for _, rect in clickable_piles(layout)] if layout is not None else []
        return piles + [button.rect for button in self.hud.buttons]

    # --- restyling -----------------------------------------------------------------------------

    def _apply_settings(self, settings: Settings) -> None:
        new_look = changes_look(self.settings, settings)
        self.settings = settings
        self.sounds.enabled = settings.sounds
        self.sounds.callouts = settings.suit_callouts
        self._save_settings(settings)
        self.readout.use(settings)
        if use_access(self.view, settings):
            self.resize(self.window.width, self.window.height)
        if new_look:
            size = (self.window.width, self.window.height)
            self.restyle.start(self.view, size, self.session.view, settings)
        self.dirty = True

    def _advance_restyle(self) -> None:
        """Draw a few more cards of the new look; once all are drawn, show them."""
        atlas = self.restyle.finished(self.window)
        if atlas is None:
            return
        self.view.delete()
        self.view = self._new_view()
        self.view.atlas = atlas
        self.resize(self.window.width, self.window.height)

    def _new_view(self) -> TableView:
        table, settings = self.session.table, self.settings
        return new_view(self.window, self.batch, self.root, table, self.team, settings)

    # --- leaving --------------------------------------------------------------------------------

    def confirm_close(self, close: Callable[[], None]) -> bool:
        """Whether closing the window must wait for the player: during a LAN match it asks
        (Leave runs ``close``) and returns True; practice, a replay or a finished match close."""
        if isinstance(self.session, PacedSession) or not self._leaving_asks():
            return False
        if not self.panels.asking:
            self.panels.ask_to_leave(close, practice=False)
        return True

    def leave(self) -> None:
        """Back to the menu (the Menu buttons, Esc), asking first while a match is on."""
        if self._leaving_asks():
            practice = isinstance(self.session, PacedSession)
            self.panels.ask_to_leave(self.on_leave, practice)
        else:
            self.on_leave()

    def _leaving_asks(self) -> bool:
        return not self.read_only and not self.match_over


def _count_in(screen: TableScreen, number: int) -> None:
    """Round ``number`` was dealt: its countdown at a LAN table ("3, 2, 1, go!"), and the line
    that says it started (or that the player only watches)."""
    session, layout = screen.session, screen.view.layout
    wait = session.countdown if isinstance(session, DealOnSession) else 0.0
    if layout is not None:
        screen.countdown.start(screen.now, wait, layout.center.center)
    if screen.read_only:
        watching = f"Round {number}: you are watching"
        screen.say(MessageKind.ROUND, watching, colour=TEXT_DIM, lifetime=None)
    else:
        screen.say(MessageKind.ROUND, f"Round {number}: go!")


def _round_ended(screen: TableScreen, event: RoundEnded) -> None:
    """The round is over: the hint and the round's messages go, the foundation cards fly home
    (at this frame's sync) and the banner says how it ended."""
    screen.messages.clear(MessageKind.ROUND, MessageKind.HINT)
    screen.view.fly_home(screen.now)
    window = screen.window
    screen.scoreboard.round_ended(event, window.width, window.height, screen.now)


def _refused(screen: TableScreen, event: ActionRejected) -> None:
    """A move of the player's refused: a sound, why in their words, and the card of a race
    lost flashing in the winner's seat colour."""
    screen.sounds.play_refusal(event.kind)
    why = wording.refusal(
        event.action,
        screen.session.view,
        event.kind,
        event.reason,
        event.lost_race_to,
        event.margin_us,
    )
    screen.say(MessageKind.REFUSAL, why)
    flash = lost_race_card(screen.session.table, screen.team, event)
    if flash is not None:
        screen.view.flash(*flash, screen.now)


def _seat(session: Session) -> tuple[str, int, bool]:
    """This window's player, their team, and whether they only watch (no seat of their own)."""
    local = session.local_players
    read_only = not local or session.table.team_of(local[0]) is None
    player = local[0] if local else ""
    team = session.table.team_of(player) if local else None
    return player, team if team is not None else 0, read_only
