"""Everyone at a table killed at once and restarted on the same data folders (127.0.0.1): nobody
is left to rejoin, so the restarted host brings the match back from its match log, and the match
goes on with its next round, the scores of the rounds before kept, the same on every laptop."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nerts_lan.lan.service import options_for
from nerts_lan.rules.state import Options
from nerts_lan.table.session import Session
from tests.net_real.peers import PeerProcess, headless
from tests.test_resume import resumable_log
from tests.waiting import until
from ui.lobby.lan import LanLobby
from ui.lobby.provider import HostRequest

BOTS = ["--bot", "hard", "--bot-delay", "0.05"]
ROUNDS = ["--rounds", "4"]
TARGET = ["--target", "1000"]  # four whole rounds: no match ends before


def test_everyone_killed_and_restarted_goes_on_with_the_match_from_its_logs(
    tmp_path: Path,
) -> None:
    table = f"Blackout{os.getpid()}"
    host_args = headless("host", "Ann", table, "--players", "3", *ROUNDS, *TARGET, *BOTS)
    join_args = [
        headless("join", name, table, "--wait", "25", *ROUNDS, *BOTS) for name in ("Bo", "Cy")
    ]
    folders = [tmp_path / name for name in ("ann", "bo", "cy")]
    peers = [PeerProcess(host_args, folders[0])]
    try:
        first_id = peers[0].wait_for("hosting")["id"]
        peers += [PeerProcess(args, folder) for args, folder in zip(join_args, folders[1:])]
        for peer in peers:  # round 2 is stable on every laptop, and in every log
            peer.wait_for("round_over", timeout=40, round=2)
        before = [r["scores"] for r in peers[0].events("round_over")]
        for peer in peers:
            peer.kill()

        again = [PeerProcess(host_args, folders[0])]
        again += [PeerProcess(args, folder) for args, folder in zip(join_args, folders[1:])]
        peers += again
        assert again[0].wait_for("previous_table_gone", timeout=20)["id"] == first_id
        hosting = again[0].wait_for("hosting", timeout=20)
        resumed = again[0].wait_for("match_resumed", timeout=5)
        assert hosting["id"] != first_id and resumed["from"] == first_id
        assert resumed["round"] == 3 and len(resumed["rounds"]) == 2
        teams = list(before[0])
        assert resumed["totals"] == {team: before[0][team] + before[1][team] for team in teams}
        for peer in again[1:]:
            assert peer.wait_for("table_found", timeout=30)["id"] == hosting["id"]
        for peer in again:
            assert peer.finish(60) == 0, peer.stderr[-2000:]
    finally:
        for peer in peers:
            peer.stop()

    assert again[0].events("round_started")[0]["round"] == 3  # not a new match from round 1
    final = {peer.events("round_over")[-1]["round"] for peer in again}
    hashes = {peer.events("round_over")[-1]["state_hash"] for peer in again}
    assert final == {4} and len(hashes) == 1
    for peer in again[1:]:  # each joiner took its own seat back, its name unchanged
        seated = peer.events("seated")[-1]
        assert seated["player"] in {"Bo", "Cy"}


def test_the_window_hosting_a_table_nobody_kept_continues_its_match_and_says_from_which_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann's window hosts "Kitchen" again after every laptop at it stopped: nobody advertises
    it, so the lobby brings its match back from her log, says so, and deals round 3."""
    monkeypatch.setenv("NERTS_LAN_DATA", str(tmp_path))  # the window's data folder
    ann = options_for("Ann").peer_id
    (tmp_path / "logs").mkdir()
    resumable_log(tmp_path / "logs", "0badcafe", [[10, -2, 4], [7, 12, -1]], ann=ann)
    lobby = LanLobby("127.0.0.1", intermission=0.0, bot="hard", check_every=0.3)
    try:
        lobby.host("Ann", HostRequest("Kitchen", Options(), seats=3))
        assert lobby.notice.startswith("Continuing the match of Kitchen from round 3 (")
        assert lobby.session is not None

        dealt: list[Session] = []

        def round_dealt() -> bool:
            session = lobby.poll(0.0)
            if session is not None:
                dealt.append(session)
            return bool(dealt)

        until(round_dealt, timeout=20, what="round 3 dealt at the resumed table")
        try:
            assert list(dealt[0].match.totals.values()) == [17, 10, 3]
            assert dealt[0].status.table_id != "0badcafe"
        finally:
            dealt[0].close()
    finally:
        lobby.close()
