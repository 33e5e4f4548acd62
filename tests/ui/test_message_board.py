"""The message area's logic with a fake clock: one message per kind, newest first, stale ones
gone. Pure: no window."""

from __future__ import annotations

from ui.table.message_strip import DEFAULT_LIFETIMES, MessageBoard, MessageKind


def _texts(board: MessageBoard) -> list[str]:
    return [message.text for message in board.visible()]


def test_a_newer_message_of_a_kind_replaces_the_older_one() -> None:
    board = MessageBoard()
    board.show(MessageKind.REFUSAL, "5♥ has nowhere to go", 0.0)
    board.show(MessageKind.REFUSAL, "4♠ has nowhere to go", 0.1)
    assert _texts(board) == ["4♠ has nowhere to go"]


def test_the_newest_comes_first_and_an_older_one_comes_back_when_it_goes() -> None:
    board = MessageBoard(lines=2)
    board.show(MessageKind.STUCK, "Stuck: Bo", 0.0)
    board.show(MessageKind.ROUND, "Round 1: go!", 0.0)
    board.show(MessageKind.REFUSAL, "5♥ has nowhere to go", 1.0)
    assert _texts(board) == ["5♥ has nowhere to go", "Round 1: go!"]
    assert board.expire(3.0)  # the round's go! is up
    assert _texts(board) == ["5♥ has nowhere to go", "Stuck: Bo"]
    lifetime = DEFAULT_LIFETIMES[MessageKind.REFUSAL]
    assert lifetime is not None
    assert not board.expire(1.0 + lifetime - 0.01)
    assert board.expire(1.0 + lifetime)
    assert _texts(board) == ["Stuck: Bo"]


def test_a_lasting_message_stays_until_cleared_and_showing_it_again_changes_nothing() -> None:
    board = MessageBoard()
    assert board.show(MessageKind.STUCK, "You are stuck", 0.0)
    assert not board.show(MessageKind.STUCK, "You are stuck", 5.0)
    assert not board.expire(1e6)
    assert board.show(MessageKind.STUCK, "", 1e6)  # an empty text clears
    assert _texts(board) == []


def test_a_hint_goes_once_the_state_it_was_about_is_no_longer_current() -> None:
    board = MessageBoard()
    before, after = object(), object()
    board.show(MessageKind.HINT, "Hint: A♠ to a foundation", 0.0, about=before)
    board.show(MessageKind.TABLE, "Bo is back", 0.0)
    assert not board.forget(before)
    assert board.forget(after)
    assert _texts(board) == ["Bo is back"]


def test_clear_takes_the_named_kinds_or_everything() -> None:
    board = MessageBoard()
    board.show(MessageKind.ROUND, "Round 2: go!", 0.0)
    board.show(MessageKind.HINT, "Hint: flip the stock", 0.0)
    board.show(MessageKind.TABLE, "Bo left the table", 0.0)
    assert board.clear(MessageKind.ROUND, MessageKind.HINT)
    assert not board.clear(MessageKind.ROUND)
    assert board.text_of(MessageKind.TABLE) == "Bo left the table"
    assert board.clear()
    assert _texts(board) == []
