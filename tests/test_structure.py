"""The house rules that keep kernelgraph readable, checked on the source itself.

- **Floors**: every module sits on a floor (DESIGN.md), and imports only its own floor or
  lower ones, whether at module level or inside a function. Where a lower floor must call up
  (a display hook, ``Node.eval``, a front-end for an op), the higher module registers itself.
- **Few late imports**: at most ``MAX_LATE_IMPORTS`` imports of kernelgraph modules inside
  functions in the whole package, each with a comment saying why.
- **Meaning by type, not by caller**: no module reads stack frames except the few named in
  ``FRAME_READERS``, each for a place in the user's source (a node's line, a warning's, an
  op card's module) or an error's or display's words — never to decide what an object means.
- **One sitting's read**: no module over ``MAX_LINES`` lines (Python and the extension's
  TypeScript), the benchmark catalogue excepted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "kernelgraph"
MAX_LINES = 600
MAX_LATE_IMPORTS = 20
LONGER_ALLOWED = {"kernelgraph/bench/cases.py"}  # the benchmark catalogue: one case a screen

# Floor of each top-level module or subpackage (dotted, below ``kernelgraph``); a module not
# listed sits on the floor of its nearest listed parent.
FLOORS = {
    "dtypes": 0, "devices": 0, "errors": 0, "trace": 0, "shapes": 0, "graph": 0, "nest": 0,
    "version": 0,
    "codegen": 0,
    "kernels": 1,
    "ops": 2,
    "autodiff": 3,
    "eager": 4, "autograd": 4, "operators": 4, "static.build": 4, "static.variables": 4,
    "static.gradients": 4, "static.bindings": 4, "static.control_flow": 4,
    "static": 5, "jit": 5, "autobatching": 5,
    "nn": 6, "optim": 6, "data": 6, "checkpoint": 6, "utils": 6,
    "distributed": 6,  # the Dask pool runs sessions' sub-plans, below the public face
    "": 7,  # the package's public face, compat, widgets, bench, demo
}


def floor(module: str) -> int:
    """The floor of ``kernelgraph.<module>``: its own entry, else its nearest parent's."""
    name = module.removeprefix("kernelgraph").lstrip(".")
    while True:
        if name in FLOORS:
            return FLOORS[name]
        # static.control_flow_run, static.control_flow.api: the control_flow family
        for key, value in FLOORS.items():
            if key and "." in key and name.startswith(key):
                return value
        if not name:
            return FLOORS[""]
        name = name.rpartition(".")[0]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path, node) -> list[str]:
    """The kernelgraph modules an import statement names (``from . import x`` names x)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            parts = package.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1])
            target = base + ("." + node.module if node.module else "")
        else:
            target = node.module or ""
        names = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target
                 for a in node.names]
    result = []
    for name in names:
        if not name.startswith("kernelgraph"):
            continue
        while name not in MODULES and "." in name:
            name = name.rpartition(".")[0]
        result.append(name)
    return result


def _imports():
    """(module, path, line, imported module, inside a function) for every import."""
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        late = {id(n) for fn in ast.walk(tree)
                if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
                for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _imported(module, path, node):
                    yield module, path, node.lineno, target, id(node) in late


IMPORTS = list(_imports())


def test_the_checker_sees_the_package():
    assert len(MODULES) > 50
    assert any(target == "kernelgraph.ops.registry" for *_, target, _ in IMPORTS)
    assert floor("kernelgraph.kernels.cuda.elementwise") == 1
    assert floor("kernelgraph.static.session") == 5
    assert floor("kernelgraph.static.control_flow") == 4
    assert floor("kernelgraph.widgets.svg") == 7


def test_no_module_imports_a_floor_above_its_own():
    upward = [f"{path.relative_to(REPO)}:{line}: {module} (floor {floor(module)}) imports "
              f"{target} (floor {floor(target)})"
              for module, path, line, target, _ in IMPORTS if floor(target) > floor(module)]
    assert not upward, "imports that go up a floor:\n" + "\n".join(upward)


def test_late_imports_are_few_and_explained():
    late = [(path, line) for _, path, line, _, inside in IMPORTS if inside]
    unique = sorted(set(late))
    assert len(unique) <= MAX_LATE_IMPORTS, (
        f"{len(unique)} imports of kernelgraph modules inside functions (at most "
        f"{MAX_LATE_IMPORTS}):\n" + "\n".join(f"{p.relative_to(REPO)}:{n}" for p, n in unique))
    unexplained = []
    for path, line in unique:
        lines = path.read_text(encoding="utf-8").splitlines()
        here, above = lines[line - 1], lines[line - 2] if line >= 2 else ""
        if "#" not in here and not above.strip().startswith("#"):
            unexplained.append(f"{path.relative_to(REPO)}:{line}: {here.strip()}")
    assert not unexplained, ("an import inside a function needs a comment saying why "
                             "(on its line or the line above):\n" + "\n".join(unexplained))


SOURCES = sorted([*PACKAGE.rglob("*.py"), *(REPO / "extension" / "src").rglob("*.ts")])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_module_fits_one_sitting(path):
    relative = str(path.relative_to(REPO))
    if relative in LONGER_ALLOWED:
        return
    count = len(path.read_text(encoding="utf-8").splitlines())
    assert count <= MAX_LINES, (f"{relative} has {count} lines (at most {MAX_LINES}): split it "
                                "along the ideas it holds")


# -- meaning by type ---------------------------------------------------------------------------
#: The functions that may read stack frames, and why. Nothing else may: what a tensor means
#: (TF1's 'x:0' or kernelgraph's 'x') follows from its type, never from who is asking.
FRAME_READERS = {
    ("kernelgraph.graph", "user_location"): "the user's line that made a node",
    ("kernelgraph.ops.registry", "define"): "the module an op card is defined in",
    ("kernelgraph.jit", "_warn"): "the user's line a TraceWarning is attributed to",
    ("kernelgraph.static.plan", "node_error"): "the failing plan's values, for the error message",
    ("kernelgraph.widgets.display", "caller_names"): "the user's names, to label eager leaves",
}
FRAME_ATTRIBUTES = {"_getframe", "currentframe", "f_globals", "f_locals", "f_back", "stack",
                    "getouterframes", "getframeinfo"}


def _frame_reads():
    """(module, enclosing function, line, what) for every read of a stack frame."""
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree)
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else (
                node.id if isinstance(node, ast.Name) else None)
            if name not in FRAME_ATTRIBUTES or (name == "stack" and not (
                    isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "inspect")):
                continue
            around = [f for f in functions
                      if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
            inner = max(around, key=lambda f: f.lineno).name if around else "<module>"
            yield module, inner, node.lineno, name


def test_the_frame_scan_finds_frame_reads():
    found = {(m, f) for m, f, _, _ in _frame_reads()}
    assert ("kernelgraph.graph", "user_location") in found


def test_no_module_reads_stack_frames_to_decide_meaning():
    stray = [f"{module} ({function}, line {line}): {what}"
             for module, function, line, what in _frame_reads()
             if (module, function) not in FRAME_READERS]
    assert not stray, ("stack frames read outside FRAME_READERS (what an object means must "
                       "follow from its type):\n" + "\n".join(stray))

