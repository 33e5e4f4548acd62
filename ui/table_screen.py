"""The game screen: the table, the player's gestures and keys, and what the session reports.

Input follows arcade's drag sequence: a press picks the card (and the cards on it), motion moves
them, the release asks which move a drop there means and submits it to the session. The engine
(through the session) is the only judge: a refused move comes back as ``ActionRejected`` and its
cards fly back, the reason said in the player's words (``wording``). A click plays the card to
a foundation or the best work pile; the keyboard plays the whole game (see ``intents.KEY_HELP``).
Everything the game tells the player goes to one message area (``messages``) through ``say``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyglet.graphics import Group
from pyglet.window import key as keys
from pyglet.window import mouse

from nerts_lan.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.cards import DECK
from nerts_lan.engine import round_scores
from nerts_lan.replica import ActionApplied, ActionRejected, RoundEnded
from nerts_lan.session import (
    CursorMoved,
    MatchEnded,
    PacedSession,
    PeerGone,
    PeerReturned,
    RoundStarted,
    Session,
)

from . import intents, wording
from .config import CARD_SIZES, Settings
from .layout import (
    PileRef,
    Placement,
    Rect,
    card_at,
    drop_targets,
    pile_at,
    placements,
    to_table_units,
)
from .messages import KIND_LIFETIME, MessageBoard, MessageKind, MessageStrip
from .overlays import HelpOverlay, OptionsOverlay, Overlay, ScoreOverlay
from .screen import Screen
from .sounds import Sounds
from .table_view import TableView
from .theme import ACCENT, GOOD, TEXT, TEXT_DIM
from .widgets import Button, label

__all__ = ["TableScreen"]

_DRAG_START = 5.0
_DOUBLE_CLICK = 0.35
_BANNER_SECONDS = 1.8
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

    def __init__(
        self,
        window: Any,
        batch: Any,
        session: Session,
        settings: Settings,
        save_settings: Callable[[Settings], None],
        on_leave: Callable[[], None],
    ) -> None:
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
        self.round_number = 0
        self.selection: intents.Selection | None = None
        self.hint: Action | None = None
        self.overlay: Overlay | None = None
        self.banner: list[Any] = []
        self.banner_until = 0.0
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
        self.resize(window.width, window.height)

    # --- frame ---------------------------------------------------------------------------------

    def update(self, now: float) -> bool:
        """Poll the session and advance animations; True when the frame must be redrawn."""
        self.now = now
        events = self.session.poll(now)
        self.last_events = events
        self._changed = False
        for event in events:
            self._handle(event)
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
        if self.overlay is not None:
            self.overlay.build(width, height)
        self.dirty = True

    def close(self) -> None:
        self.view.delete()
        for item in self._buttons:
            item.delete()
        for item in self._hud_labels:
            item.delete()
        self._strip.delete()
        for item in self.banner:
            item.delete()
        if self.overlay is not None:
            self.overlay.delete()
        self.session.close()

    # --- input ---------------------------------------------------------------------------------

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.dirty = True
        if self.overlay is not None:
            self.overlay.on_click(x, y)
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
            if symbol in (keys.ESCAPE, keys.F1, keys.SLASH, keys.QUESTION):
                if isinstance(self.overlay, ScoreOverlay) and symbol != keys.ESCAPE:
                    return
                self._close_overlay()
            elif symbol in (keys.ENTER, keys.RETURN, keys.SPACE) and isinstance(
                self.overlay, ScoreOverlay
            ):
                self._next_round()
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
            self._nerts_banner(event)
            return
        if isinstance(event, MatchEnded):
            self.match_over = True
            return
        if isinstance(event, CursorMoved):
            partner = self.session.table.team_of(event.player) == self.team
            self.view.set_cursor(event.player, event.x, event.y, event.holding, partner, now)
            return
        if isinstance(event, (PeerGone, PeerReturned)):
            verb = "left the table (a bot plays on)" if isinstance(event, PeerGone) else "is back"
            self.say(MessageKind.TABLE, f"{', '.join(event.players)} {verb}")

    def _after_change(self, animate: bool) -> None:
        state = self.session.view
        self.view.sync(state, self.now, animate=animate)
        self._placements = self.view.last_placements
        if self.selection is not None and not intents.stack_from(
            state, self.selection.pile, self.selection.depth
        ):
            self.selection = None
        self.hint = None
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
        hint = intents.hint_action(self.session.view, self.player)
        self.hint = hint
        if hint is None:
            self.say(MessageKind.HINT, "Nothing to do but wait for the others", colour=TEXT_DIM)
            return
        self.say(MessageKind.HINT, "Hint: " + intents.describe(hint))
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
        hint = self.hint
        if isinstance(hint, (Play, SlideUnder)):
            for placement in self._placements:
                if (
                    placement.team == self.team
                    and placement.card == int(hint.card)
                    and (placement.pile.team == self.team)
                ):
                    marks.append((placement.rect, GOOD))
            if hint.target.kind == "work":
                marks.append((layout.own_area.pile_rect(hint.target), GOOD))
            else:
                marks.append((layout.center, GOOD))
        elif isinstance(hint, Flip):
            marks.append((layout.own_area.stock, GOOD))
        self.view.set_marks(marks)

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
        self._open(
            ScoreOverlay(
                self.batch,
                self.overlay_group,
                self.session.table,
                self.session.view,
                self.session.match,
                event,
                self.match_over,
                self._next_round,
                self._leave,
            )
        )

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
        self.dirty = True

    def _close_overlay(self) -> None:
        if self.overlay is not None:
            self.overlay.delete()
            self.overlay = None
        self.dirty = True

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
            self.view.delete()
            self.view = self._new_view()
            self.resize(self.window.width, self.window.height)
        self.dirty = True

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

    def _leave(self) -> None:
        self.on_leave()
