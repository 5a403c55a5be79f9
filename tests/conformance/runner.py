"""Run a conformance program with only its imports swapped, and compare printed outputs.

Shared by the test (``test_conformance.py``, on kernelgraph) and the record script
(``tests/recorded/record_conformance.py``, on real PyTorch and TensorFlow). Plain Python:
neither pytest nor any framework is imported here.

The import rule (docs/compatibility.md): only ``import`` statements change, found with
:mod:`ast` and replaced in place, nothing else in the program is touched.

- for kernelgraph: ``torch`` and ``torch.<sub>`` become ``kernelgraph`` and
  ``kernelgraph.<sub>``; ``tensorflow``, ``tensorflow.compat.v1`` (and their submodules) become
  ``kernelgraph.compat.v1``; ``tensorflow.compat`` becomes ``kernelgraph.compat``.
- for the reference run: TF 1.x's ``import tensorflow as tf`` becomes TF 2's
  ``import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()``; everything else stays.

>>> print(rewrite_imports("import torch.nn as nn\\nfrom torch import optim\\n", "kernelgraph"))
import kernelgraph.nn as nn
from kernelgraph import optim
<BLANKLINE>
>>> print(rewrite_imports("import tensorflow as tf", "kernelgraph"))
import kernelgraph.compat.v1 as tf
>>> compare("loss 1.00001 [2.5]", "loss 1.0 [2.5000]") is None
True
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"

# Tolerances of the comparison (documented in docs/compatibility.md).
RTOL = 1e-4   # the "within 1e-4 relative"
ATOL = 1e-5   # values near 0 (e.g. 3e-9 against 0 after float32 cancellation)


# -- the import swap ---------------------------------------------------------------------------

def _kg_module(name: str) -> str | None:
    """kernelgraph's module for a framework module name, or None if it is not a framework's."""
    if name == "torch" or name.startswith("torch."):
        return "kernelgraph" + name[len("torch"):]
    if name == "tensorflow.compat":
        return "kernelgraph.compat"
    for prefix in ("tensorflow.compat.v1", "tensorflow"):
        if name == prefix or name.startswith(prefix + "."):
            return "kernelgraph.compat.v1" + name[len(prefix):]
    return None


def _swap_import(node: ast.Import, target: str) -> str | None:
    parts, changed = [], False
    for alias in node.names:
        name, bound = alias.name, alias.asname
        if target == "reference":
            if name == "tensorflow" and bound in (None, "tf"):
                bound = bound or "tensorflow"
                parts.append(f"import tensorflow.compat.v1 as {bound}; "
                             f"{bound}.disable_v2_behavior()")
                changed = True
            else:
                parts.append(ast.unparse(ast.Import(names=[alias])))
            continue
        new = _kg_module(name)
        if new is None:
            parts.append(ast.unparse(ast.Import(names=[alias])))
        elif bound:
            parts.append(f"import {new} as {bound}")
            changed = True
        else:
            # `import torch.nn` binds `torch`: import the submodule, then bind the top name
            top = name.split(".")[0]
            top_new = _kg_module(top)
            parts.append(f"import {new}" if new != top_new else "")
            parts.append(f"import {top_new} as {top}")
            changed = True
    return "; ".join(p for p in parts if p) if changed else None


def _swap_from(node: ast.ImportFrom, target: str) -> str | None:
    if target == "reference" or node.level or node.module is None:
        return None
    new = _kg_module(node.module)
    if new is None:
        return None
    return ast.unparse(ast.ImportFrom(module=new, names=node.names, level=0))


def rewrite_imports(source: str, target: str = "kernelgraph") -> str:
    """``source`` with its import statements swapped for ``target`` ("kernelgraph" or
    "reference"); every other character is left as it was."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            text = _swap_import(node, target)
        elif isinstance(node, ast.ImportFrom):
            text = _swap_from(node, target)
        else:
            continue
        if text is not None:
            begin = starts[node.lineno - 1] + _byte_col(lines[node.lineno - 1], node.col_offset)
            end = starts[node.end_lineno - 1] + _byte_col(lines[node.end_lineno - 1],
                                                          node.end_col_offset)
            edits.append((begin, end, text))
    for begin, end, text in sorted(edits, reverse=True):
        source = source[:begin] + text + source[end:]
    return source


def _byte_col(line: str, col: int) -> int:
    """ast's col_offset counts UTF-8 bytes; the character index in ``line``."""
    return len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


# -- running a program --------------------------------------------------------------------------

# The runner a program is executed by: its stdout is the program's; an exception it raises is
# written as JSON to the file named by the second argument, and its traceback goes to stderr.
_WRAPPER = """
import json, runpy, sys, traceback
path, errfile = sys.argv[1], sys.argv[2]
sys.argv = [path]
try:
    runpy.run_path(path, run_name="__main__")
except BaseException as e:
    sys.stdout.flush()
    traceback.print_exc()
    with open(errfile, "w", encoding="utf-8") as f:
        json.dump({"type": type(e).__name__, "message": str(e)}, f)
    sys.exit(1)
"""


