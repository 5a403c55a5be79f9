"""NumPy ufuncs compiled by numba and kept on disk whole, so a new process loads them in
milliseconds instead of compiling them again.

numba's own disk cache (``vectorize(cache=True)``) keeps only a ufunc's scalar function:
every process still builds and optimises the ufunc's loop around it with LLVM, and loading
anything through numba first loads numba's whole typing and lowering machinery. That made
up most of a warm first ``Session.run``. Here the loop and the function inside it are kept
together as machine code, one file per ufunc under :func:`cache_root`:

- the file name hashes what the code depends on: the scalar function's name and signature,
  the text of the file that defines it, numba's and llvmlite's versions and this machine's
  CPU (machine code for another CPU is never loaded);
- the file is one line of JSON (those facts again, the symbol names, the byte sizes and a
  SHA-256 of the bytes) followed by the object code and the LLVM bitcode numba links with;
  it is written to a temporary file and renamed, and read back without pickle;
- a file that is missing, stale, truncated or unreadable is compiled again, never trusted.

The code loaded is the code numba compiles for ``vectorize``: the same scalar function
compiled by numba's ufunc compiler, in the same loop, so the results are the same bits.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

import llvmlite
import llvmlite.binding as ll
import numba
import numpy as np
from numba import vectorize
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
from numba.np.numpy_support import as_dtype
from numba.np.ufunc import _internal, ufuncbuilder
from numba.np.ufunc.wrappers import build_ufunc_wrapper

FORMAT = 1
_FILE_HASHES: dict[str, str] = {}  # source file -> hash of its text, once per process


def cache_root() -> str:
    """kernelgraph's cache folder: ``KERNELGRAPH_CACHE``, else ``kernelgraph`` in the user's
    cache folder (``XDG_CACHE_HOME``, else ~/.cache)."""
    return os.environ.get("KERNELGRAPH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "kernelgraph")


def build(fn, sig, name: str | None = None) -> tuple[np.ufunc, str]:
    """``(ufunc, origin)``: the NumPy ufunc with one loop, for numba signature ``sig``
    (``float32(float32, float32)``), of the scalar function ``fn``; ``origin`` is
    ``"loaded from cache"`` or ``"compiled"`` (and then kept on disk when it can be).

    >>> from kernelgraph.kernels import cpu
    >>> add, origin = build(cpu._add, numba.float64(numba.float64, numba.float64))
    >>> add(np.arange(3.0), 0.5), origin in ("compiled", "loaded from cache")
    (array([0.5, 1.5, 2.5]), True)
    """
    name = name or fn.__name__
    facts = _facts(fn.__code__.co_filename, fn.__qualname__, sig)
    loaded = _read(_path(facts), facts)
    if loaded is not None:
        return _ufunc(name, sig, *loaded), "loaded from cache"
    try:
        with global_compiler_lock:
            dispatcher = ufuncbuilder.UFuncDispatcher(fn, locals={}, targetoptions={})
            cres, args, ret = ufuncbuilder._compile_element_wise_function(dispatcher, {}, sig)
            library, wrapper = _wrap(cres, ufuncbuilder._finalize_ufunc_signature(cres, args,
                                                                                   ret))
    except Exception:  # noqa: BLE001 - numba's internals moved: its own vectorize still works
        return vectorize([sig], cache=True)(fn).ufunc, "compiled"
    _write(_path(facts), facts, library, wrapper)
    return _ufunc(name, sig, library, wrapper), "compiled"


def lookup(source_file: str, qualname: str, sig, name: str) -> np.ufunc | None:
    """The ufunc of function ``qualname`` of ``source_file`` for ``sig`` if it is on disk
    (kept by :func:`keep`), else None: nothing is imported or compiled."""
    facts = _facts(source_file, qualname, sig)
    loaded = _read(_path(facts), facts)
    return None if loaded is None else _ufunc(name, sig, *loaded)


def keep(ufunc_maker, sig) -> None:
    """Put on disk the loop that numba's ``vectorize([sig], cache=True)`` compiled into the
    DUFunc ``ufunc_maker``, for :func:`lookup` in later processes (best effort: numba's
    internals may move, and a cache that cannot be written only costs a compile)."""
    try:
        fn = ufunc_maker._dispatcher.py_func
        cres = next(c for k, c in ufunc_maker._dispatcher.overloads.items()
                    if k.args == sig.args)
        facts = _facts(fn.__code__.co_filename, fn.__qualname__, sig)
        with global_compiler_lock:
            library, wrapper = _wrap(cres, cres.signature)
        _write(_path(facts), facts, library, wrapper)
    except Exception:  # noqa: BLE001, S110 - see the docstring
        pass


def _facts(source_file: str, qualname: str, sig) -> dict:
    if source_file not in _FILE_HASHES:
        try:
            with open(source_file, "rb") as f:
                _FILE_HASHES[source_file] = _hash(f.read())
        except OSError:  # no file to hash: nothing may be reused
            _FILE_HASHES[source_file] = "unknown-" + os.urandom(8).hex()
    return {"format": FORMAT, "function": qualname, "signature": str(sig),
            "source": _FILE_HASHES[source_file], "numba": numba.__version__,
            "llvmlite": llvmlite.__version__, "triple": ll.get_process_triple(),
            "cpu": ll.get_host_cpu_name(), "features": ll.get_host_cpu_features().flatten()}


def _path(facts: dict) -> str:
    return os.path.join(cache_root(), "ufuncs",
                        _hash(json.dumps(facts, sort_keys=True)) + ".ufunc")


def _hash(data) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()[:32]


def _wrap(cres, sig):
    """(library, wrapper symbol): numba's ufunc loop around the compiled scalar function
    ``cres`` (what ``vectorize`` builds), its machine code kept for :func:`_write`. The
    caller holds numba's compiler lock."""
    info = build_ufunc_wrapper(cres.library, cres.target_context, cres.fndesc.llvm_func_name,
                               sig, False, cres)
    info.library.enable_object_caching()
    info.library.get_pointer_to_function(info.name)  # finalises: compiles the loop
    return info.library, info.name


