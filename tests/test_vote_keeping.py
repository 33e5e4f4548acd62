"""The vote a peer keeps beside its match log for its next incarnation (``comeback.save_vote`` /
``saved_vote``, on ``net._order.core``'s record codec): a record survives the round trip whole, and
a damaged or hostile file is no record (one warning line), never a crash."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from nerts_lan.lan.comeback import save_vote, saved_vote, vote_path
from net._order.viewchange import NO_BALLOT, Ballot, Change, VoteRecord
from net._order.voterecord import vote_record_from_data, vote_record_to_data
from net._order.wirefields import Removal
from tests.platforms import not_on_windows

_RECORDS = [
    VoteRecord(0, NO_BALLOT, NO_BALLOT, None),
    VoteRecord(3, Ballot(2, "bo-1f"), NO_BALLOT, None),
    VoteRecord(
        7,
        Ballot(5, "ann-0a"),
        Ballot(4, "cy-9c"),
        Change(812, {"bo-1f": Removal(1700000000123, 799, "excluded")}, {"dee-77": 4}),
    ),
    # With the view of its epoch: what lets the restarted laptops of a view whose processes
    # all died decide its change among themselves (issue 24, rolling 80196)
    VoteRecord(
        7,
        Ballot(5, "ann-0a"),
        Ballot(4, "cy-9c"),
        Change(812, {"bo-1f": Removal(2, 799, "excluded")}, {"bo-1f": 3}),
        {"ann-0a": 0, "bo-1f": 2, "cy-9c": 1},
    ),
]


def test_a_vote_kept_by_an_older_build_reads_back_without_a_view(tmp_path: Path) -> None:
    data = vote_record_to_data(_RECORDS[3])
    del data["view"]
    record = vote_record_from_data(json.loads(json.dumps(data)))
    assert record.view is None and record[:4] == _RECORDS[3][:4]


@pytest.mark.parametrize("record", _RECORDS)
def test_a_kept_vote_reads_back_as_the_same_record(tmp_path: Path, record: VoteRecord) -> None:
    path = vote_path(tmp_path, "c0ffee12", "ann-0a")
    assert path.name == "c0ffee12-ann-0a.vote"
    save_vote(path, record)
    assert saved_vote(path) == record
    assert vote_record_from_data(json.loads(json.dumps(vote_record_to_data(record)))) == record
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file is left


def test_a_kept_vote_keeps_the_signed_notice_of_a_leave_it_accepted(tmp_path: Path) -> None:
    """A successor that votes in its predecessor's place passes the accepted change on, and at
    a signed table a leave in it is refused without the leaver's notice (issue 24)."""
    notice = bytes(range(96))
    change = Change(812, {"bo-1f": Removal(1, 799, "left", notice)}, {})
    path = vote_path(tmp_path, "t", "ann")
    save_vote(path, VoteRecord(7, Ballot(5, "ann-0a"), Ballot(5, "ann-0a"), change))
    kept = saved_vote(path)
    assert kept is not None and kept.value is not None
    assert kept.value.removals["bo-1f"].proof == notice


def test_a_newer_vote_replaces_the_older_one(tmp_path: Path) -> None:
    path = vote_path(tmp_path, "t", "ann")
    for record in _RECORDS:
        save_vote(path, record)
    assert saved_vote(path) == _RECORDS[-1]


def test_no_file_is_no_record_without_a_word(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert saved_vote(tmp_path / "none.vote") is None
    assert not caplog.records


_GOOD = vote_record_to_data(_RECORDS[2])

_DAMAGED: list[bytes] = [
    b"",
    b"\x00\xff\xfe garbage",
    json.dumps(_GOOD).encode()[:-7],  # cut short (a torn write)
    b"[1, 2, 3]",
    b'"a string"',
    b"[" * 100_000 + b"]" * 100_000,  # nesting deep enough to break a recursive reader
    b"x" * (2 << 20),  # larger than any real record
    json.dumps({**_GOOD, "epoch": -1}).encode(),
    json.dumps({**_GOOD, "epoch": True}).encode(),
    json.dumps({**_GOOD, "epoch": 1.5}).encode(),
    json.dumps({**_GOOD, "epoch": 1 << 70}).encode(),
    json.dumps({**_GOOD, "promised": [1]}).encode(),
    json.dumps({**_GOOD, "promised": [1, ""]}).encode(),
    json.dumps({**_GOOD, "accepted": ["1", "ann"]}).encode(),
    json.dumps({**_GOOD, "accepted": [1, "x" * 65]}).encode(),
    json.dumps({**_GOOD, "extra": 1}).encode(),
    json.dumps({k: v for k, v in _GOOD.items() if k != "value"}).encode(),
    json.dumps({**_GOOD, "value": {**_GOOD["value"], "marker": "812"}}).encode(),
    json.dumps({**_GOOD, "value": {**_GOOD["value"], "removals": {"bo": [1, 2]}}}).encode(),
    json.dumps({**_GOOD, "value": {**_GOOD["value"], "removals": {"bo": [1, 2, 3]}}}).encode(),
    json.dumps({**_GOOD, "value": {**_GOOD["value"], "removals": []}}).encode(),
    json.dumps({**_GOOD, "value": {**_GOOD["value"], "additions": {"": 4}}}).encode(),
    json.dumps({**_GOOD, "value": {**_GOOD["value"], "additions": {"dee": None}}}).encode(),
    json.dumps(
        {**_GOOD, "value": {**_GOOD["value"], "additions": {f"p{i}": 1 for i in range(300)}}}
    ).encode(),
    json.dumps({**_GOOD, "view": {"ann": -1}}).encode(),
    json.dumps({**_GOOD, "view": {"ann": "0"}}).encode(),
    json.dumps({**_GOOD, "view": ["ann", 0]}).encode(),
    json.dumps({**_GOOD, "view": {"": 0}}).encode(),
    json.dumps({**_GOOD, "view": {f"p{i}": 0 for i in range(300)}}).encode(),
]


@pytest.mark.parametrize("data", _DAMAGED, ids=range(len(_DAMAGED)))
def test_a_damaged_vote_file_is_no_record_and_one_warning_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, data: bytes
) -> None:
    path = tmp_path / "t-ann.vote"
    path.write_bytes(data)
    with caplog.at_level(logging.WARNING):
        assert saved_vote(path) is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert str(path) in warnings[0].getMessage() and "\n" not in warnings[0].getMessage()
    assert len(warnings[0].getMessage()) < 300


@not_on_windows("no /dev/zero, and a vote file's name (TABLEID-PEERID.vote) is never a device's")
def test_a_vote_file_that_is_a_device_is_no_record(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t-ann.vote"
    path.symlink_to("/dev/zero")  # reading it would never end
    with caplog.at_level(logging.WARNING):
        assert saved_vote(path) is None
    assert len(caplog.records) == 1 and "not a regular file" in caplog.records[0].getMessage()


def test_an_unreadable_vote_file_is_no_record(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t-ann.vote"
    path.mkdir()  # a folder where the file should be
    with caplog.at_level(logging.WARNING):
        assert saved_vote(path) is None
    assert len(caplog.records) == 1
