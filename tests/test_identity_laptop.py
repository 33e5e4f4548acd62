"""The laptop's peer key in the data folder, and the peer ids the game derives from it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nerts_lan.lan.advert import LanOptions, persistent_peer_id
from nerts_lan.lan.identity import key_path, label_of, laptop_key, laptop_peer_id
from net import PeerKey, owns
from tests.platforms import not_on_windows


def test_the_key_is_made_once_and_kept(tmp_path: Path) -> None:
    path = key_path()
    assert not path.exists()
    key = laptop_key()
    assert path.exists()
    assert laptop_key().public_bytes == key.public_bytes


@not_on_windows("no POSIX modes (a key is private by the user folder's access list)")
def test_the_key_is_private_to_the_user() -> None:
    laptop_key()
    assert stat.S_IMODE(os.stat(key_path()).st_mode) == 0o600


def test_a_player_keeps_their_peer_id_on_this_laptop_and_it_is_the_keys() -> None:
    first = persistent_peer_id("Ann Lee")
    assert first == persistent_peer_id("Ann Lee") == laptop_peer_id("Ann Lee")
    assert first.startswith("ann-lee-")
    assert owns(first, laptop_key().public_bytes)
    assert persistent_peer_id("Bo") != first
    assert label_of("!!!") == "peer"


def test_another_laptop_has_other_ids_for_the_same_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = persistent_peer_id("Ann")
    monkeypatch.setenv("NERTS_LAN_DATA", str(tmp_path / "other laptop"))
    assert persistent_peer_id("Ann") != mine


def test_an_unreadable_key_gives_way_to_one_for_this_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    damaged = tmp_path / "peer.key"
    damaged.write_bytes(b"damaged")
    key = laptop_key(damaged)
    assert isinstance(key, PeerKey)
    assert damaged.read_bytes() == b"damaged"  # never overwritten: it may be recovered
    assert "cannot keep the peer key" in caplog.text


def test_options_bind_a_readable_peer_id_to_their_key() -> None:
    key = PeerKey.generate()
    options = LanOptions("Ann", "ann-1", key=key)
    assert options.peer_id.startswith("ann-1-") and owns(options.peer_id, key.public_bytes)
    already = LanOptions("Ann", key.peer_id("ann"), key=key)
    assert already.peer_id == key.peer_id("ann")
    fresh = LanOptions("Bo", "bo-7")
    assert owns(fresh.peer_id, fresh.key.public_bytes)


def test_the_bench_reports_what_keys_cost_an_action() -> None:
    from nerts_lan.lab.keybench import bench_keys

    figures = bench_keys(quick=True)
    assert figures["actions"] == 300
    sizes = figures["action_frame_bytes"]
    assert sizes["signed"] > sizes["unsigned"] + 96  # a proof: signature and key
    assert set(figures["added_per_action_us"]) == {"author", "each_receiver"}
