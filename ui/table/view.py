"""The table's sprites: a view that follows the session's state, never a model of its own.

``sync(state)`` asks ``ui.table.layout`` where every visible card goes and moves the sprites
there; a card whose place changed flies from where it was (remote moves visibly, local drops
briefly), so a move that lost a race flies back by the same rule. All sprites use one texture
atlas and live in one batch, in ordered groups: slots, card layers by height, flying cards,
dragged cards, labels, highlights, other players' cursors.

The accessibility options reach it as attributes: ``left_handed`` mirrors the own tableau
(``ui.table.mirror``), ``reduced_motion`` puts every card at its place at once (no flight),
``high_visibility`` draws the cards bolder (``CardAtlas``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyglet
from pyglet.graphics import Group

from nerts_lan.rules.state import State, Table
from ui.kit.atlas import CardAtlas
from ui.kit.geometry import Rect
from ui.table.felt import Felt
from ui.table.homecoming import HOME_FLIGHT, departures, homed, start_rect
from ui.table.layout import (
    FOUNDATION_TEAM,
    Placement,
    TableLayout,
    compute_layout,
    foundation_placements,
    team_placements,
)
from ui.table.mirror import left_handed as mirrored
from ui.table.peek import RivalPeek
from ui.table.pointers import Pointers
from ui.table.race_flash import RaceFlash

__all__ = ["TableView"]

_CARD_LAYERS = 48
_REMOTE_FLIGHT = 0.32
_LOCAL_FLIGHT = 0.12
_CURSOR_SECONDS = 3.0


@dataclass
class _Flight:
    start: Rect
    end: Rect
    t0: float
    duration: float


class TableView:
    """Sprites, labels and overlays of the table in one batch (drawn by the screen)."""

    def __init__(
        self,
        window: Any,
        batch: Any,
        parent: Group | None,
        table: Table,
        own_team: int,
        four_colour: bool = False,
        card_scale: float = 1.0,
        *,
        left_handed: bool = False,
        reduced_motion: bool = False,
        high_visibility: bool = False,
    ) -> None:
        self.window = window
        self.batch = batch
        self.table = table
        self.own_team = own_team
        self.four_colour = four_colour
        self.card_scale = card_scale
        self.left_handed = left_handed
        self.reduced_motion = reduced_motion
        self.high_visibility = high_visibility
        self.felt_group = Group(order=1, parent=parent)
        self.slot_group = Group(order=2, parent=parent)
        self.layers = [Group(order=10 + z, parent=parent) for z in range(_CARD_LAYERS)]
        self.flying_group = Group(order=70, parent=parent)
        self.drag_groups = [Group(order=80 + i, parent=parent) for i in range(20)]
        self.label_group = Group(order=110, parent=parent)
        self.mark_group = Group(order=115, parent=parent)
        self.cursor_group = Group(order=120, parent=parent)
        self.atlas: CardAtlas | None = None
        self.layout: TableLayout | None = None
        self.state: State | None = None
        self.sprites: dict[tuple[object, ...], Any] = {}
        self.shown: dict[tuple[object, ...], Rect] = {}
        self.placed: dict[tuple[object, ...], Placement] = {}
        self.last_placements: list[Placement] = []
        self.flights: dict[tuple[object, ...], _Flight] = {}
        self.dragging: dict[tuple[object, ...], Rect] = {}
        self.settling: set[tuple[object, ...]] = set()
        self.felt = Felt(batch, self.felt_group, self.slot_group, self.label_group, table)
        """The slots, names and counts under the cards."""
        self.pointers = Pointers(batch, self.mark_group, self.cursor_group, table, own_team)
        """The marks and the other players' cursors over them."""
        self.race_flash = RaceFlash()
        """The cards flashing in a race winner's colour (``flash``)."""
        self.peek = RivalPeek(batch, parent)
        """The rival block the pointer is over, enlarged (``point_at``)."""
        self.gone_home: float | None = None
        """When the round's foundation cards began to fly home (``fly_home``; None: they lie
        on the foundations, as during play)."""
        self._home_due = False
        self._placing = _TeamPlacements()
        self._size: tuple[int, int] = (0, 0)

    # --- layout and sync -----------------------------------------------------------------------

    def resize(self, width: int, height: int, state: State) -> None:
        """Lay the table out for a new window size (or card size) and place everything again."""
        self._size = (width, height)
        before = (self.layout, self.atlas)
        self.layout = self._layout(width, height, state, self.card_scale)
        self._ensure_atlas()
        for sprite in self.sprites.values():
            sprite.delete()
        self.sprites.clear()
        self.shown.clear()
        self.flights.clear()
        self.placed.clear()
        self._placing.clear()  # every sprite is made anew
        self.race_flash.clear()
        assert self.atlas is not None
        if (self.layout, self.atlas) != before:
            # A new deal at the same size keeps the felt: its 80-odd labels cost a frame of
            # 30-50 ms to make again (the name and counts follow the state in ``sync``).
            self.felt.build(self.layout, self.atlas)
        self.state = None
        self.sync(state, 0.0, animate=False)

    def staged_atlas(
        self,
        width: int,
        height: int,
        state: State,
        four_colour: bool,
        card_scale: float,
        high_visibility: bool = False,
    ) -> CardAtlas:
        """An atlas, not drawn yet, of the cards a view with this look would show (the caller
        draws it a few cards a frame, then hands it to the new view as its ``atlas``)."""
        layout = self._layout(width, height, state, card_scale)
        return CardAtlas(
            self.window,
            _atlas_sizes(layout, self._unit()),
            self.table.back_colours,
            four_colour,
            staged=True,
            high_visibility=high_visibility,
        )

    def sync(self, state: State, now: float, animate: bool = True) -> None:
        """Move the sprites to where ``state`` puts the cards; changed places fly (unless
        ``reduced_motion``: then they are there at once)."""
        animate = animate and not self.reduced_motion
        layout = self.layout
        if layout is None:
            return
        wanted = max(4 * len(self.table.team_names), len(state.f_cards))
        if wanted > layout.foundation_cols * layout.foundation_rows:
            self.resize(*self._size, state)
            return
        self.state = state
        found, fresh = self._placing.place(layout, state)
        if state.outcome is None:
            self.gone_home = None  # a round under way: the foundations are on the table
        elif self.gone_home is not None:
            found = fresh = homed(layout, state, found)
        self.last_placements = found
        drawn_before = set(self.sprites)
        keep = {placement.key for placement in found}
        for placement in fresh:
            key = placement.key
            self.placed[key] = placement
            if key in self.dragging:
                continue
            sprite = self.sprites.get(key)
            if sprite is None:
                self._add_sprite(placement, now, animate)
            else:
                self._move_sprite(sprite, placement, now, animate)
        self.settling.clear()
        if self._home_due and animate:
            self._fly_home(found, drawn_before)
        self._home_due = False
        for key in [k for k in self.sprites if k not in keep]:
            self.sprites.pop(key).delete()
            self.shown.pop(key, None)
            self.flights.pop(key, None)
            self.placed.pop(key, None)
            self.dragging.pop(key, None)
        self.felt.update(layout, state)
        if self.peek.team is not None:
            self.peek.sync(layout, state, self._own_size)

    def fly_home(self, now: float) -> None:
        """The round is over: at the next ``sync`` every foundation card flies to the nerts
        pile of the team that played it, one after another (``ui.table.homecoming``); with
        reduced motion they stay where they are."""
        if not self.reduced_motion:
            self.gone_home = now
            self._home_due = True

    def point_at(self, x: float, y: float) -> bool:
        """The pointer moved to (x, y): enlarge the rival block under it; True when that
        changed what is drawn."""
        if self.layout is None or self.state is None or self.atlas is None:
            return False
        return self.peek.point(self.layout, self.state, self._own_size, x, y)

    def _own_size(self, card: object) -> Any:
        assert self.atlas is not None
        return self.atlas.region("own", card)

    def _add_sprite(self, placement: Placement, now: float, animate: bool) -> None:
        """A card that was not on the table: it appears, or flies in from where it was dealt."""
        key = placement.key
        start = placement.rect
        if animate and placement.spawn is not None:
            start = placement.rect.moved_to(*placement.spawn)
        flies = start != placement.rect
        # Made in the group it is drawn in first: moving a sprite to another group costs as
        # much as making it.
        group = self.flying_group if flies else self._layer(placement)
        sprite = pyglet.sprite.Sprite(self._region(placement), batch=self.batch, group=group)
        self.sprites[key] = sprite
        self.shown[key] = start
        if flies:
            self.flights[key] = _Flight(start, placement.rect, now, _LOCAL_FLIGHT * 1.5)
        self._show(key, start)

    def _move_sprite(self, sprite: Any, placement: Placement, now: float, animate: bool) -> None:
        """A card already shown: it flies to its new place, or is put there at once."""
        key = placement.key
        region = self._region(placement)
        if sprite.image is not region:
            sprite.image = region
        old = self.shown.get(key, placement.rect)
        flight = self.flights.get(key)
        if animate and flight is not None and flight.end == placement.rect:
            return  # already on its way there (a card flying home keeps its turn)
        if old != placement.rect and animate:
            quick = key in self.settling
            duration = _LOCAL_FLIGHT if quick else _REMOTE_FLIGHT
            current = self._current_rect(key, now)
            self.flights[key] = _Flight(current, placement.rect, now, duration)
            sprite.group = self.flying_group
        elif key in self.flights and self.flights[key].end == placement.rect:
            return  # already on its way there
        else:
            self.flights.pop(key, None)
            layer = self._layer(placement)
            if sprite.group is not layer:
                sprite.group = layer
            if old != placement.rect or key not in self.shown:
                self._show(key, placement.rect)

    def update(self, now: float) -> bool:
        """Advance flights and cursors to ``now``; True while something still moves."""
        moving = False
        for key, flight in list(self.flights.items()):
            t = (now - flight.t0) / flight.duration if flight.duration > 0 else 1.0
            if t >= 1.0:
                del self.flights[key]
                self._show(key, flight.end)
                placement = self.placed.get(key)
                if placement is not None and key in self.sprites:
                    self.sprites[key].group = self._layer(placement)
            else:
                e = 1 - (1 - max(t, 0.0)) ** 3
                self._show(key, _lerp(flight.start, flight.end, e))
                moving = True
        changed = self.pointers.expire(now)
        held = set(self.flights) | set(self.dragging)
        still = self.reduced_motion
        flashing = self.race_flash.apply(self.sprites, self.shown, held, now, shake=not still)
        return moving or changed or flashing

    def flash(self, key: tuple[object, ...], colour: tuple[int, int, int], now: float) -> None:
        """Flash the card of sprite ``key`` in ``colour``: a race lost to that seat."""
        self.race_flash.start(key, colour, now)

    @property
    def busy(self) -> bool:
        return bool(self.flights)

    # --- dragging ------------------------------------------------------------------------------

    def begin_drag(self, keys: Sequence[tuple[object, ...]]) -> None:
        for i, key in enumerate(keys):
            if key in self.sprites:
                self.flights.pop(key, None)
                self.dragging[key] = self.shown[key]
                self.sprites[key].group = self.drag_groups[min(i, len(self.drag_groups) - 1)]

    def drag_by(self, dx: float, dy: float) -> None:
        for key, origin in self.dragging.items():
            self._show(key, origin.moved_to(origin.x + dx, origin.y + dy))

    def end_drag(self, now: float) -> None:
        """Let the dragged cards go: they settle where the next state puts them."""
        keys = list(self.dragging)
        self.dragging.clear()
        self.settling.update(keys)
        for key in keys:
            placement = self.placed.get(key)
            if placement is not None and key in self.sprites:
                current = self.shown[key]
                if self.reduced_motion:
                    self.sprites[key].group = self._layer(placement)
                    self._show(key, placement.rect)
                elif current != placement.rect:
                    self.flights[key] = _Flight(current, placement.rect, now, _LOCAL_FLIGHT * 1.6)
                    self.sprites[key].group = self.flying_group

    def dragged_rect(self) -> Rect | None:
        if not self.dragging:
            return None
        first = next(iter(self.dragging))
        return self.shown.get(first)

    # --- marks and cursors ---------------------------------------------------------------------

    def set_marks(self, rects: Iterable[tuple[Rect, tuple[int, int, int]]]) -> None:
        """Outline ``rects`` (the keyboard pick, a hint) in their colours."""
        self.pointers.set_marks(rects)

    def set_cursor(
        self,
        player: str,
        u: float,
        v: float,
        holding: tuple[str, ...],
        partner: bool,
        now: float,
    ) -> None:
        """Show another player's pointer (and the cards it drags) at shared units ``u``, ``v``."""
        if self.layout is None or self.atlas is None:
            return
        self.pointers.set_cursor(self.layout, self.atlas, player, (u, v), holding, partner, now)

    def delete(self) -> None:
        for sprite in self.sprites.values():
            sprite.delete()
        self.sprites.clear()
        self.felt.delete()
        self.pointers.delete()
        self.peek.delete()
        if self.atlas is not None:
            self.atlas.delete()
            self.atlas = None

    # --- helpers -------------------------------------------------------------------------------

    def _fly_home(self, found: list[Placement], drawn_before: set[tuple[object, ...]]) -> None:
        """Give each foundation card its turn to leave for home (``homed`` put them last in
        ``found``): from where it is drawn, or from its foundation if it was hidden under the
        top two."""
        assert self.gone_home is not None and self.layout is not None
        going = [p for p in found if p.pile.team == FOUNDATION_TEAM and p.key in self.sprites]
        for placement, delay in zip(going, departures(len(going))):
            key = placement.key
            drawn = key in drawn_before and key in self.shown
            start = self.shown[key] if drawn else start_rect(self.layout, placement)
            t0 = self.gone_home + delay
            self.flights[key] = _Flight(start, placement.rect, t0, HOME_FLIGHT)
            self.sprites[key].group = self.flying_group
            self._show(key, start)

    def _ensure_atlas(self) -> None:
        assert self.layout is not None
        sizes = _atlas_sizes(self.layout, self._unit())
        colours, bold = self.table.back_colours, self.high_visibility
        if self.atlas is not None and self.atlas.matches(sizes, colours, self.four_colour, bold):
            return
        if self.atlas is not None:
            self.atlas.delete()
        self.atlas = CardAtlas(self.window, sizes, colours, self.four_colour, high_visibility=bold)

    def _unit(self) -> float:
        """The window's pixels per UI unit: the cards are drawn into the atlas at the pixels
        they cover on the screen, so a Retina display shows them sharp, not enlarged."""
        return float(getattr(self.window, "unit", 1.0))

    def _layout(self, width: int, height: int, state: State, card_scale: float) -> TableLayout:
        layout = compute_layout(
            width,
            height,
            len(self.table.team_names),
            self.own_team,
            tuple(self.table.options.work_of(name) for name in self.table.team_names),
            card_scale,
            len(state.f_cards),
        )
        return mirrored(layout) if self.left_handed else layout

    def _region(self, placement: Placement) -> Any:
        assert self.atlas is not None
        if placement.pile.team == FOUNDATION_TEAM:
            size = "found"
        elif placement.pile.team == self.own_team:
            size = "own"
        else:
            size = "small"
        card: object = placement.card if placement.card is not None else ("back", placement.team)
        return self.atlas.region(size, card)

    def _layer(self, placement: Placement) -> Group:
        return self.layers[min(max(placement.z, 0), _CARD_LAYERS - 1)]

    def _show(self, key: tuple[object, ...], rect: Rect) -> None:
        sprite = self.sprites.get(key)
        if sprite is None:
            return
        self.shown[key] = rect
        image = sprite.image
        sprite.update(
            x=round(rect.x),
            y=round(rect.y),
            scale_x=rect.w / image.width,
            scale_y=rect.h / image.height,
        )

    def _current_rect(self, key: tuple[object, ...], now: float) -> Rect:
        flight = self.flights.get(key)
        if flight is None:
            return self.shown[key]
        t = min(max((now - flight.t0) / flight.duration, 0.0), 1.0)
        return _lerp(flight.start, flight.end, 1 - (1 - t) ** 3)


