"""Indexing with tensors, lists and masks (NumPy's and PyTorch's *advanced* indexing):
``x[idx]``, ``x[mask]``, ``x[:, idx]``, ``probs[range(n), y]``, written with the ``gather``
op so gradients flow back (scattered and summed) on every device.

Basic indices (ints, slices, ``...``, None) stay the ``getitem`` op. An index that holds an
integer tensor in one place, after full slices (``x[i]``, ``x[:, i]``), is one ``gather``
along that axis, in both modes: in a graph the index may be a node (TF1's ``xs[i]`` in a
``while_loop`` body). Anything else (a bool mask, several index arrays, lists) is resolved
as NumPy resolves it, on the *positions* of ``x``'s elements, and gathered from the
flattened tensor: the index's values must be known, so in a graph it must be a constant
(Python lists, NumPy arrays) and ``x``'s shape fully known.

>>> import kernelgraph as kg
>>> x = kg.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> x[kg.tensor([1, 0])].tolist(), x[x > 1.5].tolist(), x[[0, 1], [1, 0]].tolist()
([[3.0, 4.0], [1.0, 2.0]], [2.0, 3.0, 4.0], [2.0, 3.0])
"""

from __future__ import annotations

import numpy as np

from .. import devices
from ..graph import Node
from .indexing import gather
from .shape import reshape


def _is_index_tensor(it) -> bool:
    return hasattr(it, "dtype") and not isinstance(it, np.generic | int | bool)


def _host(it):
    """An index's values as a NumPy array (an eager tensor's values are read here)."""
    if isinstance(it, Node):
        raise TypeError(f"an index holding graph node '{it.name}' can only be one integer "
                        "tensor after full slices (x[i], x[:, i]) in a graph; masks and "
                        "several index tensors need values, which a graph node has not")
    if hasattr(it, "numpy") and hasattr(it, "requires_grad"):
        return devices.to_numpy(it.detach()._array) if it.requires_grad else it.numpy()
    if isinstance(it, range):
        return np.arange(it.start, it.stop, it.step)
    return np.asarray(it)


def advanced_getitem(x, index):
    """``x[index]`` where ``index`` holds tensors, arrays, lists or masks (see the module)."""
    items = index if isinstance(index, tuple) else (index,)
    advanced = [k for k, it in enumerate(items)
                if _is_index_tensor(it) or isinstance(it, list | range | np.ndarray)]
    if len(advanced) == 1:
        k = advanced[0]
        it = items[k]
        dtype = getattr(it, "dtype", None)
        full = all(isinstance(b, slice) and b == slice(None)
                   for j, b in enumerate(items) if j != k)
        if _is_index_tensor(it) and dtype is not None and np.dtype(dtype).kind in "iu" and full:
            return gather(x, it, axis=k)  # an integer tensor among full slices: one gather
    shape = x.shape
    if shape is None or any(d is None for d in shape):
        raise TypeError("indexing with masks, lists or several index tensors needs the "
                        f"tensor's full shape, and it is {shape}")
    numpy_index = tuple(
        _host(it) if k in advanced else it for k, it in enumerate(items))
    for k in advanced:
        arr = numpy_index[k]
        if arr.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool "
                             f"tensors, got {arr.dtype}")
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    try:
        picked = positions[numpy_index]
    except IndexError as e:
        raise IndexError(str(e)) from None
    return gather(reshape(x, shape=(-1,)), picked, axis=0)


__all__: list[str] = []
