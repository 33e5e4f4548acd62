"""The codebase's shape: no room too big to read, no import going round in a circle.

Issue 11's ceiling, for the game, the network and (since issue 23) the window: no module over
600 lines, no class over 400, no function over 60 lines (ruff holds complexity at 15, see
pyproject.toml).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nerts_lan", "net", "ui")
HELD = ("nerts_lan", "net", "ui")
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules(packages: tuple[str, ...]) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", _modules(HELD), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_room_is_too_big_to_read(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    too_big = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        too_big.append(f"the module has {lines} lines (at most {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, str(path))):
        if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if isinstance(node, ast.ClassDef) and length > MAX_CLASS_LINES:
            too_big.append(f"class {node.name} has {length} lines (at most {MAX_CLASS_LINES})")
        if not isinstance(node, ast.ClassDef) and length > MAX_FUNCTION_LINES:
            where = f"{node.name} (line {node.lineno})"
            too_big.append(f"{where} has {length} lines (at most {MAX_FUNCTION_LINES})")
    assert not too_big, f"{path.relative_to(ROOT)}: " + "; ".join(too_big)


@pytest.mark.parametrize("path", _modules(PACKAGES), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_function_touches_another_class_s_private_fields(path: Path) -> None:
    """A method lives with its state: code reads ``other._x`` only when ``other`` is an instance
    of the class it is written in (``self``, ``cls``, or another of the same class). A module
    function that needs an object's private fields is a method in disguise; a helper class that
    does is a part of that class that should be handed what it needs."""
    touched = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {text}"
        for line, text in private_reaches(path)
    ]
    assert not touched, "private fields of another class:\n" + "\n".join(touched)


def test_the_private_check_sees_a_method_in_disguise(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "class A:\n"
        "    def __init__(self):\n        self._n = 0\n"
        "    def same(self, other: 'A'):\n        return other._n\n"
        "def outside(a: A):\n    return a._n\n",
        encoding="utf-8",
    )
    assert [text for _, text in private_reaches(source)] == ["a._n"]


def test_no_import_goes_round_in_a_circle() -> None:
    paths = _modules(PACKAGES)
    known = {_module_name(path) for path in paths}
    graph = {_module_name(path): _imported_modules(path, known) for path in paths}
    for name, imported in graph.items():
        graph[name] = {target for target in imported if target in graph and target != name}
    cycles = [component for component in _strongly_connected(graph) if len(component) > 1]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in cycles)


def test_the_cycle_check_sees_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [sorted(c) for c in _strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


# --- helpers -------------------------------------------------------------------------------------


# The names namedtuple gives every instance, and pyglet's own workaround (ui/quitting.py: its
# Cocoa window delegate's method table, which pyglet offers no public way to extend).
_PUBLIC_UNDERSCORES = {"_replace", "_asdict", "_fields", "_make", "_field_defaults", "_imp_table"}


def private_reaches(path: Path) -> list[tuple[int, str]]:
    """Every ``x._name`` inside a function where ``x`` is not ``self``, ``cls``, ``super()``, a
    module, or another instance of the enclosing class (one that class gives ``_name``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    modules = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, own: set[str], in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, own | _names_of_class(child), in_function)
                continue
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            reach = inside and isinstance(child, ast.Attribute) and _is_private(child.attr)
            if reach and not _may_reach(child, own, modules):
                found.append((child.lineno, ast.unparse(child)))
            visit(child, own, inside)

    visit(tree, set(), False)
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in _PUBLIC_UNDERSCORES


def _may_reach(attribute: ast.Attribute, own: set[str], modules: set[str]) -> bool:
    value = attribute.value
    if isinstance(value, ast.Name) and (value.id in ("self", "cls") or value.id in modules):
        return True
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    ):
        return True
    return attribute.attr in own


def _names_of_class(cls: ast.ClassDef) -> set[str]:
    """What a class gives its instances: ``self.x`` it assigns, its methods and class fields."""
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_modules(path: Path, known: set[str]) -> set[str]:
    """Every module this one imports, at the top or inside a function, as full dotted names."""
    package = (
        _module_name(path).rsplit(".", 1)[0] if path.stem != "__init__" else _module_name(path)
    )
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # "from package import module" imports that module; any other name comes from the
            # package (or module) itself.
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.add(submodule if submodule in known else module)
    return found


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative enough for a few hundred modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components
