"""The package's public surface: ``net.__all__`` names what the rest of the game may use, and
nothing outside ``net`` goes around it (tests/test_folder_rules.py checks the modules)."""

from __future__ import annotations

import subprocess
import sys

import net
from net import events
from net._mesh import mesh as transport


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


def test_importing_net_loads_zeroconf_only_when_discovery_is_used() -> None:
    """A headless simulation imports ``net`` and never mDNS."""
    code = (
        "import sys, net; "
        "assert 'zeroconf' not in sys.modules, 'import net loaded zeroconf'; "
        "net.OrderingCore, net.Mesh, net.Node; "
        "assert 'zeroconf' not in sys.modules, 'the core or mesh loaded zeroconf'; "
        "net.Discovery; "
        "assert 'zeroconf' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_faces_list_each_name_once() -> None:
    import net.testing

    for face in (net, net.testing):
        assert len(face.__all__) == len(set(face.__all__)), face.__name__


def test_outside_net_every_name_comes_through_a_face() -> None:
    """Every name ``nerts_lan``, ``ui`` and ``scripts`` import from ``net`` is on one of its
    faces (``net``, ``net.events``, ``net.errors``, ``net.testing``), and exists there."""
    import ast
    from pathlib import Path

    import net.testing
    from net import errors

    faces = {"net": net, "net.events": events, "net.errors": errors, "net.testing": net.testing}
    root = Path(__file__).resolve().parents[2]
    missing = []
    for folder in ("nerts_lan", "ui"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module in faces:
                    face = faces[node.module]
                    names = getattr(face, "__all__", [])
                    missing += [
                        f"{path.relative_to(root)}: {node.module}.{alias.name}"
                        for alias in node.names
                        if alias.name not in names
                    ]
    assert not missing, "names imported from a face that does not list them:\n" + "\n".join(missing)
