"""A table of two on 127.0.0.1 whose lowest id crashes: the other waits ("table_paused": alone it
is no majority, and going on alone could fork the table), and when the crashed host is started
again with its own command it finds its table (the one waiting advertises it meanwhile), votes
in its old place with the vote it kept beside its match log, and the table goes on."""

from __future__ import annotations

import secrets
from pathlib import Path

from nerts_lan.lan.comeback import saved_vote, vote_path
from tests.net_real.peers import PeerProcess, headless


def test_the_waiting_half_of_a_table_of_two_gets_its_crashed_host_back(tmp_path: Path) -> None:
    table = f"Pair {secrets.token_hex(3)}"
    slow = ["--bot", "easy", "--bot-delay", "3"]  # the match lasts the whole test
    ann = PeerProcess(headless("host", "Ann", table, "--players", "2", *slow), tmp_path / "ann")
    bo = PeerProcess(headless("join", "Bo", table, *slow), tmp_path / "bo")
    again: PeerProcess | None = None
    try:
        table_id = ann.wait_for("hosting")["id"]
        ann_id = ann.wait_for("joined")["peer"]
        bo_id = bo.wait_for("joined")["peer"]
        assert ann_id < bo_id  # Ann holds the lowest id: alone, Bo is not a majority
        bo.wait_for("round_started")
        kept = saved_vote(vote_path(tmp_path / "ann" / "logs", table_id, ann_id))
        assert kept is not None and kept.epoch >= 1  # Bo's arrival was a vote Ann kept

        ann.kill()
        bo.wait_for("table_paused", timeout=20)
        assert not bo.events("peer_gone")  # the table does not let its host go: it waits

        again = PeerProcess(headless("host", "Ann", table, *slow), tmp_path / "ann")
        back = again.wait_for("back_to_table", timeout=20)
        assert back["id"] == table_id and back["host"] == "Bo"  # Bo stood in for its host
        assert again.wait_for("joined", timeout=20)["peer"] == ann_id
        bo.wait_for("table_back", timeout=20)
        bo.wait_for("peer_returned", timeout=20, peer=ann_id)
        assert not again.events("hosting")  # back at the old table, not at a new one
        again.wait_for("seated", timeout=20)
        rounds = len(bo.events("round_started"))
        assert rounds >= 1 and again.running and bo.running
    finally:
        ann.stop()
        bo.stop()
        if again is not None:
            again.stop()
