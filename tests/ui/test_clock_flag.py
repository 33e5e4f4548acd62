"""The core's clock flag (``ClockSuspected``) as the players meet it: a headless line and a line
in the window, naming the member and by how much, blaming nobody (a clock held back and a slow
one-way link look the same). In real processes: tests/net_real/test_netns_clock.py."""

from __future__ import annotations

from nerts_lan.headless.records import record_of
from nerts_lan.table.session import ClockLags
from ui.table.news import clock_lags_line


def test_a_late_laptop_is_a_headless_line_with_its_name_and_lag() -> None:
    record = record_of(ClockLags("p2-ab", "Cy", 0.0534))
    assert record == {"event": "clock_lags", "peer": "p2-ab", "name": "Cy", "lag_ms": 53}


def test_the_window_says_it_without_blame() -> None:
    line = clock_lags_line("Cy", 0.0534)
    assert line.startswith("Cy's moves reach the table 53 ms late")
    assert "win" in line and not any(word in line.lower() for word in ("cheat", "slow clock"))
