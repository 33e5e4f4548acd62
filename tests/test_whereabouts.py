"""A laptop that moves or sleeps, as its seat tells the front end (``Whereabouts``), in memory."""

from __future__ import annotations

from nerts_lan.lan.whereabouts import (
    ENDED_WHILE_AWAY,
    GIVE_UP,
    MATCH_ENDED_WHILE_AWAY,
    AtTable,
    Whereabouts,
)
from nerts_lan.table.session import AddressChanged, Away, BackAtTable, Reconnected, TableGone
from net import CoreConfig

SEATED = AtTable(seated=True, over=False)
ALONE = AtTable(seated=False, over=False)


def _watch() -> tuple[Whereabouts, list[object]]:
    posted: list[object] = []
    table = CoreConfig(suspect_timeout=1.0, exclude_timeout=3.0)
    watch = Whereabouts(posted.append, table)
    watch.tick(100.0, SEATED)
    return watch, posted


def _ticks(watch: Whereabouts, start: float, end: float, seat: AtTable) -> None:
    now = start
    while now <= end:
        watch.tick(now, seat)
        now += 0.5


def test_a_laptop_that_keeps_running_posts_nothing() -> None:
    watch, posted = _watch()
    _ticks(watch, 100.5, 130.0, SEATED)
    assert posted == [] and not watch.away


def test_back_from_a_sleep_at_the_table() -> None:
    watch, posted = _watch()
    watch.tick(100.5, SEATED)
    watch.tick(220.5, SEATED)  # two minutes with the lid closed
    assert posted == [Away(120.0)] and watch.away
    _ticks(watch, 221.0, 221.5, SEATED)  # too early to tell: the table may not have answered
    _ticks(watch, 222.0, 222.5, ALONE)  # the table let us go: rejoining
    assert posted == [Away(120.0)]
    _ticks(watch, 223.0, 226.0, SEATED)
    assert posted == [Away(120.0), BackAtTable(120.0)] and not watch.away


def test_the_table_ended_while_away() -> None:
    watch, posted = _watch()
    watch.tick(700.0, ALONE)
    _ticks(watch, 700.5, 700.0 + GIVE_UP + 1, ALONE)
    assert posted == [Away(600.0), TableGone(ENDED_WHILE_AWAY)]


def test_the_match_ended_while_away() -> None:
    watch, posted = _watch()
    watch.tick(400.0, ALONE)
    _ticks(watch, 400.5, 404.0, AtTable(seated=False, over=True))
    assert posted == [Away(300.0), TableGone(MATCH_ENDED_WHILE_AWAY)]


def test_a_move_is_reconnected_once_every_member_is_linked_again() -> None:
    watch, posted = _watch()
    watch.moved("10.0.0.5", "10.0.0.9", {"ann", "bo", "cy"}, set())
    watch.linked({"ann"}, {"ann", "bo", "cy"})
    assert posted == [AddressChanged("10.0.0.5", "10.0.0.9")]
    watch.linked({"ann", "bo"}, {"ann", "bo"})  # cy was let go meanwhile: not waited for
    assert posted[-1] == Reconnected("10.0.0.9", 2)
    watch.linked({"ann", "bo"}, {"ann", "bo"})
    assert len(posted) == 2


def test_a_laptop_alone_at_its_table_is_reconnected_at_once() -> None:
    watch, posted = _watch()
    watch.moved("10.0.0.5", "10.0.0.9", set(), set())
    assert posted == [AddressChanged("10.0.0.5", "10.0.0.9"), Reconnected("10.0.0.9", 0)]


def test_the_first_look_is_no_absence() -> None:
    """A seat that took long to start (a table looked for, an address waited for) was not away."""
    posted: list[object] = []
    watch = Whereabouts(posted.append, CoreConfig())
    watch.tick(5000.0, ALONE)
    watch.tick(5000.5, ALONE)
    assert posted == [] and not watch.away


def test_links_back_before_the_move_was_known_count() -> None:
    """The links may come up again while the mesh still opens its new listening socket."""
    watch, posted = _watch()
    watch.linked({"ann", "bo"}, {"ann", "bo"})  # no move known yet: nothing to say
    watch.moved("10.0.0.5", "10.0.0.9", {"ann", "bo"}, {"ann", "bo"})
    assert posted == [AddressChanged("10.0.0.5", "10.0.0.9"), Reconnected("10.0.0.9", 2)]
