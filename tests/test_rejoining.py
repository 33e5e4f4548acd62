"""A laptop the table keeps letting go: when it rejoins at once, when it waits (longer each
time), when the count starts again, and what its player is told, headless and in words."""

from __future__ import annotations

from nerts_lan.headless.play import record_of
from nerts_lan.lan.rejoining import (
    FIRST_WAIT,
    MAX_WAIT,
    RejoinPacer,
    backoff,
    unreachable_line,
    unreachable_text,
)

STEADY = 12.0


def _visits(pacer: RejoinPacer, start: float, count: int, stay: float = 3.3) -> list[object]:
    """``count`` visits of ``stay`` seconds each, each ended by an exclusion: what the pacer said
    at each exclusion (None: rejoin at once), the waits it asked for taken."""
    said: list[object] = []
    now = start
    for _ in range(count):
        pacer.admitted(now)
        now += stay
        wait = pacer.expelled(now)
        said.append(wait)
        now += 0.0 if wait is None else wait.seconds  # type: ignore[attr-defined]
    return said


def test_the_first_exclusions_in_a_row_rejoin_at_once_then_the_waits_double_up_to_a_cap() -> None:
    assert [backoff(n) for n in range(1, 8)] == [0, 0, FIRST_WAIT, 40, 80, MAX_WAIT, MAX_WAIT]
    said = _visits(RejoinPacer(STEADY), 0.0, 5)
    assert said[:2] == [None, None]
    assert [w.seconds for w in said[2:]] == [20.0, 40.0, 80.0]  # type: ignore[union-attr]
    assert [w.exclusions for w in said[2:]] == [3, 4, 5]  # type: ignore[union-attr]


def test_a_stay_long_enough_to_play_starts_the_count_again() -> None:
    pacer = RejoinPacer(STEADY)
    assert _visits(pacer, 0.0, 2) == [None, None]
    # It stayed and played this time: a later fault is a fresh one, rejoined at once.
    assert _visits(pacer, 100.0, 2, stay=STEADY) == [None, None]
    assert pacer.streak == 1
    assert _visits(pacer, 200.0, 2)[-1] is not None  # three short visits in a row again


def test_an_exclusion_before_the_table_had_us_again_counts_in_the_streak() -> None:
    pacer = RejoinPacer(STEADY)
    assert [pacer.expelled(t) for t in (1.0, 2.0)] == [None, None]
    assert pacer.expelled(3.0) is not None


def test_the_player_is_told_whom_the_laptop_could_not_hear() -> None:
    pacer = RejoinPacer(STEADY)
    _visits(pacer, 0.0, 2)
    pacer.admitted(10.0)
    pacer.went_silent("bo-1", "Bo")
    pacer.went_silent("di-1", "Di")
    pacer.heard_again("di-1")  # heard again before the table let us go: not the fault
    wait = pacer.expelled(13.0)
    assert wait is not None and wait.unheard == ("Bo",)
    assert wait.message == (
        "Your laptop can't hear Bo, so the table keeps letting it go — a firewall or a one-way "
        "Wi-Fi problem. Trying again in 20 s."
    )
    # The next stay starts with nobody unheard.
    pacer.admitted(40.0)
    assert pacer.expelled(43.0).unheard == ()  # type: ignore[union-attr]


def test_the_wording_names_what_fails() -> None:
    assert unreachable_text([], 20) == (
        "Your laptop can hear the table but the others can't hear it — a firewall or a one-way "
        "Wi-Fi problem. Trying again in 20 s."
    )
    assert unreachable_text(["Bo", "Cy", "Di"], 40).startswith(
        "Your laptop can't hear Bo, Cy and Di,"
    )
    assert unreachable_line([], 20) == (
        "The others can't hear you (a firewall or one-way Wi-Fi?): trying again in 20 s"
    )
    assert unreachable_line(["Bo"], 160).startswith("Your laptop can't hear Bo (")


def test_a_headless_peer_prints_the_wait_and_why() -> None:
    pacer = RejoinPacer(STEADY)
    _visits(pacer, 0.0, 2)
    wait = pacer.expelled(20.0)
    assert record_of(wait) == {
        "event": "unreachable",
        "wait": 20.0,
        "exclusions": 3,
        "unheard": [],
        "message": unreachable_text([], 20),
    }
