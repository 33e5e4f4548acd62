"""Handicaps in a saved match log (issue 25): a simulated two-laptop match with a head start
replays to the same round hashes, and a log whose Create claims an out-of-range handicap is
refused naming the field."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.lab.simgame import play_game
from nerts_lan.matchlog.file import MatchLogWriter, read_match_log, writer_of
from nerts_lan.matchlog.rounds import fold_log
from nerts_lan.replay import ReplaySession
from nerts_lan.rules.handicap import Handicap
from nerts_lan.rules.state import Options
from nerts_lan.table.session import RoundStarted

HEAD_START = Handicap(pile=3, work=5, score=150)


@cache
def _match() -> tuple[list[list[Any]], dict[int, str]]:
    options = Options(pile=5, target=20, handicaps=(("Blue", HEAD_START),))
    result = play_game(9, 2, rounds=4, options=options, until=60.0)
    apps = list(result.apps.values())
    app = result.apps["p01"]
    records: list[list[Any]] = [["member", "joined", peer] for peer in sorted(result.apps)]
    records += [["entry", key[0], key[1], payload] for key, payload in app.stable_log]
    digests = {number: digest.hex() for number, digest in app.round_digests.items()}
    assert all(a.round_digests == app.round_digests for a in apps)
    return records, digests


def _write(folder: Path, records: list[list[Any]]) -> Path:
    path = folder / "0badcafe-p01.nlog"
    writer = MatchLogWriter(path)
    for kind, *rest in records:
        if kind == "member":
            writer.member(rest[0], rest[1])
        else:
            writer.entry(rest[0], rest[1], rest[2])
    writer.close()
    return path


def test_a_match_with_a_head_start_replays_to_the_same_round_hashes(tmp_path: Path) -> None:
    records, digests = _match()
    assert digests, "the simulated match dealt no round"
    path = _write(tmp_path, records)
    read, problem = read_match_log(path)
    assert problem is None
    folded = fold_log(read)
    hashes = {r.number: r.ended.digest.hex() for r in folded.rounds if r.ended is not None}
    assert hashes and all(digests[n] == h for n, h in hashes.items())
    session = ReplaySession.from_records(read, problem, writer_of(path, read))
    started = [e for e in session.poll(0.0) if isinstance(e, RoundStarted)]
    table = (started[0].state if started else session.view).table
    assert table.options.handicaps == (("Blue", HEAD_START),)
    blue = session.view.teams[table.team_names.index("Blue")]
    assert len(blue.work) == 5


def test_a_log_claiming_an_out_of_range_handicap_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    records, _ = _match()
    tampered = [list(r) for r in records]
    create = next(r for r in tampered if r[0] == "entry" and r[3].get("k") == "create")
    settings = dict(create[3]["settings"])
    settings["options"] = {**settings["options"], "handicaps": {"Blue": {"score": 1000}}}
    create[3] = {**create[3], "settings": settings}
    path = _write(tmp_path, tampered)
    read, problem = read_match_log(path)
    with pytest.raises(ValueError) as refused:
        ReplaySession.from_records(read, problem, writer_of(path, read))
    assert str(refused.value).startswith("the log holds no dealt round to replay: record 3")
    assert "handicap of team 'Blue': handicap field 'score' must be from 100 to 400" in str(
        refused.value
    )
