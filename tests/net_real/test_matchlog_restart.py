"""Match logs of peers that were not there from the start: one killed mid-match whose log was
torn, restarted on the same data folder (its log keeps the rounds before the crash and every
round after the restart), and one that joined late (its replay says at which round)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nerts_lan.cli.main import main
from tests.net_real.peers import PeerProcess, headless
from tests.waiting import until

BOTS = ["--bot", "hard", "--bot-delay", "0.1"]


def test_a_peer_killed_with_a_torn_log_replays_every_round_it_played_after_the_restart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = f"Torn{os.getpid()}"
    rounds = ["--rounds", "4"]
    host = PeerProcess(
        headless("host", "Ann", table, "--players", "2", *rounds, *BOTS), tmp_path / "a"
    )
    peers = [host]
    bo_args = headless("join", "Bo", table, *rounds, *BOTS)
    try:
        host.wait_for("hosting")
        bo = PeerProcess(bo_args, tmp_path / "b")
        peers.append(bo)
        joined = bo.wait_for("joined", timeout=30)
        log = Path(joined["log"])
        bo.wait_for("round_over", timeout=60, round=1)
        bo.wait_for("round_started", timeout=30, round=2)
        written = log.stat().st_size
        until(lambda: log.stat().st_size > written, timeout=30)  # round 2 is in the log
        bo.kill()
        log.write_bytes(log.read_bytes()[:-5])  # the crash tore the last record
        host.wait_for("peer_gone", timeout=15, peer=joined["peer"])

        again = PeerProcess(bo_args, tmp_path / "b")  # the same data folder: same peer, same log
        peers.append(again)
        host.wait_for("peer_returned", timeout=30, peer=joined["peer"])
        for peer in (host, again):
            assert peer.finish(120) == 0, peer.stderr[-2000:]
    finally:
        for peer in peers:
            peer.stop()

    live = {r["round"]: r["state_hash"] for r in host.events("round_over")}
    after_restart = {r["round"]: r["state_hash"] for r in again.events("round_over")}
    assert after_restart and all(live[n] == h for n, h in after_restart.items())

    code = main(["replay", str(log), "--headless"])
    out = capsys.readouterr()
    replayed = {
        r["round"]: r["state_hash"]
        for r in map(json.loads, out.out.splitlines())
        if r["event"] == "round_over"
    }
    assert code == 0, out.err
    assert replayed.items() >= after_restart.items()  # every round played after the restart
    assert replayed[1] == live[1]  # and the round before the crash
    assert all(live[n] == h for n, h in replayed.items())
    assert "was damaged" in again.stderr and "kept its" in again.stderr  # the repair is told


def test_the_replay_of_a_late_joiners_log_says_which_round_it_joined_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = f"Late{os.getpid()}"
    # Four rounds: the late joiner, started once round 2 is, must find the host still there.
    # (With three, in the Windows lane, where a process takes seconds to start, the host had
    # played them all and gone once: "nothing is listening".)
    rounds = ["--rounds", "4"]
    host = PeerProcess(
        headless("host", "Ann", table, "--players", "2", *rounds, *BOTS), tmp_path / "a"
    )
    peers = [host]
    try:
        address = host.wait_for("hosting")["addresses"][0]
        peers.append(PeerProcess(headless("join", "Bo", table, *rounds, *BOTS), tmp_path / "b"))
        host.wait_for("round_started", timeout=60, round=2)
        # By address, not by mDNS: in the Windows lane (Wine, two workers, each with peers of
        # its own) finding the table took over 30 s once, and the rounds left by hard bots may
        # be over by then; this test is about the log, discovery has tests of its own.
        late_args = ["join", "--headless", "--name", "Cy", "--interface", "127.0.0.1"]
        late = PeerProcess([*late_args, "--address", address, *rounds, *BOTS], tmp_path / "c")
        peers.append(late)
        log = Path(late.wait_for("joined", timeout=60)["log"])
        for peer in peers:
            assert peer.finish(120) == 0, peer.stderr[-2000:]
    finally:
        for peer in peers:
            peer.stop()

    code = main(["replay", str(log), "--headless"])
    out = capsys.readouterr()
    lines = [json.loads(line) for line in out.out.splitlines()]
    assert code == 0, out.err
    first = late.events("round_started")[0]["round"]
    assert lines[0]["event"] == "log_starts" and lines[0]["round"] == first >= 2
    assert f"joined at round {first}" in lines[0]["note"]
    live = {r["round"]: r["state_hash"] for r in host.events("round_over")}
    replayed = {r["round"]: r["state_hash"] for r in lines if r["event"] == "round_over"}
    assert replayed and all(live[n] == h for n, h in replayed.items())
