"""The coach: the moments that cost a seat the most, each of the four kinds on a round made for
it, and the same moments every time."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from nerts_lan.cli.main import main
from nerts_lan.history.coach import coach_round, moment_record
from nerts_lan.matchlog.rounds import (
    LoggedAction,
    LoggedRound,
    fold_logged_rounds,
    last_logged_round,
)
from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play
from nerts_lan.rules.cards import Card
from nerts_lan.rules.engine import apply
from nerts_lan.rules.piles import ANY_FOUNDATION, NERTS, WASTE, Pile
from nerts_lan.rules.state import Options, Rejection, State, Table, Tableau
from tests.test_history import timed_records, write_log

TABLE = Table(Options(pile=3, flip=3), ("Red", "Blue"), (("ann",), ("bo",)))
START = 1_000_000


def cards(*names: str) -> tuple[int, ...]:
    return tuple(Card.parse(name) for name in names)


def tableau(nerts: Sequence[str], work: Sequence[Sequence[str]], stock: Sequence[str] = (),
            waste: Sequence[str] = ()) -> Tableau:  # fmt: skip
    return Tableau(
        nerts=cards(*nerts),
        work=tuple(cards(*pile) for pile in work),
        stock=cards(*stock),
        waste=cards(*waste),
        stuck=False,
    )


def played(start: State, timed: Sequence[tuple[int, Action]]) -> LoggedRound:
    """A round from ``start``: each action at its time (ms after the deal), refused ones kept."""
    state, actions = start, []
    for number, (at, action) in enumerate(timed):
        after = apply(state, action)
        refused = after.reason if isinstance(after, Rejection) else None
        new = state if isinstance(after, Rejection) else after
        actions.append(LoggedAction(START + at, (number, action.by), action, state, new, refused))
        state = new
    return LoggedRound("t", 1, 1, TABLE, start, START, tuple(actions), {}, True)


BO = tableau(["KD", "QS", "JD"], [["9C"], ["8C"], ["7C"], ["6C"]], ["2H", "3H", "4H"])


def test_a_nerts_card_left_waiting_for_seconds_is_the_costliest_moment() -> None:
    ann = tableau(["KS", "AH"], [["5C"], ["9D"], ["QC"], ["JC"]], ["2S", "3S", "4S", "5S"])
    start = State(TABLE, (ann, BO))
    flips = [(1000 * i, Flip("ann")) for i in range(1, 8)]
    round_ = played(start, [*flips, (9000, Play("ann", Card.parse("AH"), NERTS, ANY_FOUNDATION))])
    moments = coach_round(round_, "ann")
    assert [m.kind for m in moments] == ["idle_nerts"]
    moment = moments[0]
    assert (moment.index, moment.step, moment.offset_ms) == (0, 0, 0)  # waiting from the deal
    assert moment.missed == Play("ann", Card.parse("AH"), NERTS, ANY_FOUNDATION)
    assert moment.text == (
        "A♥ from your nerts pile could go to a foundation for 9.0 s before it was played"
    )
    assert coach_round(round_, "bo") == []


def test_a_race_lost_says_to_whom_and_by_how_much() -> None:
    ann = tableau(["KS", "QH"], [["2D"], ["9D"], ["QC"], ["JC"]])
    bo = tableau(["KD", "QS"], [["2D"], ["8C"], ["7C"], ["6C"]])
    start = State.with_foundations(TABLE, (ann, bo), [(cards("AD"), (1,))])
    two = Card.parse("2D")
    round_ = played(
        start,
        [
            (500, Play("bo", two, Pile.parse("w1"), ANY_FOUNDATION)),
            (540, Play("ann", two, Pile.parse("w1"), ANY_FOUNDATION)),
        ],
    )
    assert round_.actions[1].refused is not None  # the foundation wants 3♦ now
    (moment,) = coach_round(round_, "ann")
    assert moment.kind == "race_lost" and moment.step == 0
    assert moment.text == "bo put 2♦ on a foundation first: you lost that race by 40 ms"


def test_a_card_covered_while_a_foundation_could_take_it_is_a_buried_card() -> None:
    ann = tableau(["KS", "QH"], [["2H"], ["9D"], ["QC"], ["JC"]], ["5D"], ["AS"])
    start = State.with_foundations(TABLE, (ann, BO), [(cards("AH"), (1,))])
    round_ = played(start, [(700, Play("ann", Card.parse("AS"), WASTE, Pile.parse("w1")))])
    (moment,) = coach_round(round_, "ann")
    assert moment.kind == "buried" and moment.missed is not None
    assert moment.text == "you covered 2♥ on work pile 1 while a foundation could take it"


def test_a_stuck_declared_long_after_a_fruitless_pass_is_late() -> None:
    ann = tableau(["KS", "QH"], [["5C"], ["9D"], ["QC"], ["JC"]], ["2S", "3D", "4S", "6S", "7S"])
    start = State(TABLE, (ann, BO))
    flips = [(2000 * i, Flip("ann")) for i in range(1, 8)]
    round_ = played(start, [*flips, (16000, DeclareStuck("ann"))])
    (moment,) = coach_round(round_, "ann")
    assert moment.kind == "stuck_late" and moment.missed == DeclareStuck("ann")
    assert moment.index == 3 and moment.text.endswith("you declared stuck 10 s later")
    fast = [(1000 * i, Flip("ann")) for i in range(1, 7)]
    quick = played(start, [*fast, (6500, DeclareStuck("ann"))])
    assert coach_round(quick, "ann") == []


def test_the_costliest_moments_come_first_and_a_partial_round_is_not_coached() -> None:
    ann = tableau(["KS", "AH"], [["2D"], ["9D"], ["QC"], ["JC"]], ["2S", "3S", "4S"])
    bo = tableau(["KD", "QS"], [["2D"], ["8C"], ["7C"], ["6C"]])
    start = State.with_foundations(TABLE, (ann, bo), [(cards("AD"), (1,))])
    two = Card.parse("2D")
    round_ = played(
        start,
        [
            (500, Play("bo", two, Pile.parse("w1"), ANY_FOUNDATION)),
            (540, Play("ann", two, Pile.parse("w1"), ANY_FOUNDATION)),
            (6000, Play("ann", Card.parse("AH"), NERTS, ANY_FOUNDATION)),
            (6500, CallNerts("bo")),
        ],
    )
    assert [m.kind for m in coach_round(round_, "ann")] == ["idle_nerts", "race_lost"]
    assert [m.kind for m in coach_round(round_, "ann", limit=1)] == ["idle_nerts"]
    partial = LoggedRound(
        "t", 1, 1, TABLE, start, START, round_.actions, {}, whole=False, ended=None
    )
    assert coach_round(partial, "ann") == []


def test_the_replay_command_prints_the_same_moments_every_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(tmp_path)
    expected = []
    for round_ in fold_logged_rounds(timed_records()):
        for player in ("p01", "p00"):
            moments = [moment_record(m) for m in coach_round(round_, player)]
            expected.append({"round": round_.number, "player": player, "moments": moments})
    outputs = []
    for _ in range(2):
        assert main(["replay", str(path), "--headless", "--coach"]) == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        outputs.append(lines)
        coached = [
            {key: line[key] for key in ("round", "player", "moments")}
            for line in lines
            if line["event"] == "coach"
        ]
        assert coached == expected
        assert any(line["moments"] for line in coached)
    assert outputs[0] == outputs[1]


def test_the_last_whole_round_of_a_log_is_what_the_lan_scoreboard_coaches(tmp_path: Path) -> None:
    rounds = fold_logged_rounds(timed_records())
    last = last_logged_round(write_log(tmp_path))
    assert last is not None and last.number == rounds[-1].number == len(rounds)
    assert coach_round(last, "p01") == coach_round(rounds[-1], "p01")
    assert last_logged_round(tmp_path / "missing.nlog") is None
