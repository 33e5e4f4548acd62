"""The LAN benchmark's arithmetic on made-up traces (the figures themselves come from
``nerts-lan bench``, never from a test)."""

from __future__ import annotations

from nerts_lan.lab.lanbench import LOSSY, _Burst, _burst_figures, _figures


def _traces() -> list[list[list[object]]]:
    """Peer 0 moves at 10.0; the lossy peer (3) moves at 20.1, during a burst from 20.0 to
    20.3 that ends at 20.31; both are applied and stable everywhere."""
    traces: list[list[list[object]]] = [[] for _ in range(4)]
    traces[0].append(["submit", 1, "p0", 10.0])
    traces[LOSSY].append(["submit", 2, "p3", 20.1])
    for index, trace in enumerate(traces):
        if index != 0:
            trace.append(["applied", 1, "p0", 10.0 + 0.001 * index])
        if index != LOSSY:
            trace.append(["applied", 2, "p3", 20.32 + 0.01 * index])
        trace += [["stable", 1, "p0", 10.05], ["stable", 2, "p3", 20.4]]
    return traces


def test_remote_apply_and_stable_everywhere_are_measured_from_the_submission() -> None:
    figures = _figures(_traces())
    assert figures["actions"] == 2
    assert figures["remote_apply_ms"]["n"] == 6
    assert figures["remote_apply_ms"]["p50"] == 220.0  # 1, 2, 3, 220, 230, 240 ms
    assert figures["stable_everywhere_ms"]["max"] == 300.0


def test_the_lossy_peers_moves_in_a_burst_are_measured_from_its_end() -> None:
    figures = _burst_figures(_traces(), [_Burst(20.0, 20.3, 20.31)])
    assert figures["others_remote_apply_ms"] == {"n": 2, "p50": 2.0, "p99": 2.0, "max": 2.0}
    after = figures["lossy_moves_after_burst_end_ms"]
    assert after["n"] == 3 and after["p50"] == 20.0 and after["max"] == 30.0
