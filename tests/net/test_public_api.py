"""The package's public surface: ``net.__all__`` names what the rest of the game may use."""

from __future__ import annotations

import subprocess
import sys

import net
from net import events, transport


def test_every_public_name_resolves_to_the_object_of_its_module() -> None:
    for name in net.__all__:
        assert getattr(net, name) is not None, name
    assert net.Mesh is transport.Mesh and net.MeshConfig is transport.MeshConfig
    assert net.MemberJoined is events.MemberJoined


def test_every_event_is_public() -> None:
    assert set(events.__all__) <= set(net.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        net.no_such_thing  # noqa: B018
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("net.no_such_thing resolved")


def test_importing_net_loads_nothing_until_a_name_is_used() -> None:
    code = (
        "import sys, net; "
        "assert 'zeroconf' not in sys.modules and 'net.core' not in sys.modules; "
        "net.OrderingCore; "
        "assert 'net.core' in sys.modules and 'zeroconf' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
