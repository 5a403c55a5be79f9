"""``torch.distributed.checkpoint`` (DCP): a state dict saved into, and loaded from, a
directory.

kernelgraph has no sharded tensors: every process holds whole tensors (as with
``DistributedDataParallel``), so a checkpoint is one file in kernelgraph's own format
(:mod:`kernelgraph.checkpoint`: an ``.npz`` archive written atomically, never pickled)
named ``state.npz`` inside the directory. When a process group is initialised
(:mod:`kernelgraph.distributed.process_group`), rank 0 writes it and the others wait at a
barrier; every rank reads it.

- ``save(state_dict, checkpoint_id=dir)`` (or ``storage_writer=FileSystemWriter(dir)``;
  ``save_state_dict`` is the older name) stores tensors and arrays as arrays and the other
  values (numbers, strings, ``None``, lists, tuples, nested dicts: an optimizer's
  ``param_groups``) as JSON, with the dict's layout. Objects with ``state_dict()`` and
  ``load_state_dict()`` (a module, an optimizer: PyTorch's ``Stateful``) are saved as their
  ``state_dict()``.
- ``load(state_dict, checkpoint_id=dir)`` (``load_state_dict``) fills the state dict it is
  given, as PyTorch's DCP does: each tensor and array **in place** (same object, new
  values), each other value replaced by the saved one, each ``Stateful`` through its
  ``load_state_dict``. Only the keys it holds are read; a key the checkpoint lacks raises
  :class:`CheckpointException` (like PyTorch's, a ``BaseException``) naming it.

>>> import kernelgraph as kg, tempfile
>>> import kernelgraph.distributed.checkpoint as dcp
>>> directory = tempfile.mkdtemp()
>>> dcp.save({"w": kg.tensor([1.0, 2.0]), "step": 5}, checkpoint_id=directory)
>>> target = {"w": kg.zeros(2), "step": 0}
>>> w = target["w"]
>>> dcp.load(target, checkpoint_id=directory)
>>> w.tolist(), target["step"], target["w"] is w
([1.0, 2.0], 5, True)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

import numpy as np

from ...checkpoint import load as _load_file
from ...checkpoint import save as _save_file
from ...eager import Tensor
from ...eager.tensors import tensor as _tensor
from ...nn.init import copy_into
from .. import process_group as _pg
from . import default_planner, state_dict
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner

__all__ = ["CheckpointException", "DefaultLoadPlanner", "DefaultSavePlanner",
           "FileSystemReader", "FileSystemWriter", "default_planner", "load", "load_state_dict",
           "save", "save_state_dict", "state_dict"]

FILE = "state.npz"
_TREE = "tree"  # the archive entry holding the layout (JSON as UTF-8 bytes)


class CheckpointException(BaseException):  # noqa: N818 - PyTorch's name and base class
    """A save or load that failed; PyTorch's DCP raises it as a ``BaseException`` too, so
    ``except Exception`` does not catch it."""


class FileSystemWriter:
    """Where :func:`save` writes: the directory ``path`` (made if missing)."""

    def __init__(self, path, single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True):
        self.path = os.fspath(path)
        self.overwrite = overwrite


class FileSystemReader:
    """Where :func:`load` reads: the directory ``path``."""

    def __init__(self, path):
        self.path = os.fspath(path)


def _is_stateful(obj) -> bool:
    return not isinstance(obj, Tensor | np.ndarray | Mapping) and \
        callable(getattr(obj, "state_dict", None)) and \
        callable(getattr(obj, "load_state_dict", None))


def _encode(value, arrays: dict, where: str):
    if _is_stateful(value):
        value = value.state_dict()
    if isinstance(value, Tensor | np.ndarray):
        arrays[str(len(arrays))] = value
        return {"tensor" if isinstance(value, Tensor) else "array": len(arrays) - 1}
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str | int) or isinstance(k, bool):
                raise TypeError(f"cannot save the key {k!r} of {where or 'the state dict'}: "
                                "keys must be strings or integers")
            items.append([k, _encode(v, arrays, f"{where}.{k}" if where else str(k))])
        return {"dict": items}
    if isinstance(value, list | tuple):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return {"value": value}
    raise TypeError(f"cannot save {where or 'the state dict'}: a {type(value).__name__} is "
                    "neither a tensor, an array, a number, a string, None, a list, a tuple, "
                    "a dict nor an object with state_dict() (checkpoints never pickle)")


def _decode(node: dict, arrays: dict):
    (kind, body), = node.items()
    if kind in ("tensor", "array"):
        arr = arrays[str(body)]
        return _tensor(arr) if kind == "tensor" else arr
    if kind == "dict":
        return {k: _decode(v, arrays) for k, v in body}
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays) for v in body]
        return items if kind == "list" else tuple(items)
    return body


def _directory(checkpoint_id, storage, cls, what: str) -> str:
    if storage is not None:
        if not isinstance(storage, cls):
            raise TypeError(f"{what} must be a {cls.__name__}, got {type(storage).__name__}")
        return storage.path
    if checkpoint_id is None:
        raise ValueError(f"give checkpoint_id= (a directory) or {what}=")
    return os.fspath(checkpoint_id)


def save(state_dict: dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist: bool = False, async_checkpointer_type=None,
         async_stager=None):
    """Write ``state_dict`` into a directory (see the module's docstring). Returns ``None``
    (PyTorch returns its metadata object)."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"save expects a dict, got {type(state_dict).__name__}")
    directory = _directory(checkpoint_id, storage_writer, FileSystemWriter, "storage_writer")
    arrays: dict = {}
    tree = _encode(state_dict, arrays, "")
    distributed = _pg.is_initialized() and not no_dist
    if not distributed or _pg.get_rank() == 0:
        os.makedirs(directory, exist_ok=True)
        layout = np.frombuffer(json.dumps(tree).encode("utf-8"), dtype=np.uint8)
        _save_file(os.path.join(directory, FILE), {_TREE: layout, **arrays})
    if distributed:
        _pg.barrier()  # the file is whole before any rank goes on (and may load it)


def _fill(target, saved, path: str):
    """Load ``saved`` (decoded) into ``target``; returns the value to keep in its place."""
    if _is_stateful(target):
        sd = target.state_dict()
        sd = _fill(sd, saved, path)
        target.load_state_dict(sd)
        return target
    if isinstance(target, Mapping):
        if not isinstance(saved, Mapping):
            raise CheckpointException(f"{path or 'the state dict'}: the checkpoint holds a "
                                      f"{type(saved).__name__}, not a dict")
        for k in list(target):
            name = f"{path}.{k}" if path else str(k)
            if k not in saved:
                raise CheckpointException(f"Missing key in checkpoint state_dict: {name}.")
            target[k] = _fill(target[k], saved[k], name)
        return target
    if isinstance(target, Tensor | np.ndarray):
        if not isinstance(saved, Tensor | np.ndarray):
            raise CheckpointException(f"{path}: the checkpoint holds a {type(saved).__name__}, "
                                      "not a tensor")
        values = saved.numpy() if isinstance(saved, Tensor) else saved
        if tuple(values.shape) != tuple(target.shape):
            raise CheckpointException(f"Size mismatch for {path}: the checkpoint has shape "
                                      f"{tuple(values.shape)}, the state dict "
                                      f"{tuple(target.shape)}")
        if isinstance(target, Tensor):
            copy_into(target, values)
        else:
            np.copyto(target, values, casting="unsafe")
        return target
    if isinstance(target, list) and isinstance(saved, list | tuple) and \
            len(target) == len(saved) and any(isinstance(t, Tensor | np.ndarray | Mapping)
                                              for t in target):
        for i, s in enumerate(saved):
            target[i] = _fill(target[i], s, f"{path}[{i}]")
        return target
    return saved


def load(state_dict: dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist: bool = False) -> None:
    """Fill ``state_dict`` from a directory, in place (see the module's docstring)."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"load expects a dict, got {type(state_dict).__name__}")
    directory = _directory(checkpoint_id, storage_reader, FileSystemReader, "storage_reader")
    arrays = _load_file(os.path.join(directory, FILE))
    layout = arrays.pop(_TREE, None)
    if layout is None or layout.dtype != np.uint8:
        raise CheckpointException(f"'{directory}' holds a kernelgraph checkpoint but not one "
                                  "written by torch.distributed.checkpoint.save")
    saved = _decode(json.loads(layout.tobytes().decode("utf-8")), arrays)
    _fill(state_dict, saved, "")


def save_state_dict(state_dict: dict, storage_writer, process_group=None,
                    coordinator_rank: int = 0, no_dist: bool = False, planner=None):
    """PyTorch's older name for :func:`save` (``storage_writer`` given by position)."""
    return save(state_dict, storage_writer=storage_writer, no_dist=no_dist, planner=planner)


def load_state_dict(state_dict: dict, storage_reader, process_group=None,
                    coordinator_rank: int = 0, no_dist: bool = False, planner=None):
    """PyTorch's older name for :func:`load` (``storage_reader`` given by position)."""
    return load(state_dict, storage_reader=storage_reader, no_dist=no_dist, planner=planner)
