"""The game screen: the table, the player's gestures and keys, and what the session reports.

Input follows arcade's drag sequence: a press picks the card (and the cards on it), motion moves
them, the release asks which move a drop there means and submits it to the session. The engine
(through the session) is the only judge: a refused move comes back as ``ActionRejected`` and its
cards fly back, the reason said in the player's words (``wording``). A click plays the card to
a foundation or the best work pile; the keyboard plays the whole game (see ``intents.KEY_HELP``).
Everything the game tells the player goes to one message area (``messages``) through ``say``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pyglet.graphics import Group
from pyglet.window import key as keys
from pyglet.window import mouse

from nerts_lan.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.cards import DECK
from nerts_lan.coach import coach_round
from nerts_lan.engine import round_scores
from nerts_lan.replica import ActionApplied, ActionRejected, RoundEnded
from nerts_lan.session import (
    AddressChanged,
    Away,
    BackAtTable,
    CursorMoved,
    LeftBehind,
    MatchEnded,
    PacedSession,
    PausableSession,
    PeerGone,
    PeerReturned,
    Reconnected,
    RoundStarted,
    Session,
    TableGone,
    TablePaused,
)

from . import intents, wording
from .atlas import CardAtlas
from .config import CARD_SIZES, Settings
from .confirm import ConfirmOverlay
from .guide import Guide
from .guide_panel import GuidePanel
from .hints import StockWatch, hint_marks, next_hint
from .layout import (
    PileRef,
    Placement,
    Rect,
    card_at,
    clickable_piles,
    drop_targets,
    pile_at,
    placements,
    to_table_units,
)
from .messages import KIND_LIFETIME, MessageBoard, MessageKind, MessageStrip
from .overlays import HelpOverlay, OptionsOverlay, Overlay, ScoreOverlay
from .pause_banner import LEFT_BEHIND, PauseBanner, whereabouts_text
from .screen import Screen
from .sounds import Sounds
from .table_view import TableView
from .theme import ACCENT, GOOD, TEXT, TEXT_DIM
from .widgets import Button, label

__all__ = ["TableScreen"]

_DRAG_START = 5.0
_DOUBLE_CLICK = 0.35
_BANNER_SECONDS = 1.8
_PANEL_QUIET = 1.0
"""Seconds the round-over panel ignores keys and clicks: the player may still be hammering."""
_ENTER_KEYS = (keys.ENTER, keys.RETURN, keys.NUM_ENTER)
_MARK_WIDTH = 3.0
"""How far ``TableView.set_marks`` draws its outline outside a rect."""
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


class TableScreen(Screen):
    """One table in play; ``update(now)`` polls the session, the window forwards its events."""

    gone: str | None = None
    """Why the table is gone (``TableGone``): the frame goes back to the menu."""

    def __init__(
        self,
        window: Any,
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
        local = session.local_players
        self.read_only = not local or session.table.team_of(local[0]) is None
        """A spectator (joined mid-match): the table is shown, every move of its own refused."""
        self.player = local[0] if local else ""
        team = session.table.team_of(self.player) if local else None
        self.team = team if team is not None else 0
        self.root = Group(order=0)
        self.hud_group = Group(order=200)
        self.hud_text = Group(order=201)
        self.overlay_group = Group(order=300)
        self.sounds = Sounds(settings.sounds)
        self.view = self._new_view()
        self._restyle: CardAtlas | None = None
        """The cards in a new look (Options), drawn a few per frame until the view takes it."""
        self.round_number = 0
        self.selection: intents.Selection | None = None
        self.hint: Action | None = None
        self.stock_watch = StockWatch()
        """What this team's stock went through this round, for hints."""
        self.overlay: Overlay | None = None
        self._beneath: tuple[Overlay | None, int] | None = None
        """While the player is asked whether to leave: the panel the question covers, and the
        round it belongs to (Stay brings it back if that round is still the current one)."""
        self.banner: list[Any] = []
        # "Waiting for the table…" while a LAN table is paused (``TablePaused``).
        self.banner_until, self.pause_banner = 0.0, PauseBanner(batch, Group(order=250))
        self.pending_scores: RoundEnded | None = None
        self.match_over = False
        self.now = 0.0
        self.dirty = True
        self.last_events: list[Any] = []
        self._press: dict[str, Any] | None = None
        self._last_click: tuple[float, PileRef | None] = (-1.0, None)
        self._buttons: list[Button] = []
        self._hud_labels: list[Any] = []
        self.messages = MessageBoard()
        """What the game tells the player; shown in the layout's message strip (see ``say``)."""
        self._strip = MessageStrip(batch, self.hud_group, self.hud_text)
        self._rotations_seen = session.view.rotations
        self._round_label: Any = None
        self._placements: list[Placement] = []
        self._nerts_button: Button | None = None
        self._changed = False
        self.guide, self._guide_panel = self._new_guide(guided)
        self.resize(window.width, window.height)

    def _new_guide(self, guided: bool) -> tuple[Guide | None, GuidePanel | None]:
        """The guided first round's steps and panel (none for a spectator or an old hand)."""
        if not guided or self.read_only:
            return None, None
        return Guide(), GuidePanel(self.batch, Group(order=190), self._end_guide)

    # --- frame ---------------------------------------------------------------------------------

    def update(self, now: float) -> bool:
        """Poll the session and advance animations; True when the frame must be redrawn."""
        self.now = now
        events = self.session.poll(now)
        self.last_events = events
        self._changed = False
        for event in events:
            self._handle(event)
        if self.gone is not None:
            self._back_to_menu(self.gone)
            return True
        if self._changed:
            # One sync for all of this frame's events: the view follows the latest state.
            self._after_change(animate=True)
        if self.banner and now >= self.banner_until:
            for item in self.banner:
                item.delete()
            self.banner = []
            self.dirty = True
            if self.pending_scores is not None:
                self._show_scores()
        if isinstance(self.overlay, ScoreOverlay) and self.overlay.wake():
            self.dirty = True
        self._advance_restyle()
        self.messages.expire(now)
        if self._strip.show(self.messages.visible()):
            self.dirty = True
        moving = self.view.update(now)
        dirty = self.dirty or moving or bool(events)
        self.dirty = False
        return dirty

    def resize(self, width: int, height: int) -> None:
        self.view.resize(width, height, self.session.view)
        self._placements = placements(self.view.layout, self.session.view)  # type: ignore[arg-type]
        self._build_hud(width, height)
        self._place_messages()
        self._refresh_hud()
        self.pause_banner.resize(width, height)
        if self._guide_panel is not None and self.view.layout is not None:
            self._guide_panel.build(self.view.layout.center)
        if self.overlay is not None:
            self._clear_of_piles(self.overlay)
            self.overlay.build(width, height)
        self.dirty = True

    def close(self) -> None:
        self.view.delete()
        if self._restyle is not None:
            self._restyle.delete()
        for item in self._buttons:
            item.delete()
        for item in self._hud_labels:
            item.delete()
        self._strip.delete()
        for item in self.banner:
            item.delete()
        self.pause_banner.hide()
        if self.overlay is not None:
            self.overlay.delete()
        if self._guide_panel is not None:
            self._guide_panel.delete()
        self.session.close()

    # --- input ---------------------------------------------------------------------------------

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.dirty = True
        if self.overlay is not None:
            self.overlay.on_click(x, y)
            return
        if self._guide_panel is not None and self._guide_panel.on_click(x, y):
            return
        for item in self._buttons:
            if item.hit(x, y):
                item.on_click()
                return
        if button != mouse.LEFT or self.view.layout is None or self.read_only:
            return
        state = self.session.view
        placement = card_at(self._placements, x, y, self.team)
        if placement is not None and placement.pile.kind in ("nerts", "waste", "work"):
            pile = placement.pile
            tableau = state.teams[self.team]
            if pile.kind == "work":
                cards = tableau.work[pile.work_index][placement.position :]
            else:
                cards = (placement.card,)  # type: ignore[assignment]
                if placement.position != (
                    len(tableau.nerts if pile.kind == "nerts" else tableau.waste) - 1
                ):
                    return
            self._press = {
                "x": x,
                "y": y,
                "pile": pile,
                "card": placement.card,
                "keys": [(self.team, card) for card in cards],
                "cards": tuple(str(DECK[c]) for c in cards),
                "dragging": False,
            }
            return
        pointed = pile_at(self.view.layout, x, y)
        if pointed is not None and pointed.kind == "stock":
            self._submit(Flip(self.player))

    def on_mouse_drag(
        self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int
    ) -> None:
        press = self._press
        if self.read_only:
            return
        self._share_cursor(x, y, press["cards"] if press else ())
        if press is None:
            return
        ox, oy = x - press["x"], y - press["y"]
        if not press["dragging"]:
            if abs(ox) + abs(oy) < _DRAG_START:
                return
            press["dragging"] = True
            self.view.begin_drag(press["keys"])
        self.view.drag_by(ox, oy)
        self.dirty = True

    def on_mouse_motion(self, x: float, y: float, dx: float, dy: float) -> None:
        if not self.read_only:
            self._share_cursor(x, y, ())
        if self.overlay is None:
            for item in self._buttons:
                item.set_highlight(item.hit(x, y))
            self.dirty = True

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> None:
        press, self._press = self._press, None
        if press is None:
            return
        self.dirty = True
        state = self.session.view
        layout = self.view.layout
        if press["dragging"]:
            dragged = self.view.dragged_rect()
            self.view.end_drag(self.now)
            if dragged is None or layout is None:
                return
            targets = drop_targets(layout, state, dragged, press["pile"])
            action = intents.drop_action(state, self.player, press["pile"], press["card"], targets)
            if action is not None:
                self._submit(action)
            return
        last_time, last_pile = self._last_click
        if self.now - last_time < _DOUBLE_CLICK and last_pile == press["pile"]:
            return  # the second click of a double-click: the first one played the card
        action = intents.click_action(state, self.player, press["pile"], press["card"])
        self._last_click = (self.now, press["pile"])
        if action is not None:
            self._submit(action)

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        self.dirty = True
        if self.overlay is not None:
            self._overlay_key(symbol)
            return
        if symbol == keys.ESCAPE and self.selection is None:
            self._leave()  # nothing picked to drop: Esc is the way out (it asks first)
            return
        if symbol in (keys.F1, keys.SLASH, keys.QUESTION):
            self._open(HelpOverlay(self.batch, self.overlay_group, self._close_overlay))
            return
        if symbol == keys.O:
            self._open_options()
            return
        if symbol == keys.H:
            self._show_hint()
            return
        if self.read_only:
            return
        name = _KEY_NAMES.get(symbol)
        if name is None:
            return
        self.selection, action = intents.key_action(
            self.session.view, self.player, self.team, self.selection, name
        )
        self._mark_selection()
        if action is not None:
            self._submit(action)

    def on_text(self, text: str) -> None:
        if text == "?" and self.overlay is None:
            self._open(HelpOverlay(self.batch, self.overlay_group, self._close_overlay))

    # --- events --------------------------------------------------------------------------------

    def _handle(self, event: Any) -> None:
        now = self.now
        if isinstance(event, RoundStarted):
            self.round_number = event.number
            self.pending_scores = None
            self.match_over = False
            if isinstance(self.overlay, ScoreOverlay):
                self._close_overlay()
            self.selection = None
            self.hint = None
            self.stock_watch = StockWatch()
            if event.number > 1:
                self._end_guide()  # the guide is for the first round
            self.messages.clear()
            self._rotations_seen = event.state.rotations
            self.view.resize(self.window.width, self.window.height, event.state)
            self._after_change(animate=False)
            if self.read_only:
                watching = f"Round {event.number}: you are watching"
                self.say(MessageKind.ROUND, watching, colour=TEXT_DIM, lifetime=None)
            else:
                self.say(MessageKind.ROUND, f"Round {event.number}: go!")
            return
        if isinstance(event, ActionApplied):
            self._changed = True
            if event.local:
                self._sound_for(event.action)
            return
        if isinstance(event, ActionRejected):
            self._changed = True
            if event.local:
                self.sounds.play("refused")
                state = self.session.view
                why = wording.refusal(
                    event.action, state, event.kind, event.reason, event.lost_race_to
                )
                self.say(MessageKind.REFUSAL, why)
            return
        if isinstance(event, RoundEnded):
            self._changed = True
            self.messages.clear(MessageKind.ROUND, MessageKind.HINT)
            self.pending_scores = event
            self._end_guide()
            self._nerts_banner(event)
            return
        if isinstance(event, MatchEnded):
            self.match_over = True
            return
        if isinstance(event, CursorMoved):
            partner = self.session.table.team_of(event.player) == self.team
            self.view.set_cursor(event.player, event.x, event.y, event.holding, partner, now)
            return
        if isinstance(event, (TablePaused, LeftBehind)):
            self._table_paused(event)
            return
        if isinstance(event, (AddressChanged, Reconnected, Away, BackAtTable, TableGone)):
            self._whereabouts(event)
            return
        if isinstance(event, (PeerGone, PeerReturned)):
            verb = "left the table (a bot plays on)" if isinstance(event, PeerGone) else "is back"
            self.say(MessageKind.TABLE, f"{', '.join(event.players)} {verb}")

    def _whereabouts(
        self, event: AddressChanged | Reconnected | Away | BackAtTable | TableGone
    ) -> None:
        """A laptop that moved or slept: say where it stands; a table gone ends the screen."""
        if isinstance(event, TableGone):
            self.gone = event.reason
            return
        if isinstance(event, BackAtTable):
            self.pause_banner.hide()
        lasting = isinstance(event, (Away, AddressChanged))  # until what became of it is known
        self.say(MessageKind.TABLE, whereabouts_text(event), lifetime=None if lasting else 10.0)
        self.dirty = True

    def _back_to_menu(self, reason: str) -> None:
        """The table ended while this laptop slept: back to the menu, which says so."""
        self.on_leave()
        menu = self.window.current
        say = getattr(menu, "say", None)
        if menu is not self and say is not None:
            say(reason)

    def _table_paused(self, event: TablePaused | LeftBehind) -> None:
        """The banner while the table waits; what became of the wait when it is over."""
        if isinstance(event, LeftBehind):
            # Our moves the others never got are undone as we catch up: say so, not silently.
            self.pause_banner.hide()
            self.say(MessageKind.TABLE, LEFT_BEHIND, lifetime=10.0)
        elif event.paused:
            self.pause_banner.show(self.window.width, self.window.height)
        elif self.pause_banner.shown:
            self.pause_banner.hide()
            self.say(MessageKind.TABLE, "The table is back")
        self.dirty = True

    def _after_change(self, animate: bool) -> None:
        state = self.session.view
        self.view.sync(state, self.now, animate=animate)
        self._placements = self.view.last_placements
        if self.selection is not None and not intents.stack_from(
            state, self.selection.pile, self.selection.depth
        ):
            self.selection = None
        self.hint = None
        if not self.read_only:
            self.stock_watch.observe(state, self.team)
        if self.guide is not None and self._guide_panel is not None:
            step = self.guide.step(state, self.player, self.stock_watch)
            self.hint = step.action
            layout = self.view.layout
            assert layout is not None
            marks = hint_marks(step.action, state, layout, self._placements, self.team)
            self._guide_panel.show(step.text, marks)
        self.messages.forget(state)  # a hint about the state before is stale
        if state.rotations > self._rotations_seen:
            self.say(MessageKind.ROTATION, wording.stocks_rotated(state.rotations))
        self._rotations_seen = state.rotations
        self._mark_selection()
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
        by default the kind's (``messages.DEFAULT_LIFETIMES``). A hint is about the table as it
        is now, and goes once the table changes."""
        about = self.session.view if kind is MessageKind.HINT else None
        shown = self.messages.show(
            kind, text, self.now, lifetime=lifetime, colour=colour, about=about
        )
        if shown:
            self.dirty = True

    def _place_messages(self) -> None:
        """The message strip spans the layout's free width, short of the HUD's buttons when
        their column reaches up beside it."""
        layout = self.view.layout
        assert layout is not None
        rect = layout.messages
        beside = [b.rect for b in self._buttons if b.rect.top > rect.y and b.rect.y < rect.top]
        if beside:
            left = min(button.x for button in beside)
            rect = Rect(rect.x, rect.y, max(left - 8 - rect.x, 40.0), rect.h)
        self._strip.place(rect)
        self._strip.show(self.messages.visible())

    # --- actions -------------------------------------------------------------------------------

    def _submit(self, action: Action) -> None:
        if self.read_only:
            return
        self.session.submit(action)
        self.dirty = True

    def _sound_for(self, action: Action) -> None:
        if isinstance(action, Flip):
            self.sounds.play("flip")
        elif isinstance(action, Play) and action.target.kind == "foundation":
            self.sounds.play("foundation")
        elif isinstance(action, (Play, SlideUnder)):
            self.sounds.play("play")

    def _show_hint(self) -> None:
        if self.read_only:
            self.say(MessageKind.HINT, "You are watching this match", colour=TEXT_DIM)
            return
        hint = next_hint(self.session.view, self.player, self.stock_watch)
        self.hint = hint.action
        self.say(MessageKind.HINT, hint.text, colour=TEXT_DIM if hint.action is None else None)
        self._mark_selection()

    def _mark_selection(self) -> None:
        layout = self.view.layout
        if layout is None:
            return
        marks: list[tuple[Rect, tuple[int, int, int]]] = []
        state = self.session.view
        if self.selection is not None:
            cards = intents.stack_from(state, self.selection.pile, self.selection.depth)
            for placement in self._placements:
                if placement.pile == self.selection.pile and placement.card in cards:
                    marks.append((placement.rect, ACCENT))
        for rect in hint_marks(self.hint, state, layout, self._placements, self.team):
            marks.append((rect, GOOD))
        # Outlined just inside each rect: an outline outside it would cut through the name
        # above the nerts pile and the count below it.
        self.view.set_marks((_inset(rect, _MARK_WIDTH), colour) for rect, colour in marks)

    def _end_guide(self) -> None:
        """Skip or finish the guided round: its panel and its pointing go."""
        if self._guide_panel is not None:
            self._guide_panel.delete()
        self.guide, self._guide_panel = None, None
        self.hint = None
        self._mark_selection()
        self.dirty = True

    def _share_cursor(self, x: float, y: float, holding: tuple[str, ...]) -> None:
        layout = self.view.layout
        if layout is not None:
            u, v = to_table_units(layout, x, y)
            self.session.send_cursor(self.player, u, v, holding)

    # --- HUD -----------------------------------------------------------------------------------

    def _build_hud(self, width: int, height: int) -> None:
        for item in self._buttons:
            item.delete()
        for item in self._hud_labels:
            item.delete()
        self._buttons, self._hud_labels = [], []
        layout = self.view.layout
        assert layout is not None
        area = layout.own_area
        margin = 10.0
        free_right = width - area.area.right - 2 * margin
        button_w = min(max(free_right, 96.0), 170.0)
        button_h = min(max(area.card_h * 0.26, 26.0), 36.0)
        x = width - margin - button_w
        y = margin
        specs: list[tuple[str, Callable[[], None], tuple[int, int, int]]] = [
            ("Menu", self._leave, (70, 70, 80)),
            ("Options (O)", self._open_options, (52, 70, 84)),
            (
                "Help (?)",
                lambda: self._open(
                    HelpOverlay(self.batch, self.overlay_group, self._close_overlay)
                ),
                (52, 70, 84),
            ),
            ("Hint (H)", self._show_hint, (40, 96, 70)),
            ("Stuck (S)", lambda: self._submit(DeclareStuck(self.player)), (150, 96, 30)),
            ("NERTS! (X)", lambda: self._submit(CallNerts(self.player)), (190, 40, 40)),
        ]
        for caption, callback, colour in specs:
            button = Button(
                self.batch,
                self.hud_group,
                self.hud_text,
                Rect(x, y, button_w, button_h),
                caption,
                callback,
                colour,
            )
            self._buttons.append(button)
            y += button_h + 6
        self._nerts_button = self._buttons[-1]
        text_size = min(max(area.card_h * 0.12, 12.0), 16.0)
        self._round_label = label(
            self.batch,
            self.hud_text,
            "",
            margin,
            margin + 8,
            size=text_size,
            colour=TEXT_DIM,
            anchor_y="bottom",
        )
        self._hud_labels = [self._round_label]

    def _refresh_hud(self) -> None:
        state = self.session.view
        table = self.session.table
        if self._nerts_button is not None:
            can_call = not state.teams[self.team].nerts and state.outcome is None
            self._nerts_button.set_enabled(can_call)
        stuck = [
            name
            for i, name in enumerate(table.team_names)
            if state.teams[i].stuck and i != self.team
        ]
        text_value = ""
        if stuck:
            text_value = "Stuck: " + ", ".join(stuck)
            if len(stuck) == len(table.team_names) - 1 and not state.teams[self.team].stuck:
                text_value += " — everyone but you: press S if you are stuck too"
        if state.teams[self.team].stuck:
            text_value = "You are stuck" + (f"; so are {', '.join(stuck)}" if stuck else "")
        self.say(MessageKind.STUCK, text_value)
        if self._round_label is not None:
            scores = round_scores(state)
            totals = self.session.match.totals
            mine = table.team_names[self.team]
            text_value = (
                f"Round {self.round_number}   this round {scores[mine]:+d}   "
                f"match {totals.get(mine, 0)} / {table.options.target}"
            )
            if self._round_label.text != text_value:
                self._round_label.text = text_value

    def _nerts_banner(self, event: RoundEnded) -> None:
        width, height = self.window.width, self.window.height
        if event.outcome.ending == "nerts" and event.outcome.caller:
            title = "NERTS!"
            sub = f"{event.outcome.caller} called it"
        else:
            title = "Round over"
            sub = "everyone was stuck"
        from .widgets import Panel

        panel_w, panel_h = min(width * 0.6, 560), min(height * 0.3, 200)
        panel = Panel(
            self.batch,
            self.overlay_group,
            Rect((width - panel_w) / 2, (height - panel_h) / 2, panel_w, panel_h),
            colour=(120, 20, 24),
            alpha=235,
        )
        text_group = Group(order=1, parent=self.overlay_group)
        self.banner = [
            panel,
            label(
                self.batch,
                text_group,
                title,
                width / 2,
                height / 2 + panel_h * 0.12,
                size=panel_h * 0.32,
                colour=ACCENT,
                anchor_x="center",
                bold=True,
            ),
            label(
                self.batch,
                text_group,
                sub,
                width / 2,
                height / 2 - panel_h * 0.26,
                size=panel_h * 0.1,
                colour=TEXT,
                anchor_x="center",
            ),
        ]
        self.banner_until = self.now + _BANNER_SECONDS
        self.sounds.play("nerts")

    def _show_scores(self) -> None:
        event = self.pending_scores
        self.pending_scores = None
        if event is None:
            return
        scores = ScoreOverlay(
            self.batch,
            self.overlay_group,
            self.session.table,
            self.session.view,
            self.session.match,
            event,
            self.match_over,
            self._next_round,
            self._leave,
            keep_clear=self._keep_clear(),
            clock=lambda: self.now,
            quiet=0.0 if self.read_only else _PANEL_QUIET,
            coach=self._coach_lines(),
        )
        if isinstance(self.overlay, ConfirmOverlay):
            self._beneath = (scores, self.round_number)  # the player is deciding whether to leave
            return
        self._open(scores)

    def _coach_lines(self) -> list[tuple[str, Callable[[], None]]]:
        """The coach's moments of the round just over, for this seat: a sentence each, and the
        replay window at that moment (for a session that can tell its round: ``logged_round``)."""
        logged = getattr(self.session, "logged_round", None)
        opener = getattr(self.window, "open_moment", None)
        played = logged() if logged is not None and not self.read_only else None
        if played is None or opener is None:
            return []
        moments = coach_round(played, self.player)
        return [(moment.text, functools.partial(opener, played, moment)) for moment in moments]

    def _next_round(self) -> None:
        if isinstance(self.session, PacedSession):
            self.session.next_round()
        self.dirty = True

    # --- overlays ------------------------------------------------------------------------------

    def _open(self, overlay: Overlay) -> None:
        if self.overlay is not None:
            self.overlay.delete()
        self.messages.clear(MessageKind.ROUND)  # "go!" is stale once a panel covers the table
        self.overlay = overlay
        overlay.build(self.window.width, self.window.height)
        self._pause_while_reading()
        self.dirty = True

    def _close_overlay(self) -> None:
        if self.overlay is not None:
            self.overlay.delete()
            self.overlay = None
        self._pause_while_reading()
        self.dirty = True

    def _overlay_key(self, symbol: int) -> None:
        """A key while a panel is open: the question, the scoreboard and the others each take
        their own keys; the scoreboard takes none in its quiet moment."""
        overlay = self.overlay
        if isinstance(overlay, ConfirmOverlay):
            overlay.on_key(symbol)
        elif isinstance(overlay, ScoreOverlay):
            if not overlay.ready():
                return  # a play key hammered as the round ended
            if symbol in _ENTER_KEYS:
                self._next_round()
            elif symbol == keys.ESCAPE:
                if self.read_only:
                    self._close_overlay()
                else:
                    self._leave()
        elif symbol in (keys.ESCAPE, keys.F1, keys.SLASH, keys.QUESTION):
            self._close_overlay()

    def _pause_while_reading(self) -> None:
        """Practice stops while the player reads the help, the options or a question."""
        session = self.session
        if not isinstance(session, PausableSession):
            return
        if self.overlay is None or isinstance(self.overlay, ScoreOverlay):
            session.resume(self.now)
        else:
            session.pause(self.now)

    def _open_options(self) -> None:
        self._open(
            OptionsOverlay(
                self.batch,
                self.overlay_group,
                self.settings,
                self._apply_settings,
                self._close_overlay,
            )
        )

    def _apply_settings(self, settings: Settings) -> None:
        rebuild = (
            settings.four_colour != self.settings.four_colour
            or settings.card_size != self.settings.card_size
        )
        self.settings = settings
        self.sounds.enabled = settings.sounds
        self._save_settings(settings)
        if rebuild:
            # The button shows its new value at once; the cards take a few frames to redraw in
            # the new look and the old look stays until then (redrawing them all at once held
            # the window up for seconds, and players clicked again, undoing their choice).
            if self._restyle is not None:
                self._restyle.delete()
            self._restyle = self.view.staged_atlas(
                self.window.width,
                self.window.height,
                self.session.view,
                settings.four_colour,
                CARD_SIZES.get(settings.card_size, 1.0),
            )
        self.dirty = True

    def _advance_restyle(self) -> None:
        """Draw a few more cards of the new look; once all are drawn, show them."""
        atlas = self._restyle
        if atlas is None or not atlas.draw_more(self.window):
            return
        self._restyle = None
        self.view.delete()
        self.view = self._new_view()
        self.view.atlas = atlas
        self.resize(self.window.width, self.window.height)

    def _new_view(self) -> TableView:
        return TableView(
            self.window,
            self.batch,
            self.root,
            self.session.table,
            self.team,
            four_colour=self.settings.four_colour,
            card_scale=CARD_SIZES.get(self.settings.card_size, 1.0),
        )

    # --- leaving --------------------------------------------------------------------------------

    def confirm_close(self, close: Callable[[], None]) -> bool:
        """Whether closing the window must wait for the player: during a LAN match it asks
        (Leave runs ``close``) and returns True; practice, a replay or a finished match close."""
        if isinstance(self.session, PacedSession) or not self._leaving_asks():
            return False
        if not isinstance(self.overlay, ConfirmOverlay):
            self._ask_to_leave(close)
        return True

    def _leave(self) -> None:
        """Back to the menu (the Menu buttons, Esc), asking first while a match is on."""
        if self._leaving_asks():
            self._ask_to_leave(self.on_leave)
        else:
            self.on_leave()

    def _leaving_asks(self) -> bool:
        return not self.read_only and not self.match_over

    def _ask_to_leave(self, leave: Callable[[], None]) -> None:
        beneath = self._beneath
        if not isinstance(self.overlay, ConfirmOverlay):
            beneath = (self.overlay, self.round_number)
        self._beneath = None
        if isinstance(self.session, PacedSession):
            detail = "This practice match ends here."
        else:
            detail = "A bot plays on in your seat."
        confirm = ConfirmOverlay(
            self.batch,
            self.overlay_group,
            "Leave the match?",
            detail,
            leave,
            self._stay,
            keep_clear=self._keep_clear(),
        )
        self._open(confirm)
        self._beneath = beneath

    def _stay(self) -> None:
        """The answer Stay: back to the panel the question covered, if it still holds."""
        beneath, self._beneath = self._beneath, None
        if beneath is not None and beneath[0] is not None and beneath[1] == self.round_number:
            self._clear_of_piles(beneath[0])  # the window may have changed size meanwhile
            self._open(beneath[0])
        else:
            self._close_overlay()

    def _clear_of_piles(self, overlay: Overlay) -> None:
        """Tell a panel whose buttons must keep clear of the table where its piles are now."""
        if isinstance(overlay, (ScoreOverlay, ConfirmOverlay)):
            overlay.keep_clear = tuple(self._keep_clear())

    def _keep_clear(self) -> list[Rect]:
        """What the player may have been clicking: the own piles and the table's buttons."""
        layout = self.view.layout
        piles = [rect for _, rect in clickable_piles(layout)] if layout is not None else []
        return piles + [button.rect for button in self._buttons]


def _inset(rect: Rect, by: float) -> Rect:
    return Rect(rect.x + by, rect.y + by, max(rect.w - 2 * by, 0.0), max(rect.h - 2 * by, 0.0))
