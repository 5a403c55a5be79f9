"""Checkpoints: ``kg.save(path, obj)`` and ``kg.load(path, into=None)``, in both modes.

What can be saved, and under which names:

- a ``kg.nn.Module``: its parameters by ``named_parameters()`` name (``'0.weight'``), as
  PyTorch's ``state_dict`` names them;
- a dict ``{name: tensor or array}``: those names;
- a ``kg.Session``: every variable of its graph by variable name (``'dense/weight'``), read
  from that session, as TF1's ``tf.train.Saver`` does;
- a Session with ``module=model``: the session's values of the model's variables, under the
  model's *parameter* names, so a model trained as a graph can be loaded eagerly.

``kg.load(path, into=...)`` restores a Module, a dict of tensors/arrays, or a Session (with
``module=model`` again to read parameter names into that model's variables), so the two
modes share checkpoints both ways::

    kg.save("model.npz", model)                    # eager training
    kg.load("model.npz", into=sess, module=model)  # the same model run as a graph
    kg.save("model.npz", sess, module=model)       # static training
    kg.load("model.npz", into=model)               # back to eager

The file is an ordinary ``.npz`` archive (``np.load`` reads it) of one array per name and a
``__kernelgraph__`` entry: a JSON string with the format version, the kind of object saved,
and each array's name, shape, dtype and SHA-256 digest. Saving writes a temporary file next
to the target, fsyncs it and renames it over the target (``os.replace``), so a crash leaves
the old checkpoint whole; the temporary file a killed save leaves behind is removed by the
next save to the same path (never one that a save in progress holds). A path that is a
symbolic link is written through, as ``open()`` and ``torch.save`` write: the file the link
ends at is replaced (created, if the link dangles) and the link stays. Each name is stored
as a zip member name, so it must be valid Unicode of at most 65531 bytes in UTF-8 (checked
before anything is written). Loading never unpickles (``allow_pickle=False``) and checks every
array against the marker and against the target *before* it writes any value, so a bad
file raises :class:`~kernelgraph.errors.CheckpointError` and changes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
import zipfile
from collections.abc import Mapping

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: see _remove_if_abandoned
    fcntl = None

from . import devices
from .eager import Tensor
from .eager.inplace import mark_written
from .errors import CheckpointError, FailedPreconditionError, shown
from .graph import Node
from .nn.module import Module
from .static.session import Session
from .version import __version__

FORMAT = "kernelgraph-checkpoint"
VERSION = 1
MARKER = "__kernelgraph__"
_KINDS = ("module", "dict", "session")
# A zip member's name is at most 65535 bytes (its length is a 16-bit field of the zip
# headers), and each name is stored as '<name>.npy' in UTF-8.
MAX_NAME_BYTES = 0xFFFF - len(".npy")


# -- what an object holds ------------------------------------------------------------------------
def _is_module(obj) -> bool:
    return isinstance(obj, Module)


def _is_session(obj) -> bool:
    return isinstance(obj, Session)


def _host_copy(value, name: str) -> np.ndarray:
    """A host copy of a tensor's or an array's values, refusing what would need pickle."""
    if isinstance(value, Tensor):
        arr = devices.to_numpy(value._array)
    elif isinstance(value, Node):
        raise TypeError(f"cannot save '{name}': it is the graph node '{value.name}', which "
                        "holds no value outside a Session; save the Session instead "
                        "(kg.save(path, sess))")
    elif devices.is_cuda_array(value):
        arr = devices.to_numpy(value)
    else:
        arr = np.asarray(value)
    if arr.dtype.hasobject or arr.dtype.kind not in "biufc":
        raise TypeError(f"cannot save '{name}': dtype {arr.dtype} is not a numeric array "
                        "(checkpoints hold numbers only, never pickled objects)")
    return np.array(arr, copy=True, order="C")


def _session_value(sess, var) -> np.ndarray:
    if sess._closed:
        raise RuntimeError("Attempted to use a closed Session.")
    try:
        value = sess._store[var]  # a session keeps each variable's value by node
    except KeyError:
        raise FailedPreconditionError(
            f"Attempting to save uninitialized value {var.name}\n"
            "  (run kg.global_variables_initializer() first)", node=var) from None
    return np.array(devices.to_numpy(value), copy=True, order="C")


def _module_variables(module, graph) -> list:
    """``(parameter name, variable)`` pairs of ``module`` in ``graph``: the public
    ``variables(graph)`` lists them in ``named_parameters()`` order."""
    names = [name for name, _ in module.named_parameters()]
    variables = module.variables(graph)
    if len(variables) != len(names):
        raise CheckpointError(
            f"{type(module).__name__} has {len(names)} parameters but {len(variables)} "
            f"variables in the session's graph; cannot pair them by name")
    return list(zip(names, variables))


def _collect(obj, module) -> tuple[str, dict[str, np.ndarray], str]:
    """(kind, {name: host array}, class name) of what ``save`` writes for ``obj``."""
    if module is not None and not _is_module(module):
        raise TypeError(f"module= must be a kg.nn.Module, got {type(module).__name__}")
    if _is_session(obj):
        # a session on a Dask pool keeps its variables on their workers
        if getattr(obj, "_remote", None) is not None and not obj._closed:
            obj._remote.pull_variables()  # every variable, gathered into obj._store
        if module is None:
            return "session", {v.name: _session_value(obj, v) for v in obj.graph.variables}, \
                "Session"
        return "module", {name: _session_value(obj, v)
                          for name, v in _module_variables(module, obj.graph)}, \
            type(module).__name__
    if module is not None:
        raise TypeError("module= goes with a Session (save the session's values of the "
                        f"module's variables); got a {type(obj).__name__} to save")
    if _is_module(obj):
        return "module", {name: _host_copy(p, name) for name, p in obj.named_parameters()}, \
            type(obj).__name__
    if isinstance(obj, Mapping):
        return "dict", {_check_name(k): _host_copy(v, k) for k, v in obj.items()}, "dict"
    raise TypeError(f"kg.save saves a kg.nn.Module, a dict of tensors/arrays or a kg.Session;"
                    f" got {type(obj).__name__}")


def _check_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"checkpoint names must be non-empty strings, got {shown(name)}")
    if name.startswith(MARKER) or "\x00" in name:
        raise ValueError(f"checkpoint name {shown(name)} is reserved or invalid")
    return name


def _check_stored_name(name: str) -> None:
    """A name the .npz format can hold: valid UTF-8 text of at most MAX_NAME_BYTES bytes."""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"checkpoint name {shown(name)} cannot be saved: it is not valid "
                         "Unicode text (it holds a lone surrogate), and names are stored "
                         "as UTF-8") from None
    if size > MAX_NAME_BYTES:
        raise ValueError(f"checkpoint name {shown(name, 60)} is too long to save: {size} "
                         f"bytes in UTF-8, and the .npz format holds names of at most "
                         f"{MAX_NAME_BYTES} bytes; use a shorter name")


def _digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr).view(np.uint8).data).hexdigest()


def _describe(arr) -> str:
    """'(3, 2) float32' for an array or a (shape, dtype) pair; '?' for an unknown dim."""
    shape, dtype = (arr.shape, arr.dtype) if isinstance(arr, np.ndarray) else arr
    dims = ["?" if d is None else str(d) for d in shape]
    text = f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
    return f"{text} {np.dtype(dtype).name}"


# -- saving --------------------------------------------------------------------------------------
def save(path: str | os.PathLike, obj, module=None) -> None:
    """Write ``obj`` (a Module, a dict of tensors/arrays, or a Session) to ``path``
    atomically: the old file stays whole until the new one is complete.

    ``module=`` with a Session saves that session's values of the module's variables under
    the module's parameter names (see the module docstring).

    >>> import kernelgraph as kg, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
    >>> kg.save(path, {"w": kg.tensor([1.0, 2.0]), "step": np.int64(7)})
    >>> sorted(kg.load(path).items())
    [('step', array(7)), ('w', array([1., 2.], dtype=float32))]
    """
    if _is_path(obj) and not _is_path(path):  # PyTorch's order: torch.save(obj, path)
        path, obj = obj, path
    kind, arrays, cls = _collect(obj, module)
    for name in arrays:  # before anything is written
        _check_stored_name(name)
    meta = {"format": FORMAT, "version": VERSION, "kind": kind, "class": cls,
            "kernelgraph": __version__,
            "entries": [{"name": n, "shape": list(a.shape), "dtype": a.dtype.str,
                         "sha256": _digest(a)} for n, a in arrays.items()]}
    _write_atomic(os.fspath(path), arrays, json.dumps(meta))


def _file_mode(path: str) -> int:
    """The permission bits the new file gets: the old file's, else what open() would give."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)  # reading the umask means setting it; put it straight back
        os.umask(umask)
        return 0o666 & ~umask


