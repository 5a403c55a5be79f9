"""``tf.train.Saver`` and TF1's checkpoint-state file, over kernelgraph's own checkpoints.

The tutorial pattern runs unchanged::

    saver = tf.train.Saver(max_to_keep=5)
    saver.save(sess, "ckpt/model.ckpt", global_step=step)      # -> 'ckpt/model.ckpt-100'
    ckpt = tf.train.get_checkpoint_state("ckpt")
    if ckpt and ckpt.model_checkpoint_path:
        saver.restore(sess, ckpt.model_checkpoint_path)

The paths a program passes around are TF1's strings (``'ckpt/model.ckpt-100'``, a
*prefix*), and the directory's text file ``checkpoint`` reads as TF1's::

    model_checkpoint_path: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-90"
    all_model_checkpoint_paths: "model.ckpt-100"

(paths relative to the directory where the program gave a relative one, else absolute).
Where TF1 writes ``model.ckpt-100.index``, ``.data-00000-of-00001`` and ``.meta``,
kernelgraph writes ``model.ckpt-100.npz``: :func:`kernelgraph.save`'s atomic, pickle-free
archive of the variables by name (``np.load`` reads it), and, as TF1, ``model.ckpt-100.meta``:
the graph as TF's ``MetaGraphDef`` protobuf (:mod:`.meta_graph`), which
``tf.train.import_meta_graph`` reads back. TF1's own variable files cannot be read, nor
kernelgraph's by TF1.
"""

from __future__ import annotations

import os
import re
import tempfile

import numpy as np

from ... import errors
from ...checkpoint import load as _load
from ...checkpoint import save as _save
from ...graph import Node, get_default_graph
from ...static.variables import Variable, group, placeholder
from .graph_collections import _collections

SUFFIX = ".npz"


class _NoVariables(ValueError):
    pass


def _var_dict(var_list) -> dict:
    """name -> variable, as TF1's Saver names them (the variable's op name, or the key)."""
    if var_list is None:
        var_list = list(get_default_graph().variables)
    if isinstance(var_list, dict):
        found = dict(var_list)
    else:
        found = {}
        for v in var_list:
            if v.name in found:
                raise ValueError(f"At least two variables have the same name: {v.name}")
            found[v.name] = v
    for name, v in found.items():
        if not isinstance(v, Variable):
            raise TypeError(f"Saver: '{name}' is a {type(v).__name__}, not a Variable")
    if not found:
        raise _NoVariables("No variables to save")
    return found