def _ufunc(name: str, sig, library, wrapper: str) -> np.ufunc:
    with global_compiler_lock:
        pointer = library.get_pointer_to_function(wrapper)
    types = [as_dtype(a).num for a in sig.args] + [as_dtype(sig.return_type).num]
    # The library stays alive as long as the ufunc that calls into its code.
    return _internal.fromfunc(name, f"kernelgraph's compiled loop of {name}", [int(pointer)],
                              [types], len(sig.args), 1, [None], [library],
                              _internal.PyUFunc_None)


def _write(path: str, facts: dict, library, wrapper: str) -> None:
    with global_compiler_lock:
        library_name, kind, (code, bitcode) = library.serialize_using_object_code()
    header = dict(facts, library=library_name, kind=kind, wrapper=wrapper,
                  sizes=[len(code), len(bitcode)], sha256=_hash(code + bitcode))
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(json.dumps(header).encode() + b"\n" + code + bitcode)
        os.replace(tmp, path)  # another process reads the whole file or none of it
    except OSError:
        pass  # a cache that cannot be written only costs the next process a compile


def _resolvable(bitcode: bytes) -> bool:
    """Whether every symbol the code uses from outside exists in this process now: LLVM
    ends the process over one it cannot resolve, so such a file is compiled again instead
    (numba registers its helpers as it loads; a fresh process may not have them all)."""
    module = ll.parse_bitcode(bitcode)
    outside = [f.name for f in module.functions if f.is_declaration]
    outside += [g.name for g in module.global_variables if g.is_declaration]
    return all(name.startswith("llvm.") or ll.address_of_symbol(name) for name in outside)


def _read(path: str, facts: dict):
    """``(library, wrapper symbol)`` from the file at ``path``, or None when it is absent
    or does not hold what ``facts`` describe, intact."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        line, _, rest = data.partition(b"\n")
        header = json.loads(line)
        if any(header.get(k) != v for k, v in facts.items()) or header.get("kind") != "object":
            return None
        n_code, n_bitcode = (int(n) for n in header["sizes"])
        if len(rest) != n_code + n_bitcode or _hash(rest) != header["sha256"]:
            return None
        code, bitcode = rest[:n_code], rest[n_code:]
        if not _resolvable(bitcode):
            return None
        state = (str(header["library"]), "object", (code, bitcode))
        with global_compiler_lock:
            library = cpu_target.target_context.codegen().unserialize_library(state)
        return library, str(header["wrapper"])
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None
