"""The learner's path: which kernelgraph code an eager ``c = a * b; c.backward()`` runs.

Counts, after a warm-up, the distinct kernelgraph functions executed (each function's whole
source, docstring included, counted once) and the modules they live in.
``PYTHONPATH=$PWD python tests/learner_path.py`` prints the list (``--json``: as JSON);
tests/test_learner_path.py runs it in a fresh interpreter and bounds the figure.
"""

from __future__ import annotations

import inspect
import json
import sys

import kernelgraph as kg


def _program():
    a = kg.tensor(15.0, requires_grad=True)
    b = kg.tensor(20.0, requires_grad=True)
    c = a * b
    c.backward()


def measure() -> dict:
    """``{'lines', 'functions': {'module.function:line': lines}, 'modules'}``."""
    _program()  # warm-up: imports done, kernels compiled, caches filled
    codes = set()

    def tracer(frame, event, arg):
        if frame.f_globals.get("__name__", "").startswith("kernelgraph"):
            codes.add(frame.f_code)
        # (calls are enough: no line events)

    sys.settrace(tracer)
    try:
        _program()
    finally:
        sys.settrace(None)
    functions, blocks = {}, set()
    for code in sorted(codes, key=lambda c: len(c.co_qualname)):
        # (a comprehension's code is its function's source: counted once, with it)
        lines, start = inspect.getsourcelines(code)
        if (code.co_filename, start) not in blocks:
            blocks.add((code.co_filename, start))
            name = f"{inspect.getmodule(code).__name__}.{code.co_qualname}:{start}"
            functions[name] = len(lines)
    modules = sorted({inspect.getmodule(code).__name__ for code in codes})
    return {"lines": sum(functions.values()), "functions": functions, "modules": modules}


def report(found: dict) -> str:
    rows = [f"{n:4d}  {name}" for name, n in sorted(found["functions"].items())]
    return "\n".join([*rows, f"{found['lines']} lines in {len(found['functions'])} functions "
                      f"across {len(found['modules'])} modules"])


if __name__ == "__main__":
    found = measure()
    print(json.dumps(found) if "--json" in sys.argv else report(found))