class _TeamPlacements:
    """Each team's tableau at the last sync and its placements: a team whose tableau holds what
    it held then is not placed again (a busy table changes one or two teams at a time, and
    placing all six took a third of a frame's time)."""

    def __init__(self) -> None:
        self._teams: dict[int, tuple[object, list[Placement]]] = {}

    def clear(self) -> None:
        """Place every team afresh at the next ``place`` (its sprites are new)."""
        self._teams.clear()

    def place(self, layout: TableLayout, state: State) -> tuple[list[Placement], list[Placement]]:
        """Every card to draw for ``state``, and of them those that may have moved."""
        found: list[Placement] = []
        fresh: list[Placement] = []
        for area in layout.teams:
            tableau = state.teams[area.team]
            before = self._teams.get(area.team)
            if before is not None and (before[0] is tableau or before[0] == tableau):
                found += before[1]
                continue
            placed = team_placements(area, tableau)
            self._teams[area.team] = (tableau, placed)
            found += placed
            fresh += placed
        foundations = foundation_placements(layout, state)
        return found + foundations, fresh + foundations


def _lerp(a: Rect, b: Rect, t: float) -> Rect:
    return Rect(
        a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.w + (b.w - a.w) * t, a.h + (b.h - a.h) * t
    )


def _atlas_sizes(layout: TableLayout, unit: float = 1.0) -> dict[str, tuple[int, int]]:
    """The card sizes a layout shows, in pixels at ``unit`` pixels a layout unit: the player's
    own, the foundations', the other teams'."""
    own = layout.own_area
    small = next((a for a in layout.teams if not a.own), own)
    return {
        "own": (round(own.card_w * unit), round(own.card_h * unit)),
        "found": (round(layout.foundation_w * unit), round(layout.foundation_h * unit)),
        "small": (round(small.card_w * unit), round(small.card_h * unit)),
    }
