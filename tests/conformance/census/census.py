"""API census: which TF1 and PyTorch names public tutorials use, and which kernelgraph has.

The census reads the Python files and notebook code cells of the public tutorial, course and
example repositories listed in ``repositories.json`` (name and commit), resolves the names
they use statically with :mod:`ast` (nothing is executed), and counts each name once per
repository. Only names the real frameworks still have are kept: each one is looked up, by
``getattr`` along its dotted path, on real ``torch`` and ``tensorflow.compat.v1``.

Three steps, three commands (run from the repository root):

1. **Fetch** (manual, once): bring each repository of ``repositories.json`` onto the machine
   as a git directory, one per repository, at ``$CENSUS_MIRRORS/<owner>+<name>/repo`` (a
   bare directory, or a work tree's ``.git``). In this project's workplace the ``fetch``
   tool does exactly that into ``/work/.mirror``, the default; elsewhere
   ``git clone --bare https://github.com/<owner>/<name> <dir>/<owner>+<name>/repo`` and
   ``git -C <dir>/<owner>+<name>/repo fetch origin <commit>`` do the same. No code of those
   repositories is ever committed here: only their names, commits and the counts.
2. **Collect** (needs the mirrors and the real frameworks, so run it with a Python that has
   ``torch`` and ``tensorflow``)::

       python tests/conformance/census/census.py collect

   reads each repository at its recorded commit (``git show <commit>:<path>``) and writes
   ``names.json``: for every repository, the sorted TF1 names, PyTorch names and tensor
   methods it uses.
3. **Table** (needs only kernelgraph, no network, no mirrors)::

       python tests/conformance/census/census.py table

   looks every name up on kernelgraph's faces and writes ``table.csv`` (name, framework,
   repositories using it, kernelgraph status) and ``summary.md`` (coverage weighted by use,
   the most used missing names). ``tests/test_census.py`` runs this step in memory and checks
   the committed files agree, so the table cannot go stale silently.

What counts as a use:

- ``tf.*``: every dotted name reached from a name bound to ``tensorflow`` or
  ``tensorflow.compat.v1`` (``import tensorflow as tf``, ``import tensorflow.compat.v1 as
  tf``, ``from tensorflow.compat import v1``, ``from tensorflow import keras`` ...), written
  ``tf.a.b``. Only files that are TF1 code count: a file that names an API only TF1's graph
  mode has (``Session``, ``placeholder``, ``global_variables_initializer``, ``variable_scope``,
  ``tf.layers``, ``tf.contrib``, the ``tf.train`` optimizers, ``compat.v1``: ``TF1_MARKER``),
  so TensorFlow 2 and eager material in the same repositories is left out.
- ``torch.*``: every dotted name reached from a name bound to ``torch`` or one of its
  modules (``import torch.nn as nn``, ``import torch.nn.functional as F``, ``from torch
  import optim``, ``from torch.utils.data import DataLoader`` ...), written with its full
  module path (``torch.nn.functional.relu``). A name imported with ``from ... import`` counts
  as used.
- Tensor methods: in files that import torch, every call ``<expr>.name(...)`` whose receiver
  is not an imported module and whose ``name`` is a method of real ``torch.Tensor`` (so
  ``x.view(...)``, ``loss.backward()``); written ``Tensor.name``. This is a static guess
  (``a.reshape(...)`` on a NumPy array counts too), kept apart from the names; the names of
  ``dict``, ``list``, ``str``, ``set`` and ``tuple`` methods (``values``, ``index``,
  ``split``, ``sort``, ``count``) are left out, being far more often called on those.
- Modules themselves (``torch.nn``, ``tf.train``) and dunder names are not counted; a chain
  that does not resolve on the real framework (``tf.contrib.*``, TF1's
  ``tf.examples.tutorials``) is dropped.

kernelgraph's status is ``yes`` where the name resolves on kernelgraph's face the same way:
``kernelgraph.compat.v1`` for ``tf.*``; ``kernelgraph`` for ``torch.*`` (``torch.nn`` is
``kernelgraph.nn``, ``torch.utils.data`` is ``kernelgraph.utils.data``); ``kernelgraph.Tensor``
for tensor methods. Otherwise ``no``. ``differs`` marks the few names of ``DIFFERS`` that
resolve to something else, each shown by a test against the real framework's output
(``record_differs.py`` records it into ``differs.json``); the names of ``REFUSED`` resolve
only to refuse with an error, and count as ``no``; other differences of behaviour are not
told apart here (docs/compatibility.md lists them).
"""
from __future__ import annotations

