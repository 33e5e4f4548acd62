"""A restarted host and the tables it finds on 127.0.0.1: back to its live table (the window's
lobby), or a new one when the old one is gone; a name two tables share. Other tests on this
machine host tables on 127.0.0.1 too, so every table name here is unique."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from nerts_lan.lan.browse import TableBrowser
from nerts_lan.rules.state import Options
from tests.net_real.peers import FAST, PeerProcess, headless
from tests.waiting import until
from ui.lobby.lan import LanLobby
from ui.lobby.provider import HostRequest


def _unique(name: str) -> str:
    return f"{name} {secrets.token_hex(3)}"


def test_a_restarted_host_whose_table_is_gone_says_so_and_hosts_anew(tmp_path: Path) -> None:
    table = _unique("Alone")
    first = PeerProcess(headless("host", "Ann", table, *FAST), tmp_path / "ann")
    again: PeerProcess | None = None
    try:
        hosted = first.wait_for("hosting")
        first.wait_for("seated")  # the table's settings and seat are in the log
        first.kill()
        again = PeerProcess(headless("host", "Ann", table, *FAST), tmp_path / "ann")
        gone = again.wait_for("previous_table_gone", timeout=20)
        assert (gone["table"], gone["id"]) == (table, hosted["id"])
        hosting = again.wait_for("hosting", timeout=20)
        assert hosting["id"] != hosted["id"] and hosting["peer"] == hosted["peer"]
        assert [r["event"] for r in again.lines[:2]] == ["previous_table_gone", "hosting"]
    finally:
        first.stop()
        if again is not None:
            again.stop()


def test_a_host_that_left_on_purpose_hosts_anew_at_once(tmp_path: Path) -> None:
    """Leaving (Ctrl-C, the end of ``--rounds``) is not a crash: hosting that name again opens a
    new table at once, without looking for the old one."""
    table = _unique("Done")
    first = PeerProcess(headless("host", "Ann", table, *FAST), tmp_path / "ann")
    again: PeerProcess | None = None
    try:
        hosted = first.wait_for("hosting")
        first.wait_for("seated")
        first.terminate()  # a deliberate leave: it says goodbye and closes its log
        # The new host starts only once the old one has exited: until then its log may still
        # be open, and read as a table it left by accident (CI once failed here).
        assert first.finish(30) == 0
        again = PeerProcess(headless("host", "Ann", table, *FAST), tmp_path / "ann")
        hosting = again.wait_for("hosting", timeout=20)
        assert hosting["id"] != hosted["id"]
        assert again.lines[0]["event"] == "hosting", again.lines[:2]
    finally:
        first.stop()
        if again is not None:
            again.stop()


def test_the_window_hosting_again_goes_back_to_the_table_its_crash_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann's game crashed while Bo stayed at her table; when her window hosts a table of the
    same name, it takes her back there and says so. Ann holds the lower id: alone, Bo waits for
    her (and advertises her table meanwhile), and her vote kept beside her log lets her new
    incarnation vote in her old place, so the table goes on."""
    table = _unique("Kitchen")
    ann = PeerProcess(headless("host", "Ann", table, "--players", "3"), tmp_path / "ann")
    bo = PeerProcess(headless("join", "Bo", table, *FAST), tmp_path / "bo")
    monkeypatch.setenv("NERTS_LAN_DATA", str(tmp_path / "ann"))  # the window's data folder
    lobby = LanLobby("127.0.0.1", intermission=0.0, check_every=0.3)
    try:
        table_id = ann.wait_for("hosting")["id"]
        ann_id = ann.wait_for("joined")["peer"]
        bo.wait_for("seated")
        assert ann_id < bo.wait_for("joined")["peer"]
        ann.kill()
        bo.wait_for("table_paused", timeout=15)

        def advertised_by_bo() -> bool:
            listed = lobby.advertised(table_id)
            return listed is not None and listed.host_name == "Bo"

        until(advertised_by_bo, timeout=20, what="Bo advertising Ann's table")
        lobby.host("Ann", HostRequest(table, Options()))
        assert lobby.notice == f"Back to your table {table}"
        assert lobby.session is not None

        def back_at_the_table() -> bool:
            lobby.poll(0.0)
            view = lobby.lobby()
            return view is not None and view.my_seat is not None and len(view.members) == 2

        until(back_at_the_table, timeout=20, what="Ann seated again at Bo's table")
        bo.wait_for("table_back", timeout=20)
        assert lobby.session is not None
        assert lobby.session.status.table_id == table_id
        assert lobby.session.status.peer_id == ann_id
    finally:
        lobby.close()
        ann.stop()
        bo.stop()


def test_join_refuses_a_name_two_tables_share_lists_them_and_takes_an_id(tmp_path: Path) -> None:
    table = _unique("Twins")
    hosts = [
        PeerProcess(headless("host", name, table, "--players", "3"), tmp_path / name)
        for name in ("Ann", "Cy")  # both wait in their lobbies
    ]
    tries: list[PeerProcess] = []
    try:
        ids = {h.wait_for("hosting")["id"]: name for h, name in zip(hosts, ("Ann", "Cy"))}
        browser = TableBrowser("127.0.0.1")
        try:  # both on the network (their adverts follow their hosting lines)
            until(lambda: {t.table_id for t in browser.tables()} >= set(ids), timeout=20)
        finally:
            browser.close()
        tries.append(PeerProcess(headless("join", "Bo", table, "--wait", "20"), tmp_path / "bo"))
        assert tries[0].finish(60) == 1
        error = tries[0].wait_for("error")
        assert table in error["message"] and "--table ID" in error["message"]
        listed = {t["id"]: t for t in error["tables"]}
        assert set(listed) == set(ids) and not tries[0].events("table_found")
        for table_id, host in ids.items():
            assert listed[table_id]["host"] == host and listed[table_id]["table"] == table
            assert listed[table_id]["address"] == "127.0.0.1" and "seats" in listed[table_id]

        picked = next(iter(ids))
        tries.append(PeerProcess(headless("join", "Bo", picked, "--wait", "20"), tmp_path / "bo"))
        found = tries[1].wait_for("table_found")
        assert (found["id"], found["table"], found["host"]) == (picked, table, ids[picked])
    finally:
        for peer in [*hosts, *tries]:
            peer.stop()
