"""Replaying a match log as a session: the window's replay without the window, and the command."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.lab.simgame import play_game
from nerts_lan.matchlog.file import (
    MatchLogWriter,
    apply_record,
    read_match_log,
    writer_of,
)
from nerts_lan.matchlog.rounds import fold_log
from nerts_lan.replay import PACE, ReplaySession
from nerts_lan.rules.state import Options, state_digest
from nerts_lan.table.machine import TableMachine
from nerts_lan.table.replica import ActionApplied, RoundEnded
from nerts_lan.table.session import MatchEnded, RoundStarted, SessionEvent

ROOT = Path(__file__).resolve().parent.parent
TABLE_ID = "0badcafe"


@cache
def simulated_match() -> tuple[list[list[Any]], dict[int, str]]:
    """The records a peer's log holds after a whole simulated 2-laptop match (5 short rounds),
    and the round hashes that peer computed while playing it."""
    result = play_game(8, 2, rounds=8, options=Options(pile=5, target=20), until=60.0)
    app = result.apps["p01"]
    records: list[list[Any]] = [["member", "joined", peer] for peer in sorted(result.apps)]
    records += [["entry", key[0], key[1], payload] for key, payload in app.stable_log]
    return records, {number: digest.hex() for number, digest in app.round_digests.items()}


def write_match_log(folder: Path, cut: int = 0) -> Path:
    """The simulated match as a log file written by p01 (``cut`` bytes short of its end)."""
    path = folder / f"{TABLE_ID}-p01.nlog"
    path.unlink(missing_ok=True)  # the writer appends
    writer = MatchLogWriter(path)
    for record in simulated_match()[0]:
        kind, *rest = record
        if kind == "member":
            writer.member(rest[0], rest[1])
        else:
            writer.entry(rest[0], rest[1], rest[2])
    writer.close()
    if cut:
        path.write_bytes(path.read_bytes()[:-cut])
    return path


def load(path: Path) -> ReplaySession:
    records, problem = read_match_log(path)
    return ReplaySession.from_records(records, problem, writer_of(path, records))


def play_through(session: ReplaySession) -> list[SessionEvent]:
    """Everything the replay shows, played at its own pace; Enter on every scoreboard."""
    now, events = 0.0, []
    for _ in range(100_000):
        now += PACE
        events += session.poll(now)
        if session.finished:
            return events
        if session.waiting_for_next_round:
            session.next_round()
    raise AssertionError("the replay never finished")


def test_a_replay_played_through_ends_with_the_rounds_and_scores_of_the_log(
    tmp_path: Path,
) -> None:
    path = write_match_log(tmp_path)
    records, problem = read_match_log(path)
    folded = fold_log(records)
    rounds, ended = [r.ended for r in folded.rounds if r.ended is not None], folded.ended
    assert problem is None and ended is not None and len(rounds) == len(folded.rounds) >= 3

    session = load(path)
    events = play_through(session)

    shown = [e for e in events if isinstance(e, RoundEnded)]
    assert shown == rounds
    hashes = {r.number: r.ended.digest.hex() for r in folded.rounds if r.ended is not None}
    assert hashes == simulated_match()[1]
    started = [e.number for e in events if isinstance(e, RoundStarted)]
    assert started == [r.number for r in folded.rounds]
    assert [e.match for e in events if isinstance(e, MatchEnded)] == [ended.match]
    assert session.match == ended.match
    assert state_digest(session.view) == rounds[-1].digest
    assert session.notice is None and session.finished and not session.playing


def test_the_view_is_from_the_log_writers_seat(tmp_path: Path) -> None:
    session = load(write_match_log(tmp_path))
    assert session.local_players == ()
    # p01's team, not merely the first one (which team it sat on is the game's business).
    assert session.viewer_team is not None
    assert session.viewer_team == session.table.team_of("p01") != session.table.team_of("p00")

    elsewhere = tmp_path / "copy.nlog"
    elsewhere.write_bytes((tmp_path / f"{TABLE_ID}-p01.nlog").read_bytes())
    assert load(elsewhere).viewer_team is None  # nobody's seat: a neutral view


def test_one_action_every_pace_and_the_speed_multiplies_it(tmp_path: Path) -> None:
    session = load(write_match_log(tmp_path))
    assert isinstance(session.poll(0.0)[0], RoundStarted)
    assert session.poll(PACE * 0.9) == []
    assert [type(e) for e in session.poll(PACE * 1.0)] == [ActionApplied]
    assert session.action_number == 1

    session.faster()
    session.faster()
    assert session.speed == 4
    session.poll(PACE * 2.0)
    assert session.action_number == 1 + 4


def test_stepping_pauses_and_shows_one_action_at_a_time(tmp_path: Path) -> None:
    session = load(write_match_log(tmp_path))
    start = session.poll(0.0)[0]
    assert isinstance(start, RoundStarted) and session.view == start.state

    session.step()
    events = session.poll(50.0)
    assert not session.playing
    assert len(events) == 1 and isinstance(events[0], ActionApplied)
    assert session.view != start.state
    assert (session.action_number, session.round_number) == (1, 1)
    assert session.action_total > 10

    for _ in range(session.action_total - 1):
        session.step()
    assert session.action_number == session.action_total
    session.step()
    assert [type(e) for e in session.poll(51.0)][-1] is RoundEnded
    assert session.waiting_for_next_round and len(session.match.rounds) == 1
    session.step()  # on from the scoreboard: the next deal
    assert isinstance(session.poll(52.0)[-1], RoundStarted)
    assert (session.round_number, session.action_number) == (2, 0)


def test_rounds_can_be_skipped_forward_and_back(tmp_path: Path) -> None:
    path = write_match_log(tmp_path)
    rounds = fold_log(read_match_log(path)[0]).rounds
    scores = [r.ended.scores for r in rounds if r.ended is not None]
    session = load(path)
    session.poll(0.0)

    session.next_round()
    started = session.poll(0.1)
    assert [e.number for e in started if isinstance(e, RoundStarted)] == [2]
    assert session.round_number == 2 and session.action_number == 0
    assert session.match.totals == scores[0]

    session.poll(0.1 + PACE * 3)
    session.previous_round()  # partway: this round's deal again
    session.poll(0.5)
    assert (session.round_number, session.action_number) == (2, 0)
    session.previous_round()  # at the deal: the round before
    session.poll(0.6)
    assert session.round_number == 1 and session.match.rounds == ()

    for _ in range(len(rounds)):
        session.next_round()
    events = session.poll(0.7)  # past the last deal: the last round's end, the final scores
    assert session.finished and session.round_number == rounds[-1].number
    assert [type(e) for e in events][-2:] == [RoundEnded, MatchEnded]
    session.next_round()  # from the final scoreboard: the match from the start
    session.poll(0.8)
    assert session.round_number == 1


def test_a_truncated_log_replays_everything_before_the_damage(tmp_path: Path) -> None:
    whole_log = fold_log(read_match_log(write_match_log(tmp_path))[0])
    whole = [r.ended for r in whole_log.rounds if r.ended is not None]
    path = write_match_log(tmp_path, cut=400)
    records, problem = read_match_log(path)
    assert problem is not None and "cut short" in problem

    session = load(path)
    events = play_through(session)

    assert session.notice == f"{problem}; the {len(records)} records before it were replayed"
    shown = [e.digest.hex() for e in events if isinstance(e, RoundEnded)]
    assert shown and shown == [r.digest.hex() for r in whole[: len(shown)]]
    assert not any(isinstance(e, MatchEnded) for e in events)
    assert session.round_number == len(shown) + 1  # the round the log stops in, partly shown
    assert 0 < session.action_number == session.action_total
    assert session.finished and not session.playing


def _with_snapshot(folder: Path, records: list[list[Any]], at: int, resume: int) -> Path:
    """A log of ``records[:at]``, then a snapshot of the table after ``records[:resume]``, then
    the rest: what a peer that caught up from a snapshot at ``resume`` writes."""
    machine = TableMachine("someone")
    for record in records[:resume]:
        machine = apply_record(machine, record)
    path = folder / f"snapshot-{at}-{resume}.nlog"
    writer = MatchLogWriter(path)
    for kind, *rest in records[:at]:
        (writer.member if kind == "member" else writer.entry)(*rest)
    writer.snapshot(resume, machine.snapshot())
    for kind, *rest in records[resume:]:
        (writer.member if kind == "member" else writer.entry)(*rest)
    writer.close()
    return path


def test_a_log_that_starts_or_resumes_from_a_snapshot_replays_from_there(tmp_path: Path) -> None:
    records, hashes = simulated_match()
    acts = [(i, r[3]) for i, r in enumerate(records) if r[0] == "entry" and r[3]["k"] == "act"]
    in_round_2 = [i for i, payload in acts if payload["r"] == 2]
    middle = in_round_2[len(in_round_2) // 2]

    late = load(_with_snapshot(tmp_path, records, 0, middle))  # joined during round 2
    events = play_through(late)
    ends = {e.digest.hex() for e in events if isinstance(e, RoundEnded)}
    assert [e.number for e in events if isinstance(e, RoundStarted)][:2] == [2, 3]
    assert ends == {h for n, h in hashes.items() if n >= 2} and late.notice is None

    back = load(_with_snapshot(tmp_path, records, in_round_2[3], middle))  # away, then back
    events = play_through(back)
    assert [e.digest.hex() for e in events if isinstance(e, RoundEnded)] == list(hashes.values())
    jumps = [e for e in events if isinstance(e, RoundStarted) and e.number == 2]
    assert len(jumps) == 2  # the deal, then the state it caught up to


def test_the_replay_refuses_every_move() -> None:
    records, _ = simulated_match()
    session = ReplaySession.from_records(records)
    session.poll(0.0)
    session.pause()
    before = session.view
    from nerts_lan.rules.actions import Flip

    session.submit(Flip("p00"))
    events = session.poll(1.0)
    assert len(events) == 1 and events[0].reason == "this is a replay"  # type: ignore[union-attr]
    assert session.view is before


def test_a_log_without_a_deal_has_nothing_to_replay() -> None:
    records, _ = simulated_match()
    with pytest.raises(ValueError, match="no dealt round"):
        ReplaySession.from_records(records[:4])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "nerts_lan", "replay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_the_command_fails_with_one_line_before_any_window(tmp_path: Path) -> None:
    missing = _cli(str(tmp_path / "missing-file"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == (
        f"nerts-lan replay: error: cannot read {tmp_path / 'missing-file'}: "
        "No such file or directory\n"
    )

    junk = tmp_path / "junk.nlog"
    junk.write_bytes(b"hello, not a log")
    done = _cli(str(junk))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "is not a nerts-lan match log" in done.stderr

    lobby_only = tmp_path / "lobby.nlog"
    writer = MatchLogWriter(lobby_only)
    writer.member("joined", "p00")
    writer.close()
    done = _cli(str(lobby_only))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no dealt round" in done.stderr