import ast
import csv
import importlib
import io
import json
import os
import re
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORIES = HERE / "repositories.json"
NAMES = HERE / "names.json"
TABLE = HERE / "table.csv"
SUMMARY = HERE / "summary.md"
DEFAULT_MIRRORS = "/work/.mirror"

FRAMEWORKS = ("tf1", "torch", "tensor")
TITLES = {"tf1": "TF1 (`tf.*`)", "torch": "PyTorch (`torch.*`)",
          "tensor": "PyTorch tensor methods"}
# Names only TF1's graph mode has (TensorFlow 2 keeps them under ``tf.compat.v1`` alone): a
# file that uses one of them is TF1 code.
TF1_MARKER = re.compile(
    r"^tf\.(Session|InteractiveSession|placeholder\w*|global_variables_initializer"
    r"|initialize_all_variables|local_variables_initializer|get_variable|variable_scope"
    r"|disable_v2_behavior|disable_eager_execution|compat|layers|contrib|GraphKeys"
    r"|get_default_graph|reset_default_graph|train\.\w*Optimizer|train\.Saver)(\.|$)")
TOP_MISSING = 20
# Names that resolve on kernelgraph but mean something else there, each shown by a test
# against the real framework's recorded output (tests/test_census.py, differs.json). None
# now: ``torch.gather``, the last, is PyTorch's gather(input, dim, index) since kg.gather
# follows PyTorch (TF's spelling is kept; tf.gather in compat.v1 stays TF's).
DIFFERS: dict[tuple[str, str], str] = {}
# Names kernelgraph has only to refuse them with a clear error (the real framework does the
# work): they resolve, but a program calling them stops, so they count as missing.
REFUSED: dict[tuple[str, str], str] = {
    ("tf1", "tf.enable_eager_execution"): "the TF1 face is graph mode only; eager code is "
                                          "the PyTorch face's",
}
# ``d.values()``, ``names.index(x)``, ``line.split()``: a call to one of these is far more often
# on a dict, list or str than on a tensor, so it is not taken for a tensor method.
BUILTIN_METHODS = sorted({n for t in (dict, list, str, set, tuple) for n in dir(t)
                          if not n.startswith("_")})


# ----------------------------------------------------------------------------- parsing

_PY2_PRINT = re.compile(r"^(\s*)print\b(?!\s*[(=])\s*(.*?)\s*$")
_PY2_EXCEPT = re.compile(r"^(\s*except\s+[^,:]+),\s*(\w+)\s*:")


def _py2_to_3(source: str) -> str:
    """The two Python 2 forms old tutorials use most, rewritten so that ``ast`` parses them."""
    lines = []
    for line in source.splitlines():
        m = _PY2_PRINT.match(line)
        if m:
            line = f"{m.group(1)}print({m.group(2).rstrip(',')})"
        line = _PY2_EXCEPT.sub(r"\1 as \2:", line)
        lines.append(line)
    return "\n".join(lines)


