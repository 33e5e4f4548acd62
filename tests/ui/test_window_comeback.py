"""A player whose window crashed mid-table hosts again from the window: it goes back to the
table the others kept (a table of two waits for its lower id, advertised meanwhile by the other),
and says so in words the player understands."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net_real.peers import PeerProcess, headless
from tests.ui.conftest import Harness
from tests.ui.test_lan_window import _button, _run, _screen, _texts


def test_hosting_again_after_a_crash_goes_back_to_the_table_and_says_so(
    lan_harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = lan_harness
    window = harness.window
    ann_data = tmp_path / "ann"
    # Ann's first game (a headless stand-in for the crashed window) hosts her default table;
    # Bo joins it by id (other tests may have a table of that name on 127.0.0.1).
    ann = PeerProcess(headless("host", "Ann", "Ann's table", "--players", "3"), ann_data)
    bo: PeerProcess | None = None
    try:
        table_id = ann.wait_for("hosting")["id"]
        ann_id = ann.wait_for("joined")["peer"]
        bo = PeerProcess(headless("join", "Bo", table_id), tmp_path / "bo")
        bo.wait_for("seated")
        assert ann_id < bo.wait_for("joined")["peer"]  # alone, Bo waits for Ann
        ann.kill()
        bo.wait_for("table_paused", timeout=15)

        monkeypatch.setenv("NERTS_LAN_DATA", str(ann_data))  # the same laptop, restarted
        window.show_menu()
        harness.frame()
        harness.click(*window.current.name_field.rect.center)
        harness.send("on_text", "Ann")
        lobby = window.lobby
        _run(harness, lambda: lobby.advertised(table_id) is not None)  # Bo advertises it now
        harness.click(*_button(window.current, "Host a table").rect.center)
        harness.click(*_button(window.current, "Open table").rect.center)
        assert _screen(harness) == "LobbyScreen"

        def back() -> bool:
            view = lobby.lobby()
            return view is not None and view.my_seat is not None and len(view.members) == 2

        _run(harness, back)
        assert lobby.session is not None and lobby.session.status.table_id == table_id
        assert lobby.session.status.peer_id == ann_id
        _run(harness, lambda: "Back to your table Ann's table" in _texts(window.current))
        bo.wait_for("table_back", timeout=20)  # her kept vote brought the table back
    finally:
        ann.stop()
        if bo is not None:
            bo.stop()
