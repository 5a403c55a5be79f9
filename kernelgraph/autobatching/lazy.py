"""Pending tensors: a deferred op call's record (:class:`_Pending`) sits in the ``_array`` slot
of a :class:`LazyTensor`, whose shape and dtype are known; reading its values forces it: the
pending graph runs and the tensor becomes an ordinary :class:`~kernelgraph.eager.Tensor`
holding its row of a batched result (a view), with a recorded node that selects that row."""

from __future__ import annotations

import numpy as np

from .. import eager
from .. import ops as O
from ..devices import CPU
from ..eager import EagerNode, Tensor
from ..graph import _sequence
from ..ops import registry

ndarray = np.ndarray
_DATA = Tensor.__dict__["_array"]  # the slots themselves: LazyTensor overrides the attributes
_NODE = Tensor.__dict__["_node"]
_GETITEM = O.getitem

# Forcing runs everything pending: the scheduler (schedule.flush), which builds on this
# module, installs itself in this slot when the package is imported.
_flush: list = [None]


class _Pending:
    """A deferred op call, kept in the ``_array`` slot of its LazyTensor until it runs.
    ``sig`` numbers its signature (the same number for the same signature in one block):
    grouping hashes that, not the signature's nested tuples."""

    __slots__ = ("op", "args", "attrs", "shape", "dtype", "key", "depth", "sig", "need",
                 "out", "error", "cse", "row", "consumers", "waiting")

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class LazyTensor(Tensor):
    """A tensor whose op is deferred by :class:`autobatch`: shape, dtype and requires_grad
    are known; reading its values (or its ``grad_fn``) runs everything pending, after which
    it is an ordinary :class:`~kernelgraph.eager.Tensor` (its class changes)."""

    __slots__ = ()

    @property
    def _array(self):
        _force(self)
        return _DATA.__get__(self)

    @property
    def _node(self):
        _force(self)
        return _NODE.__get__(self)

    @property
    def shape(self) -> tuple:
        return _DATA.__get__(self).shape

    @property
    def dtype(self):
        return _DATA.__get__(self).dtype

    @property
    def ndim(self) -> int:
        return len(_DATA.__get__(self).shape)

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return _DATA.__get__(self).size

    def __len__(self):
        shape = _DATA.__get__(self).shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    @property
    def device(self):
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False


def _force(t):
    p = _DATA.__get__(t)
    if type(p) is _Pending and p.row is None:
        _flush[0]()
    p = _DATA.__get__(t)
    if type(p) is _Pending and p.row is not None:  # ran, but its row was not handed out
        _materialize_row(t, *p.row)
        return
    if type(p) is _Pending:
        why = f"the batched run failed earlier ({p.error})" if p.error else \
            "kg.autobatch lost its result (a bug: please report it)"
        raise RuntimeError(f"this tensor's deferred {p.op.name} did not run: {why}")


registry.FRONTENDS[LazyTensor] = eager.apply


def _materialize(t, data, node):
    _DATA.__set__(t, data)
    _NODE.__set__(t, node)
    t.__class__ = Tensor


def _materialize_row(t, batched, i, need_node, r):
    """Make ``t`` the ordinary tensor ``batched``'s member ``i`` (layout: ``r`` rows per
    member, 0 for STACKED)."""
    data = batched if type(batched) is ndarray else _DATA.__get__(batched)
    if r:
        index = (i * r, (i + 1) * r, None)
        row = data[i * r:(i + 1) * r]
    else:
        index = i
        row = data[i] if data.ndim > 1 else data[i:i + 1].reshape(())
    _DATA.__set__(t, row)
    _NODE.__set__(t, _row_node(batched, index, row) if need_node else None)
    t.__class__ = Tensor


_ROW_ATTRS: dict = {}  # index -> the attrs {"index": (index,)}, shared and never changed


def _row_node(batched, index, row):
    """The recorded node ``batched[index]``: how a per-sample tensor's gradient reaches the
    batched node (only used when the user's own code reads the row later)."""
    attrs = _ROW_ATTRS.get(index)
    if attrs is None:
        attrs = {"index": (index,)}
        if len(_ROW_ATTRS) < 8192:
            _ROW_ATTRS[index] = attrs
    node = EagerNode.__new__(EagerNode)
    node.op = _GETITEM
    node.inputs = (batched,)
    node.attrs = attrs
    node.value = row
    node.seq = next(_sequence)
    node.freed = False
    node.hooks = None
    node.retained = None
    node.location = None
    return node


def _arr(x):
    return x if type(x) is ndarray else _DATA.__get__(x)
