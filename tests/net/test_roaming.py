"""Following our own address when it changes (``net._mesh.roaming.AddressWatch``), in memory."""

from __future__ import annotations

from net._mesh.roaming import AddressWatch, Moved

Addresses = dict[str, tuple[str, ...]]


class FakeInterfaces:
    """What the operating system would say of its interfaces, changed by the test."""

    def __init__(self, **interfaces: tuple[str, ...]) -> None:
        self.now: Addresses = {"lo": ("127.0.0.1",), **interfaces}

    def __call__(self) -> Addresses:
        return dict(self.now)


def test_nothing_moves_while_the_addresses_stay() -> None:
    interfaces = FakeInterfaces(wlan0=("192.168.1.20",))
    watch = AddressWatch(interfaces)
    assert watch.check({"192.168.1.20", "127.0.0.1", "0.0.0.0"}) == (frozenset(), [])


def test_a_new_lease_on_the_same_interface_is_a_move() -> None:
    interfaces = FakeInterfaces(wlan0=("192.168.1.20",), docker0=("172.17.0.1",))
    watch = AddressWatch(interfaces)
    interfaces.now["wlan0"] = ("192.168.1.57",)
    assert watch.check({"192.168.1.20"}) == (
        frozenset({"192.168.1.20"}),
        [Moved("192.168.1.20", "192.168.1.57")],
    )
    assert watch.check({"192.168.1.57"}) == (frozenset(), [])


def test_a_gap_without_an_address_ends_with_the_move() -> None:
    """The old lease goes first; the connections from it are dead at once, the move is known
    once the interface has its new address."""
    interfaces = FakeInterfaces(wlan0=("10.0.0.5",))
    watch = AddressWatch(interfaces)
    del interfaces.now["wlan0"]
    assert watch.check({"10.0.0.5"}) == (frozenset({"10.0.0.5"}), [])
    assert watch.check({"10.0.0.5"}) == (frozenset({"10.0.0.5"}), [])
    interfaces.now["wlan0"] = ("10.0.0.9",)
    assert watch.check({"10.0.0.5"})[1] == [Moved("10.0.0.5", "10.0.0.9")]


def test_the_same_address_coming_back_is_no_move() -> None:
    interfaces = FakeInterfaces(eth0=("10.0.0.5",))
    watch = AddressWatch(interfaces)
    interfaces.now["eth0"] = ()
    assert watch.check({"10.0.0.5"})[0] == {"10.0.0.5"}
    interfaces.now["eth0"] = ("10.0.0.5",)
    assert watch.check({"10.0.0.5"}) == (frozenset(), [Moved("10.0.0.5", "10.0.0.5")])


def test_an_added_address_is_preferred_to_one_the_interface_already_had() -> None:
    interfaces = FakeInterfaces(eth0=("10.0.0.5", "10.0.1.5"))
    watch = AddressWatch(interfaces)
    interfaces.now["eth0"] = ("10.0.1.5", "10.0.2.7")
    assert watch.check({"10.0.0.5"})[1] == [Moved("10.0.0.5", "10.0.2.7")]


def test_addresses_nobody_uses_may_come_and_go() -> None:
    """A virtual bridge going away is none of the table's business."""
    interfaces = FakeInterfaces(wlan0=("192.168.1.20",), docker0=("172.17.0.1",))
    watch = AddressWatch(interfaces)
    del interfaces.now["docker0"]
    assert watch.check({"192.168.1.20"}) == (frozenset(), [])