def _strip_magics(source: str) -> str:
    """IPython magics and shell lines (``%matplotlib``, ``!pip``, ``x = !ls``) become ``pass``."""
    out = []
    for line in source.splitlines():
        s = line.strip()
        # A line may begin with ``%`` as the modulo of a continued expression: a magic is
        # ``%`` (or ``%%``) followed at once by its name.
        if (re.match(r"^(%%?[A-Za-z_]|![^=]|\?)", s) or re.match(r"^\w+\s*=\s*(%[A-Za-z_]|!)", s)
                or re.match(r"^[\w.]+\?{1,2}$", s)):
            out.append(line[: len(line) - len(line.lstrip())] + "pass")
        else:
            out.append(line)
    return "\n".join(out)


def parse_trees(path: str, text: str) -> tuple[list[ast.AST], int]:
    """The syntax trees of one file (one per notebook code cell) and how many were skipped."""
    if path.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError):
            return [], 1
        sources = []
        for cell in cells:
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                src = cell.get("source", "")
                sources.append("".join(src) if isinstance(src, list) else str(src))
        sources = [_strip_magics(s) for s in sources]
    else:
        sources = [text]
    trees, skipped = [], 0
    for src in sources:
        for attempt in (src, _py2_to_3(src)):
            try:
                trees.append(ast.parse(attempt))
                break
            except (SyntaxError, ValueError):
                continue
        else:
            skipped += 1
    return trees, skipped


# ----------------------------------------------------------------------------- resolving

def _canonical(module: str) -> str | None:
    """``tensorflow.compat.v1.x`` and ``tensorflow.x`` are ``tf.x``; ``torch.x`` stays."""
    for prefix in ("tensorflow.compat.v1", "tensorflow"):
        if module == prefix or module.startswith(prefix + "."):
            return "tf" + module[len(prefix):]
    if module == "torch" or module.startswith("torch."):
        return module
    return None


def _aliases(trees: list[ast.AST]) -> tuple[dict[str, str], set[str], set[str]]:
    """Names bound by the imports of a file: framework aliases, any module name, imported."""
    aliases: dict[str, str] = {}
    modules: set[str] = set()
    imported: set[str] = set()
    # ``import tensorflow.compat.v1 as tf`` says "TF1 code" by itself: record it as a name.
    for tree in trees:
        for node in ast.walk(tree):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(m and m.startswith("tensorflow.compat") for m in [module, *names]):
                imported.add("tf.compat")
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    bound = a.asname or a.name.split(".")[0]
                    modules.add(bound)
                    target = a.name if a.asname else a.name.split(".")[0]
                    canon = _canonical(target)
                    if canon:
                        aliases[bound] = canon
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                canon = _canonical(node.module)
                for a in node.names:
                    if a.name == "*":
                        continue
                    bound = a.asname or a.name
                    modules.add(bound)
                    if canon:
                        aliases[bound] = f"{canon}.{a.name}"
                        imported.add(f"{canon}.{a.name}")
    return aliases, modules, imported


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``['a', 'b', 'c']``; None when the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def file_uses(trees: list[ast.AST]) -> tuple[set[str], set[str], set[str]]:
    """The dotted framework names and the tensor-method candidates one file uses."""
    aliases, modules, names = _aliases(trees)
    names = set(names)
    methods: set[str] = set()
    for tree in trees:
        inner: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                chain = _chain(node)
                sub = node.value
                while isinstance(sub, ast.Attribute):
                    inner.add(id(sub))
                    sub = sub.value
                if chain and chain[0] in aliases:
                    names.add(".".join([aliases[chain[0]], *chain[1:]]))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id in aliases:
                    names.add(aliases[node.id])
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and not node.func.attr.startswith("__")):
                receiver = _chain(node.func.value)
                if receiver is None or receiver[0] not in modules:
                    methods.add(node.func.attr)
    names = {"tf" + n[len("tf.compat.v1"):] if n.startswith("tf.compat.v1.") else n
             for n in names}
    tf = {n for n in names if n.startswith("tf.") or n == "tf"}
    torch = {n for n in names if n.startswith("torch")}
    is_tf1 = any(TF1_MARKER.match(n) for n in tf)
    uses_torch = any(a.startswith("torch") for a in aliases.values())
    return (tf if is_tf1 else set()), torch, (methods if uses_torch else set())