# -- temporary files ------------------------------------------------------------------------------
# A save writes '.<target name>.kgsave-XXXXXXXX.tmp' next to the target and holds an exclusive
# flock on it until it has been renamed over the target. A save killed on the way (SIGKILL,
# power loss) leaves that file behind, unlocked: the kernel drops a dead process's locks. So
# the next save to the same target removes the temporary files of that target that it can
# lock -- never one a live save still holds, in this process or another, and never anything
# named after another target.
_TEMP_TAG = ".kgsave-"


def _temp_name_pattern(base: str) -> re.Pattern:
    return re.compile(re.escape(f".{base}{_TEMP_TAG}") + r"[a-z0-9_]{8}\.tmp\Z")


def _remove_stale_temps(directory: str, base: str) -> None:
    pattern = _temp_name_pattern(base)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if pattern.match(name):
            with contextlib.suppress(OSError):  # gone meanwhile, or not ours to open
                _remove_if_abandoned(os.path.join(directory, name))


def _remove_if_abandoned(tmp: str) -> None:
    if fcntl is None:
        # Windows: a file that another process has open (a save in progress) cannot be
        # deleted, so the attempt fails there and removes only abandoned files.
        os.unlink(tmp)
        return
    fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a save in progress holds it
        if os.path.samestat(st, os.lstat(tmp)):
            os.unlink(tmp)
    finally:
        os.close(fd)


