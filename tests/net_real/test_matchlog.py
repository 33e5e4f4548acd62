"""The match log: what every peer appends as the log becomes stable, and its replay."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from nerts_lan.cli.main import main
from nerts_lan.matchlog.file import MAGIC, MatchLogWriter, read_match_log
from tests.net_real.peers import FAST, PeerProcess

LOOPBACK = ["--interface", "127.0.0.1"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> list[PeerProcess]:
    """A finished two-laptop match of at least two rounds whose peers wrote their logs."""
    base = tmp_path_factory.mktemp("match")
    host = PeerProcess(
        [
            "host",
            "--headless",
            "--name",
            "Ann",
            "--table",
            "Logged",
            *LOOPBACK,
            *FAST,
            "--players",
            "2",
            "--target",
            "60",  # out of one round's reach: a cut at the end must leave a whole round
        ],
        base / "a",
    )
    peers = [host]
    try:
        host.wait_for("hosting")
        peers.append(
            PeerProcess(
                ["join", "--headless", "--name", "Bo", "--table", "Logged", *LOOPBACK, *FAST],
                base / "b",
            )
        )
        for peer in peers:
            assert peer.finish(120) == 0, peer.stderr[-2000:]
    finally:
        for peer in peers:
            peer.stop()
    return peers


def _replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    code = main(["replay", str(path), "--headless"])
    out = capsys.readouterr()
    return code, [json.loads(line) for line in out.out.splitlines()], out.err


def test_every_peers_log_replays_to_the_rounds_it_played(
    played: list[PeerProcess], capsys: pytest.CaptureFixture[str]
) -> None:
    for peer in played:
        log = Path(peer.wait_for("joined")["log"])
        code, lines, err = _replay(log, capsys)
        assert code == 0, err
        replayed = {r["round"]: r["state_hash"] for r in lines if r["event"] == "round_over"}
        printed = {r["round"]: r["state_hash"] for r in peer.events("round_over")}
        assert replayed and replayed == printed
        match = [r for r in lines if r["event"] == "match_over"]
        assert match and match[0]["totals"] == peer.wait_for("match_over")["totals"]


def test_a_damaged_log_keeps_everything_before_the_damage(
    played: list[PeerProcess], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(played[0].wait_for("joined")["log"]).read_bytes()
    whole = {r["round"]: r["state_hash"] for r in played[0].events("round_over")}

    cut = tmp_path / "cut.nlog"
    cut.write_bytes(data[: len(data) - 7])  # a crash while writing the last record
    code, lines, err = _replay(cut, capsys)
    assert code == 1 and "cut short" in err and err.count("\n") == 1
    rounds = {r["round"]: r["state_hash"] for r in lines if r["event"] == "round_over"}
    assert rounds and all(whole[n] == h for n, h in rounds.items())

    flipped = bytearray(data)
    flipped[_inside_a_body(data, len(data) * 3 // 4)] ^= 0xFF
    bad = tmp_path / "flipped.nlog"
    bad.write_bytes(bytes(flipped))
    code, lines, err = _replay(bad, capsys)
    assert code == 1 and ("damaged" in err or "cannot be read" in err)
    records, problem = read_match_log(bad)
    assert problem is not None and len(records) > 0

    junk = tmp_path / "junk.nlog"
    junk.write_bytes(b"not a log at all")
    code, lines, err = _replay(junk, capsys)
    assert code == 1 and "bad header" in err and lines == []


def test_records_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.nlog"
    writer = MatchLogWriter(path)
    writer.member("joined", "bo-1")
    writer.entry(3, "ann-1", {"k": "act", "r": 1, "a": {"by": "Ann", "do": "flip"}})
    writer.snapshot(9, {"phase": "lobby"})
    writer.close()
    assert path.read_bytes().startswith(MAGIC)
    records, problem = read_match_log(path)
    assert problem is None
    assert records == [
        ["member", "joined", "bo-1"],
        ["entry", 3, "ann-1", {"k": "act", "r": 1, "a": {"by": "Ann", "do": "flip"}}],
        ["snapshot", 9, {"phase": "lobby"}],
    ]


def test_replay_without_a_window_or_file_says_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path / "absent.nlog"), "--headless"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "absent.nlog")]) == 2
    assert "cannot read" in capsys.readouterr().err


def _inside_a_body(data: bytes, near: int) -> int:
    """A byte in the body of the record at ``near`` (a flipped length field would read as a log
    cut short, which is another test)."""
    offset = len(MAGIC)
    while True:
        (length,) = struct.unpack_from(">I", data, offset)
        body = offset + 8  # a 4-byte length and a 4-byte CRC-32 before each body
        if body + length > near:
            return body + length // 2
        offset = body + length