class Saver:
    """TF1's ``tf.train.Saver``: ``save(sess, prefix, global_step=...)`` writes the session's
    values of ``var_list`` (default: every global variable; a list, or a dict of
    checkpoint name -> variable) and returns the checkpoint's path; ``restore(sess, path)``
    reads them back. ``max_to_keep`` checkpoints are kept, older ones deleted.

    >>> import kernelgraph.compat.v1 as tf, tempfile, os
    >>> prefix = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0], name="w")
    ...     saver = tf.train.Saver()
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         path = saver.save(sess, prefix, global_step=100)
    ...         _ = sess.run(w.assign([0.0, 0.0]))
    ...         saver.restore(sess, path)
    ...         path.endswith("model.ckpt-100"), sess.run(w)
    (True, array([1., 2.], dtype=float32))
    """

    def __init__(self, var_list=None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: int | None = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: str | None = None, restore_sequentially: bool = False, saver_def=None,
                 builder=None, defer_build: bool = False, allow_empty: bool = False,
                 write_version: int = 2, pad_step_number: bool = False,
                 save_relative_paths: bool = False, filename: str | None = None):
        try:
            self._vars = _var_dict(var_list)
        except _NoVariables:
            if not allow_empty:
                raise
            self._vars = {}
        self._max_to_keep = max_to_keep
        self._pad = pad_step_number
        self._last: list[str] = []
        # TF1 builds its restore ops with the Saver: one fed assign per variable
        graph = next(iter(self._vars.values())).graph if self._vars else get_default_graph()
        self._feeds: dict = {}
        assigns = []
        with graph.as_default(), graph.name_scope(name or "save"):
            for key, var in self._vars.items():
                fed = placeholder(var.dtype, shape=var.shape)
                self._feeds[key] = fed
                assigns.append(var.assign(fed))
            self._restore_op = group(*assigns, name="restore_all")

    @property
    def restore_op_name(self) -> str:
        return self._restore_op.name

    @property
    def max_to_keep(self):
        return self._max_to_keep

    def export_meta_graph(self, filename=None, collection_list=None, as_text: bool = False,
                          **kwargs):
        """The graph as a MetaGraphDef (written to ``filename`` where given)."""
        from .meta_graph import export_meta_graph  # late: meta_graph makes Savers

        graph = next(iter(self._vars.values())).graph if self._vars else None
        return export_meta_graph(filename, collection_list=collection_list, as_text=as_text,
                                 graph=graph, saver=self)

    def _write_meta_graph(self, filename) -> None:
        # A training loop saves the same graph again and again: its bytes are kept until
        # the graph changes (a node added, a collection grown).
        graph = next(iter(self._vars.values())).graph if self._vars else get_default_graph()
        key = (graph.version, _collection_sizes(graph))
        if getattr(self, "_meta", (None,))[0] != key:
            self._meta = (key, self.export_meta_graph().SerializeToString())
        tmp = filename + ".tmp"
        with open(tmp, "wb") as f:
            f.write(self._meta[1])
        os.replace(tmp, filename)

    @property
    def last_checkpoints(self) -> list:
        """The paths of the checkpoints kept, oldest first."""
        return list(self._last)

    def set_last_checkpoints(self, last_checkpoints: list) -> None:
        self._last = list(last_checkpoints)

    recover_last_checkpoints = set_last_checkpoints

    def save(self, sess, save_path, global_step=None, latest_filename: str | None = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True,
             write_state: bool = True, strip_default_attrs: bool = False,
             save_debug_info: bool = False) -> str:
        """Write the variables' values to ``save_path`` (``'-<step>'`` appended with a
        ``global_step``, an int or a step variable) and update the directory's
        ``checkpoint`` file; returns the checkpoint's path, the string to ``restore``."""
        save_path = os.fspath(save_path)
        if global_step is not None:
            if isinstance(global_step, Node):
                global_step = sess.run(global_step)
            step = int(global_step)
            save_path = f"{save_path}-{step:08d}" if self._pad else f"{save_path}-{step}"
        names = list(self._vars)
        values = sess.run([self._vars[n] for n in names]) if names else []
        directory = os.path.dirname(save_path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        _save(save_path + SUFFIX, {n: np.asarray(v) for n, v in zip(names, values)})
        if save_path in self._last:
            self._last.remove(save_path)
        self._last.append(save_path)
        if self._max_to_keep:
            while len(self._last) > self._max_to_keep:
                old = self._last.pop(0)
                for old_file in (old + SUFFIX, f"{old}.{meta_graph_suffix}"):
                    if os.path.exists(old_file):
                        os.remove(old_file)
        if write_meta_graph:
            self._write_meta_graph(f"{save_path}.{meta_graph_suffix}")
        if write_state:
            update_checkpoint_state(directory, save_path, self._last,
                                    latest_filename=latest_filename)
        return save_path

    def restore(self, sess, save_path) -> None:
        """Set the variables to the values saved at ``save_path`` (a path ``save``
        returned, or ``get_checkpoint_state(dir).model_checkpoint_path``)."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        arrays = _load(save_path + SUFFIX)
        feed = {}
        for key, fed in self._feeds.items():
            if key not in arrays:
                raise errors.NotFoundError(f"Key {key} not found in checkpoint {save_path}")
            feed[fed] = arrays[key]
        if feed:
            sess.run(self._restore_op, feed_dict=feed)


def _collection_sizes(graph) -> tuple:
    return tuple(sorted((k, len(v)) for k, v in _collections.get(graph, {}).items()))


class CheckpointState:
    """What TF1's ``get_checkpoint_state`` returns: ``model_checkpoint_path`` (the latest)
    and ``all_model_checkpoint_paths`` (those kept, oldest first)."""

    def __init__(self, model_checkpoint_path: str = "", all_model_checkpoint_paths=()):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)

    def __repr__(self):
        lines = [f'model_checkpoint_path: "{self.model_checkpoint_path}"']
        lines += [f'all_model_checkpoint_paths: "{p}"' for p in self.all_model_checkpoint_paths]
        return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_LINE = re.compile(r'^\s*(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"\s*$')
_ESCAPE = re.compile(r"\\(.)")


def _unquote(text: str) -> str:
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _state_path(directory: str, latest_filename: str | None) -> str:
    return os.path.join(directory, latest_filename or "checkpoint")


def update_checkpoint_state(save_dir, model_checkpoint_path: str,
                            all_model_checkpoint_paths=None,
                            latest_filename: str | None = None) -> None:
    """Write ``save_dir``'s ``checkpoint`` file (atomically), as TF1 writes it: a path
    the program gave relative is written relative to ``save_dir``."""
    save_dir = os.fspath(save_dir)
    paths = list(all_model_checkpoint_paths or [])
    if model_checkpoint_path not in paths:
        paths.append(model_checkpoint_path)

    def shown(path):
        return path if os.path.isabs(path) else os.path.relpath(path, save_dir or ".")

    text = f"model_checkpoint_path: {_quote(shown(model_checkpoint_path))}\n" + "".join(
        f"all_model_checkpoint_paths: {_quote(shown(p))}\n" for p in paths)
    target = _state_path(save_dir, latest_filename)
    fd, tmp = tempfile.mkstemp(dir=save_dir or ".", prefix=".checkpoint.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def get_checkpoint_state(checkpoint_dir, latest_filename: str | None = None):
    """The directory's ``checkpoint`` file read as a :class:`CheckpointState`, or None
    where there is none; relative paths in it come back joined to ``checkpoint_dir``, as
    TF1 returns them (``'ckpt/model.ckpt-100'``).

    >>> import kernelgraph.compat.v1 as tf, tempfile
    >>> print(tf.train.get_checkpoint_state(tempfile.mkdtemp()))
    None
    """
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = _state_path(checkpoint_dir, latest_filename)
    if not os.path.isfile(path):
        return None
    state = CheckpointState()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            match = _LINE.match(line)
            if match is None:
                raise ValueError(f"{path}:{number}: not a checkpoint state line: {line!r}")
            key, value = match.group(1), _unquote(match.group(2))
            if not os.path.isabs(value):
                value = os.path.join(checkpoint_dir, value)
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = value
            elif key == "all_model_checkpoint_paths":
                state.all_model_checkpoint_paths.append(value)
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    return state


def checkpoint_exists(checkpoint_prefix) -> bool:
    """Whether a checkpoint was saved at ``checkpoint_prefix`` (a path ``save`` returned)."""
    return os.path.isfile(os.fspath(checkpoint_prefix) + SUFFIX)


def latest_checkpoint(checkpoint_dir, latest_filename: str | None = None) -> str | None:
    """The path of the directory's latest checkpoint, or None (no ``checkpoint`` file, or
    the checkpoint it names is gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return None


TRAIN_NAMES = {"Saver": Saver, "get_checkpoint_state": get_checkpoint_state,
               "latest_checkpoint": latest_checkpoint, "checkpoint_exists": checkpoint_exists,
               "update_checkpoint_state": update_checkpoint_state}