def _locked_temp(directory: str, base: str) -> tuple[int, str]:
    """A new temporary file next to the target, flocked: (its descriptor, its path)."""
    while True:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}{_TEMP_TAG}", suffix=".tmp",
                                   dir=directory)
        if fcntl is None:
            return fd, tmp
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            kept = os.path.samestat(os.fstat(fd), os.stat(tmp))
        except OSError:
            kept = False
        if kept:
            return fd, tmp
        # Another save's clean-up removed it between mkstemp and flock (it was not locked
        # yet, so it looked abandoned): make another.
        os.close(fd)


def _write_atomic(path: str, arrays: dict[str, np.ndarray], meta: str) -> None:
    # Through symbolic links, as open() and torch.save write: the rename replaces the file
    # the links end at (created if the last link dangles) and the links stay.
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    base = os.path.basename(path)
    mode = _file_mode(path)
    _remove_stale_temps(directory, base)
    # In the target's directory, so that os.replace is a rename within one file system.
    fd, tmp = _locked_temp(directory, base)
    try:
        with os.fdopen(fd, "wb", closefd=False) as f:  # fd (and its lock) outlives f
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                # np.savez's layout, written by hand: np.savez(file, **arrays) would take an
                # array named 'file' or 'allow_pickle' for its own argument.
                entries = [(MARKER, np.array(meta)), *arrays.items()]
                for name, arr in entries:
                    with zf.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, arr, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the name points at it
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)  # releases the lock, once the file has its final name
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# -- reading -------------------------------------------------------------------------------------
def _read(path: str) -> tuple[dict, dict[str, np.ndarray]]:
    """(metadata, arrays) of a checkpoint, every array checked against the metadata."""
    try:
        npz = np.load(path, allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as e:  # noqa: BLE001 - any reason it is not a readable .npz archive
        raise CheckpointError(f"'{path}' is not a kernelgraph checkpoint, or is truncated: "
                              f"cannot read it as an .npz archive ({type(e).__name__}: "
                              f"{e})") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise CheckpointError(f"'{path}' is a single .npy array, not a kernelgraph checkpoint "
                              f"(an .npz archive with a '{MARKER}' entry)")
    with npz:
        files = list(npz.files)
        if MARKER not in files:
            raise CheckpointError(f"'{path}' is an .npz archive but not a kernelgraph "
                                  f"checkpoint: no '{MARKER}' entry (it holds "
                                  f"{_names(files)})")
        try:
            meta = _parse_marker(npz[MARKER])
            arrays = {name: npz[name] for name in files if name != MARKER}
        except CheckpointError as e:
            raise CheckpointError(f"'{path}': {e}") from None
        except Exception as e:  # noqa: BLE001 - a damaged member, or one that needs pickle
            raise CheckpointError(f"'{path}' is damaged or holds something other than "
                                  f"numeric arrays ({type(e).__name__}: {e})") from None
    _check_contents(path, meta, arrays)
    return meta, arrays


def _parse_marker(value: np.ndarray) -> dict:
    if value.dtype.kind != "U" or value.size != 1:
        raise CheckpointError(f"the '{MARKER}' entry must be one JSON string, found an array "
                              f"{_describe(value)}")
    try:
        meta = json.loads(value.item())
    except ValueError as e:
        raise CheckpointError(f"the '{MARKER}' entry is not valid JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"the '{MARKER}' entry does not describe a {FORMAT}")
    version = meta.get("version")
    if not isinstance(version, int) or version < 1:
        raise CheckpointError(f"format version {shown(version)} is not a valid version")
    if version > VERSION:
        raise CheckpointError(f"written in checkpoint format version {version} by a newer "
                              f"kernelgraph; this one reads version {VERSION} or older")
    entries = meta.get("entries")
    if meta.get("kind") not in _KINDS or not isinstance(entries, list) or not all(
            isinstance(e, dict) and {"name", "shape", "dtype", "sha256"} <= e.keys()
            for e in entries):
        raise CheckpointError(f"the '{MARKER}' entry lacks its kind or its list of entries")
    return meta


def _check_contents(path: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """The arrays are exactly those the marker lists, with its shapes, dtypes and digests."""
    listed = {e["name"]: e for e in meta["entries"]}
    problems = []
    if missing := [n for n in listed if n not in arrays]:
        problems.append(f"the marker lists {_names(missing)}, which the file does not hold")
    if extra := [n for n in arrays if n not in listed]:
        problems.append(f"the file holds {_names(extra)}, which the marker does not list")
    for name, e in listed.items():
        arr = arrays.get(name)
        if arr is None:
            continue
        try:
            want = (tuple(e["shape"]), np.dtype(e["dtype"]))
        except (TypeError, ValueError):
            problems.append(f"'{name}': the marker's shape/dtype {shown(e['shape'])} "
                            f"{shown(e['dtype'])} is not valid")
            continue
        if (arr.shape, arr.dtype) != want:
            problems.append(f"'{name}': the marker says {_describe(want)}, the array is "
                            f"{_describe(arr)}")
        elif _digest(arr) != e["sha256"]:
            problems.append(f"'{name}': the values do not match the marker's SHA-256 digest")
    if problems:
        raise CheckpointError(f"'{path}' was changed after it was saved (its contents "
                              "disagree with its marker):\n  " + "\n  ".join(problems))


def _names(names, limit: int = 8) -> str:
    shown = ", ".join(repr(n) for n in list(names)[:limit])
    more = len(names) - limit
    return shown + (f" and {more} more" if more > 0 else "") if names else "nothing"


# -- restoring -----------------------------------------------------------------------------------
def _targets(into, module) -> tuple[dict, str, str]:
    """({name: (shape, dtype, where-to-write)}, the names' kind, a description of into)."""
    if module is not None and not _is_module(module):
        raise TypeError(f"module= must be a kg.nn.Module, got {type(module).__name__}")
    if _is_session(into):
        if into._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if module is None:
            return {v.name: (v.shape, v.dtype, v) for v in into.graph.variables}, "session", \
                "the session's variables"
        # Parameter names and shapes from the module itself: the graph's variables are
        # looked up (and made, if the module was never used in this graph) only once the
        # checkpoint has passed every check.
        return {n: (p.shape, p.dtype, None) for n, p in module.named_parameters()}, \
            "module", f"the session's variables of {type(module).__name__}"
    if module is not None:
        raise TypeError("module= goes with a Session (load into the session's variables of "
                        f"the module); got into={type(into).__name__}")
    if _is_module(into):
        return {n: (p.shape, p.dtype, p) for n, p in into.named_parameters()}, "module", \
            type(into).__name__
    if isinstance(into, Mapping):
        found = {}
        for k, v in into.items():
            if isinstance(v, np.ndarray) and not v.flags.writeable:
                raise TypeError(f"cannot load into '{k}': the array is read-only")
            if not isinstance(v, Tensor | np.ndarray):
                raise TypeError(f"cannot load into '{k}': a {type(v).__name__}; the dict's "
                                "values must be kg tensors or NumPy arrays (restored in "
                                "place)")
            found[k] = (v.shape, v.dtype, v)
        return found, "dict", "the dict"
    raise TypeError(f"kg.load(into=...) takes a kg.nn.Module, a dict of tensors/arrays or a "
                    f"kg.Session; got {type(into).__name__}")


def _shape_fits(want, got) -> bool:
    if want is None:
        return True
    return len(want) == len(got) and all(w is None or w == g for w, g in zip(want, got))


def _hint(saved_kind: str, target_kind: str, into_session: bool) -> str:
    if saved_kind == "module" and target_kind == "session":
        return ("\n  hint: this checkpoint holds a module's parameters ('0.weight'); load it "
                "into a session with kg.load(path, into=sess, module=model)")
    if saved_kind == "session" and into_session:
        return ("\n  hint: this checkpoint holds a session's variables by graph name "
                "('dense/weight'); load it by those names: kg.load(path, into=sess)")
    if saved_kind == "session":
        return ("\n  hint: this checkpoint holds a session's variables by graph name "
                "('dense/weight'); save it with kg.save(path, sess, module=model) to get the "
                "model's parameter names")
    return ""


def _is_path(value) -> bool:
    return isinstance(value, str | os.PathLike)


def load(path: str | os.PathLike, into=None, module=None, strict: bool = True, *,
         map_location=None, weights_only=None) -> dict[str, np.ndarray]:
    """Read a checkpoint: returns ``{name: array}``; with ``into=`` also restores the values
    into a Module's parameters, a dict's tensors/arrays (in place), or a Session's
    variables (``module=model``: the session's variables of that model, by parameter name).

    PyTorch's ``torch.load(path, map_location=..., weights_only=...)`` reads the same way
    (values come back on the host, and a checkpoint never holds code: ``weights_only`` is
    always true); ``torch.save(obj, path)``, PyTorch's order, is ``kg.save`` too.

    Everything is checked first: a file that is not a checkpoint, is truncated, or was
    altered, and (with ``strict=True``, the default) names missing from or unexpected by the
    target, or any shape or dtype mismatch, raise a CheckpointError naming what was expected
    and found, and nothing is changed. ``strict=False`` restores the names both sides have.

    >>> import kernelgraph as kg, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
    >>> kg.save(path, {"w": np.ones(2, np.float32)})
    >>> target = {"w": np.zeros(2, np.float32)}
    >>> _ = kg.load(path, into=target); target["w"]
    array([1., 1.], dtype=float32)
    >>> kg.load(path, into={"w": np.zeros(3, np.float32)})
    Traceback (most recent call last):
      ...
    kernelgraph.errors.CheckpointError: cannot load '...' into the dict:
      'w': the checkpoint has (2,) float32, the dict expects (3,) float32
    """
    path = os.fspath(path)
    targets = None if into is None else _targets(into, module)
    meta, arrays = _read(path)
    if targets is None:
        return arrays
    wanted, target_kind, what = targets
    problems = []
    missing = [n for n in wanted if n not in arrays]
    unexpected = [n for n in arrays if n not in wanted]
    if strict and missing:
        problems.append(f"missing from the checkpoint: {_names(missing)}")
    if strict and unexpected:
        problems.append(f"unexpected in the checkpoint (not in {what}): {_names(unexpected)}")
    common = [n for n in wanted if n in arrays]
    for n in common:
        shape, dtype, _ = wanted[n]
        arr = arrays[n]
        if not _shape_fits(shape, arr.shape) or np.dtype(dtype) != arr.dtype:
            problems.append(f"'{n}': the checkpoint has {_describe(arr)}, {what} expects "
                            f"{_describe((shape, dtype))}")
    if problems:
        raise CheckpointError(f"cannot load '{path}' into {what}:\n  " + "\n  ".join(problems)
                              + _hint(meta["kind"], target_kind, _is_session(into)))
    if _is_session(into):
        if module is not None:
            pairs = dict(_module_variables(module, into.graph))
            wanted = {n: (None, None, pairs[n]) for n in wanted}
        # a session on a Dask pool: the values go to their variables' workers
        if getattr(into, "_remote", None) is not None:
            into._remote.push_variables({wanted[n][2]: np.array(arrays[n], copy=True)
                                         for n in common})
            return arrays
        for n in common:
            var = wanted[n][2]
            into._store[var] = devices.transfer(np.array(arrays[n], copy=True), var.device)
    else:
        for n in common:
            _write(wanted[n][2], arrays[n])
    return arrays


def _write(target, arr: np.ndarray) -> None:
    """Restore ``arr`` into a tensor or an array in place, as PyTorch's ``copy_``: views of
    it and optimisers holding it see the new values, and a backward that saved the old
    values refuses to run (the write counts in the tensor's version)."""
    data = target._array if isinstance(target, Tensor) else target
    if type(data) is np.ndarray and data.flags.writeable:
        np.copyto(data, arr)
    else:  # a read-only or device array: the tensor gets a new one on its device
        target._array = devices.transfer(np.array(arr, copy=True), target.device)
    if isinstance(target, Tensor):
        mark_written(target)