def resolve(root: object, path: list[str]) -> object | None:
    """``getattr`` along ``path``; None where a step is missing (or raises).

    A submodule that its package does not import by itself (``torch.utils.tensorboard``) is
    imported, as ``from torch.utils.tensorboard import SummaryWriter`` would."""
    obj = root
    for part in path:
        try:
            obj = getattr(obj, part)
            continue
        except Exception:  # noqa: BLE001 - a property that raises is a missing name here
            pass
        if not isinstance(obj, types.ModuleType):
            return None
        try:
            obj = importlib.import_module(f"{obj.__name__}.{part}")
        except Exception:  # noqa: BLE001 - whatever stops the import, the name is missing
            return None
    return obj


def _trim(name: str) -> str:
    """A name without the dunder tail (``nn.Module.__init__`` is ``nn.Module``)."""
    parts = name.split(".")
    while parts and parts[-1].startswith("__"):
        parts.pop()
    return ".".join(parts)


# ----------------------------------------------------------------------------- collect

def _git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True,
                          capture_output=True).stdout


def _gitdir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def collect(mirrors: Path) -> dict:
    """Read every repository at its recorded commit; the real names each one uses."""
    import tensorflow.compat.v1 as real_tf
    import torch as real_torch

    repos = json.loads(REPOSITORIES.read_text())["repositories"]
    out = {}
    for entry in repos:
        gitdir = _gitdir(mirrors, entry["name"])
        commit = entry["commit"]
        paths = [p for p in _git(gitdir, "ls-tree", "-r", "--name-only", commit)
                 .decode().splitlines() if p.endswith((".py", ".ipynb"))]
        found = {fw: set() for fw in FRAMEWORKS}
        files = skipped = absent = 0
        for path in paths:
            try:
                text = _git(gitdir, "show", f"{commit}:{path}").decode("utf-8", "replace")
            except subprocess.CalledProcessError:
                # A snapshot may lack its largest files (big notebooks with outputs).
                absent += 1
                continue
            trees, bad = parse_trees(path, text)
            files += 1
            skipped += bad
            tf, torch, methods = file_uses(trees)
            found["tf1"] |= tf
            found["torch"] |= torch
            found["tensor"] |= methods
        kept = {}
        for fw in FRAMEWORKS:
            names = set()
            for name in found[fw]:
                name = _trim(name)
                if fw == "tensor":
                    ok = (callable(resolve(real_torch.Tensor, [name]))
                          and name not in BUILTIN_METHODS)
                    name = f"Tensor.{name}"
                else:
                    root, parts = ((real_tf, name.split(".")[1:]) if fw == "tf1"
                                   else (real_torch, name.split(".")[1:]))
                    obj = resolve(root, parts) if parts else None
                    ok = obj is not None and not isinstance(obj, types.ModuleType)
                if ok:
                    names.add(name)
            kept[fw] = sorted(names)
        out[entry["name"]] = {"commit": commit, "files": files, "absent_files": absent,
                              "skipped_sources": skipped,
                              **kept}
        print(f"{entry['name']}: {files} files ({absent} absent), {skipped} unparsable sources, "
              + ", ".join(f"{len(kept[fw])} {fw}" for fw in FRAMEWORKS), file=sys.stderr)
    return out


# ----------------------------------------------------------------------------- table

def kernelgraph_status(framework: str, name: str) -> str:
    """``yes`` where ``name`` resolves on kernelgraph's face for ``framework``, else ``no``;
    ``differs`` for the names of ``DIFFERS``, which resolve to something else."""
    kg = importlib.import_module("kernelgraph")
    if framework == "tf1":
        root, parts = importlib.import_module("kernelgraph.compat.v1"), name.split(".")[1:]
    elif framework == "torch":
        root, parts = kg, name.split(".")[1:]
    else:
        root, parts = kg.Tensor, name.split(".")[1:]
    if resolve(root, parts) is None or (framework, name) in REFUSED:
        return "no"
    return "differs" if (framework, name) in DIFFERS else "yes"