def run_program(name: str, target: str, python: str = sys.executable,
                env: dict | None = None, timeout: float = 300.0) -> dict:
    """Run ``programs/<name>.py`` with its imports swapped for ``target`` in a fresh
    process. Returns ``{"stdout", "stderr", "error", "source"}``; ``error`` is None or
    ``{"type", "message"}`` of the exception the program raised."""
    source = rewrite_imports((PROGRAMS / f"{name}.py").read_text(encoding="utf-8"), target)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        errfile = Path(tmp) / "error.json"
        try:
            done = subprocess.run([python, "-c", _WRAPPER, str(path), str(errfile)],
                                  capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, **(env or {})}, cwd=tmp)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return {"stdout": out, "stderr": f"timed out after {timeout:.0f} s",
                    "error": {"type": "Timeout", "message": f"ran over {timeout:.0f} s"},
                    "source": source}
        error = None
        if errfile.exists():
            error = json.loads(errfile.read_text(encoding="utf-8"))
        elif done.returncode != 0:
            error = {"type": "Crash", "message": f"exit status {done.returncode}"}
        return {"stdout": done.stdout, "stderr": done.stderr, "error": error, "source": source}


def program_names() -> list[str]:
    """The conformance programs, by file name without ``.py``."""
    return sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.name.startswith("_"))


# -- comparing outputs --------------------------------------------------------------------------

# A number standing on its own (not the 32 of float32 or the 0 of AddBackward0).
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
                     r"|nan|inf)(?![\w])")


def tokens(text: str) -> list[tuple[str, object, int]]:
    """``text`` as alternating ("text", chars, line) and ("num", token, line) items; the text
    between numbers keeps no whitespace (spacing and line breaks are not compared)."""
    out, pos = [], 0
    for m in _NUMBER.finditer(text):
        out.append(("text", re.sub(r"\s+", "", text[pos:m.start()]),
                    text.count("\n", 0, pos) + 1))
        out.append(("num", m.group(), text.count("\n", 0, m.start()) + 1))
        pos = m.end()
    out.append(("text", re.sub(r"\s+", "", text[pos:]), text.count("\n", 0, pos) + 1))
    return out


def _decimals(tok: str) -> int | None:
    """Digits after the point of a fixed-notation number; None for other forms."""
    if "e" in tok.lower() or "." not in tok or tok.lower().endswith(("nan", "inf")):
        return None
    return len(tok.split(".")[1])


def numbers_close(expected: str, actual: str) -> bool:
    """Equal within RTOL relative + ATOL absolute; or, both printed in fixed notation with
    the same 4 or more decimals (PyTorch's 4), one unit apart in the last printed digit (a
    value on a rounding boundary)."""
    a, b = float(expected), float(actual)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    if abs(a - b) <= RTOL * max(abs(a), abs(b)) + ATOL:
        return True
    d = _decimals(expected)
    return d is not None and d >= 4 and d == _decimals(actual) and abs(a - b) <= 1.01 * 10 ** -d


def _line(text: str, n: int) -> str:
    lines = text.splitlines() or [""]
    return lines[min(n, len(lines)) - 1]


# PyTorch prints a dtype as ``torch.float32``; kernelgraph's dtypes are NumPy's and print
# ``float32`` (docs/compatibility.md): a dtype's name is compared without the prefix.
_TORCH_DTYPE = re.compile(r"\btorch\.(float16|float32|float64|int8|int16|int32|int64|uint8|bool)\b")


def compare(expected: str, actual: str) -> str | None:
    """None when ``actual`` prints the same as ``expected`` (numbers within tolerance, the
    text between them equal but for whitespace and PyTorch's ``torch.`` before a dtype's
    name); otherwise what differs first, with the line from each output."""
    expected, actual = _TORCH_DTYPE.sub(r"\1", expected), _TORCH_DTYPE.sub(r"\1", actual)
    te, ta = tokens(expected), tokens(actual)
    for (ke, ve, le), (ka, va, la) in zip(te, ta):
        if ke != ka:
            break
        same = ve == va if ke == "text" else numbers_close(ve, va)
        if not same:
            what = "number" if ke == "num" else "text"
            return (f"first {what} differs: expected {ve!r}, kernelgraph printed {va!r}\n"
                    f"  expected line {le}: {_line(expected, le)}\n"
                    f"  kernelgraph line {la}: {_line(actual, la)}")
    if len(te) == len(ta) and all(k == a for (k, _, _), (a, _, _) in zip(te, ta)):
        return None
    n = min(len(te), len(ta))
    le, la = (te[n - 1][2] if n else 1), (ta[n - 1][2] if n else 1)
    return (f"outputs differ in length or structure after {n} tokens "
            f"(expected {len(te)}, kernelgraph {len(ta)})\n"
            f"  expected line {le}: {_line(expected, le)}\n"
            f"  kernelgraph line {la}: {_line(actual, la)}")
