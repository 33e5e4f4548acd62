"""The LAN table browser under both front ends: a table appears as its advert says, and goes."""

from __future__ import annotations

import secrets

from nerts_lan.lan.advert import PROTOCOL, LanOptions, TableInfo
from nerts_lan.lan.browse import TableBrowser
from nerts_lan.lan.seat import LanSession
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import TableSettings
from tests.waiting import until


def test_a_hosted_table_appears_in_the_browser_and_goes_when_its_host_leaves() -> None:
    name = f"Browse {secrets.token_hex(3)}"  # other tests on this machine may host tables too
    options = LanOptions("Ann", "ann-browse", interface="127.0.0.1", table_code="ABCD")
    host = LanSession.host(options, TableSettings(name, Options(), teams=3))
    browser = TableBrowser("127.0.0.1")
    try:
        browser.started()

        def listed() -> TableInfo | None:
            return next((t for t in browser.tables() if t.name == name), None)

        def seated() -> bool:  # the advert follows the table: the host sits down by itself
            table = listed()
            return table is not None and table.seats_taken == 1

        until(seated, timeout=15, what="the table, with its host seated, in the browser")
        table = listed()
        assert table is not None
        assert (table.table_id, table.port) == (host.status.table_id, host.status.port)
        assert (table.host_name, table.host_peer, table.mode) == ("Ann", options.peer_id, "singles")
        assert options.peer_id.startswith("ann-browse-")  # the label, then its key's hash
        assert (table.seats_taken, table.seats_total, table.state) == (1, 3, "lobby")
        assert table.needs_code and table.version == PROTOCOL
        assert browser.table(table.table_id) == table

        host.close()
        until(lambda: listed() is None, timeout=15, what="the table gone from the browser")
        assert browser.table(table.table_id) is None
    finally:
        host.close()
        browser.close()


def test_a_browser_closes_twice_without_harm() -> None:
    browser = TableBrowser("127.0.0.1")
    browser.started()
    browser.close()
    browser.close()
    assert browser.tables() == []