def table_rows(names: dict) -> list[dict]:
    """One row per (framework, name): how many repositories use it, kernelgraph's status."""
    rows = []
    for fw in FRAMEWORKS:
        counts = Counter(n for repo in names.values() for n in repo[fw])
        for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append({"name": name, "framework": fw, "repositories": count,
                         "kernelgraph": kernelgraph_status(fw, name)})
    return rows


def coverage(rows: list[dict], framework: str) -> tuple[float, int, int]:
    """Per cent of uses covered (each name weighted by its repositories), names, names yes."""
    mine = [r for r in rows if r["framework"] == framework]
    total = sum(r["repositories"] for r in mine)
    covered = sum(r["repositories"] for r in mine if r["kernelgraph"] == "yes")
    return (100.0 * covered / total if total else 0.0), len(mine), \
        sum(r["kernelgraph"] == "yes" for r in mine)


def render_table(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, ["name", "framework", "repositories", "kernelgraph"],
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def render_summary(names: dict, rows: list[dict]) -> str:
    users = {fw: sum(1 for repo in names.values() if repo[fw]) for fw in FRAMEWORKS}
    lines = ["# API census: summary", "",
             "Generated by `census.py table` from `names.json`; do not edit by hand.", "",
             f"{len(names)} repositories; {users['tf1']} with TF1 code, {users['torch']} with "
             "PyTorch code.", "",
             f"{sum(r['files'] for r in names.values())} Python files and notebooks read; "
             f"{sum(r['absent_files'] for r in names.values())} more are absent from the "
             f"snapshots (files of 4 MiB and more); "
             f"{sum(r['skipped_sources'] for r in names.values())} files or notebook cells do "
             "not parse (mostly exercise cells left for the learner to complete) and are "
             "skipped.", "",
             "| framework | names | names kernelgraph has | coverage weighted by use |",
             "| --- | --- | --- | --- |"]
    for fw in FRAMEWORKS:
        pct, n, yes = coverage(rows, fw)
        lines.append(f"| {TITLES[fw]} | {n} | {yes} | {pct:.1f} % |")
    differs = [r for r in rows if r["kernelgraph"] == "differs"]
    if differs:
        lines += ["", "Resolving but meaning something else (`differs`, not counted as covered): "
                  + "; ".join(f"`{r['name']}` ({r['repositories']}): "
                              f"{DIFFERS[r['framework'], r['name']]}" for r in differs) + "."]
    for fw in FRAMEWORKS:
        missing = [r for r in rows if r["framework"] == fw and r["kernelgraph"] == "no"]
        lines += ["", f"## Most used missing: {TITLES[fw]} (of {users[fw]} repositories)", "",
                  "| name | repositories |", "| --- | --- |"]
        lines += [f"| `{r['name']}` | {r['repositories']} |" for r in missing[:TOP_MISSING]]
    return "\n".join(lines) + "\n"


def build(names: dict) -> tuple[str, str]:
    """The table and the summary, as text, from the per-repository name sets."""
    rows = table_rows(names)
    return render_table(rows), render_summary(names, rows)


def main(argv: list[str]) -> int:
    if argv[:1] == ["collect"]:
        mirrors = Path(os.environ.get("CENSUS_MIRRORS", DEFAULT_MIRRORS))
        NAMES.write_text(json.dumps(collect(mirrors), indent=1, sort_keys=True) + "\n")
        return 0
    if argv[:1] == ["table"]:
        table, summary = build(json.loads(NAMES.read_text()))
        TABLE.write_text(table)
        SUMMARY.write_text(summary)
        return 0
    print("usage: census.py collect | table", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
