"""Error types, named as TensorFlow 1 names them, each also a familiar Python exception.

Static-mode errors carry the node they happened in; their message ends with the user's
line that created that node (:func:`where`, :func:`describe_location`), so a failure at
``Session.run`` time points at its cause.
"""

from __future__ import annotations

import linecache
import reprlib
import sys

import numpy as np


class OpError(Exception):
    """An error tied to one graph node (``.node``), like ``tf.errors.OpError``."""

    def __init__(self, *args, node=None):
        # kernelgraph raises OpError(message, node); TF1's code, OpError(node_def, op,
        # message) (tf.errors.InvalidArgumentError(None, None, "bad value")).
        if len(args) == 3:
            node_def, node, message = args
        elif len(args) in (1, 2):
            message, node = args[0], (args[1] if len(args) == 2 else node)
        else:
            raise TypeError(f"{type(self).__name__} takes (message, node=None) or TF1's "
                            f"(node_def, op, message), got {len(args)} arguments")
        super().__init__(message)
        self.node = node
        self.message = message

    @property
    def op(self):
        """TF1's name for the node the error is about (a face may set its own type of it)."""
        return self.__dict__.get("_op", self.node)

    @op.setter
    def op(self, value):
        self._op = value


class InvalidArgumentError(OpError, ValueError):
    """A value had the wrong shape, dtype or content for the op (unfed placeholder, ...)."""


class FailedPreconditionError(OpError, RuntimeError):
    """The graph is in a state that does not allow the op yet (an uninitialised variable)."""


class OutOfRangeError(OpError, IndexError):
    """An iterator ran past its end ("End of sequence"), like ``tf.errors.OutOfRangeError``."""


class NotFoundError(OpError, KeyError):
    """A name (a tensor, an operation, a file) that does not exist, as TF1's."""


class UnimplementedError(OpError, NotImplementedError):
    """An operation kernelgraph (like TF1 for some dtypes) does not implement."""


class AlreadyExistsError(OpError, FileExistsError):
    """Something (a file, a directory) that is there already, as TF1's."""


class CancelledError(OpError, RuntimeError):
    """An operation that was cancelled (a closed session's pending work), as TF1's."""


class ResourceExhaustedError(OpError, MemoryError):
    """Memory (or another resource) ran out while running an op, as TF1's."""


class DeadlineExceededError(OpError, TimeoutError):
    """An operation waited longer than it may (a queue nothing fills), as TF1's."""


class DataLossError(OpError, OSError):
    """A file's bytes are not what its format says (a record's checksum), as TF1's."""


class ShapeError(ValueError):
    """Shapes that cannot work together, detected when a node or eager op is created."""


class BroadcastError(ShapeError, RuntimeError):
    """Two shapes that do not broadcast: a ValueError as TF1 raises it, and a RuntimeError
    whose message says what PyTorch's says ("The size of tensor a (2) must match ...")."""


class TraceWarning(UserWarning):
    """``kg.function`` froze something while tracing (a branch on a tensor's value) or
    traced too often; the message names the line and how to fix it."""


class TraceError(RuntimeError):
    """``kg.function(strict=True)`` refused a trace that a TraceWarning would only flag, or
    the traced code did something a trace cannot hold (``backward()`` inside)."""




class CheckpointError(ValueError):
    """A checkpoint file that cannot be loaded as asked: not a kernelgraph checkpoint,
    truncated, tampered with, or holding names, shapes or dtypes other than the target
    expects. The message says what was expected and what was found; nothing was changed."""


class _Brief(reprlib.Repr):
    def __init__(self):
        super().__init__()
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 8
        self.maxstring = self.maxother = 60
        self.maxlevel = 3

    def repr_ndarray(self, x, level):
        return np.array2string(x, threshold=8, edgeitems=3, separator=", ",
                               prefix="array(").join(("array(", f", dtype={x.dtype})"))


_brief = _Brief()


def shown(value, limit: int = 80) -> str:
    """``repr(value)`` for an error message, at most ``limit`` characters and one line.

    A message names what the user passed, never the whole of a big list, array or string
    they fed: its repr is built piece by piece up to a few items, and cut.

    >>> shown(list(range(10_000)))
    '[0, 1, 2, 3, 4, 5, 6, 7, ...]'
    >>> shown("x" * 500)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    """
    text = " ".join(_brief.repr(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def clipped(text: str, limit: int = 160) -> str:
    """``text`` (another error's message, which may quote a value) cut to ``limit``
    characters, for a message that wraps it."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- where an error points: the user's line ---------------------------------------------------
def describe_location(loc) -> str:
    """'  File "x.py", line 3:  c = a * b' -- with the notebook cell named when in IPython;
    ``loc`` is a (filename, line) pair, as :func:`kernelgraph.graph.user_location` gives
    (None: '  (unknown location)')."""
    if loc is None:
        return "  (unknown location)"
    filename, line = loc
    text = linecache.getline(filename, line).strip()
    shown = _cell_name(filename) or f'File "{filename}"'
    return f"  {shown}, line {line}:  {text}" if text else f"  {shown}, line {line}"


def _cell_name(filename: str):
    ip = sys.modules.get("IPython")
    shell = ip.get_ipython() if ip is not None and hasattr(ip, "get_ipython") else None
    compiler = getattr(shell, "compile", None)
    cache = getattr(compiler, "_filename_map", None)
    if cache and filename in cache:
        return f"Cell In[{cache[filename]}]"
    return None


def where(at) -> str:
    """The last line of an error message about ``at`` (a node, or a (filename, line)
    location): a line break and the user's line that made it, or '' where that is unknown.

    >>> where(None)
    ''
    """
    loc = getattr(at, "location", at)
    return "\n" + describe_location(loc) if loc else ""


def located(error: Exception, location) -> Exception:
    """``error`` again (same type), its message ending with the user's line ``location``.

    >>> str(located(ValueError("bad"), None))
    'bad'
    """
    if location is None:
        return error
    return type(error)(f"{error}{where(location)}")
