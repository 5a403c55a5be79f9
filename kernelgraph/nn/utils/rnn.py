"""``kg.nn.utils.rnn`` (``torch.nn.utils.rnn``): a batch of sequences of different lengths
as a :class:`PackedSequence`, which ``kg.nn.RNN``, ``LSTM`` and ``GRU`` accept.

A packed sequence holds the sequences' steps time step by time step, longest sequence
first: ``data`` (sum of lengths, *), ``batch_sizes`` (how many sequences are still running
at each step), and the permutation that sorted the batch by length (``sorted_indices``,
None when the caller sorted it: ``enforce_sorted=True``). Packing and unpacking are
gathers of rows, so gradients flow through both.

>>> import kernelgraph as kg
>>> from kernelgraph.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
>>> padded = pad_sequence([kg.ones(3, 1), kg.ones(1, 1) * 2], batch_first=True)
>>> padded[:, :, 0].tolist()
[[1.0, 1.0, 1.0], [2.0, 0.0, 0.0]]
>>> packed = pack_padded_sequence(padded, [3, 1], batch_first=True)
>>> packed.data[:, 0].tolist(), packed.batch_sizes.tolist()
([1.0, 2.0, 1.0, 1.0], [2, 1, 1])
>>> out, lengths = pad_packed_sequence(packed, batch_first=True)
>>> bool((out == padded).all()), lengths.tolist()
(True, [3, 1])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import devices
from ... import ops as O
from ...eager import Tensor, tensor
from ...graph import Node

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence"]


def host_ints(values) -> np.ndarray:
    """Lengths or indices (a list, an array, an eager tensor) as a NumPy int64 array."""
    if isinstance(values, Tensor):
        values = devices.to_numpy(values._array)
    return np.asarray(values).astype(np.int64)


def index_like(index: np.ndarray, like):
    """Row indices for a gather from ``like``: on its device when it is an eager tensor (a
    CUDA tensor gathers with CUDA indices), else the NumPy array (a graph constant)."""
    index = np.asarray(index, np.int64)
    if isinstance(like, Tensor) and like.device.type != "cpu":
        return tensor(index, device=like.device)
    return index


class PackedSequence(NamedTuple):
    """``torch.nn.utils.rnn.PackedSequence``: ``data``, ``batch_sizes``,
    ``sorted_indices``, ``unsorted_indices`` (see the module docstring). Made by
    :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand."""

    data: Tensor | Node
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    @property
    def is_cuda(self) -> bool:
        return bool(getattr(self.data, "is_cuda", False))

    def to(self, *args, **kwargs) -> PackedSequence:
        return self._replace(data=self.data.to(*args, **kwargs))


def _lengths_of(batch_sizes) -> np.ndarray:
    """The sorted lengths a ``batch_sizes`` describes."""
    sizes = host_ints(batch_sizes)
    return np.array([(sizes > i).sum() for i in range(int(sizes[0]) if len(sizes) else 0)],
                    np.int64)


def pack_rows(x, batch_sizes):
    """The packed ``data`` of x (time, batch, *) whose batch is sorted longest first."""
    sizes = host_ints(batch_sizes)
    batch = int(sizes[0])
    rows = np.concatenate([t * batch + np.arange(n) for t, n in enumerate(sizes)])
    flat = O.reshape(x, shape=(len(sizes) * batch, *_rest(x)))
    return O.gather(flat, index_like(rows, x), axis=0)


def _rest(x) -> tuple:
    return tuple(-1 if d is None else d for d in x.shape[2:])


def unpack_rows(packed: PackedSequence, padding_value: float = 0.0):
    """(x (time, batch, *) sorted longest first, padded with ``padding_value``; the
    sorted lengths; None)."""
    data, sizes = packed.data, host_ints(packed.batch_sizes)
    steps, batch = len(sizes), int(sizes[0])
    total = sum(int(n) for n in sizes)
    lengths = _lengths_of(sizes)
    # position (t, i) reads packed row offset[t] + i while sequence i runs, else the
    # padding row appended after the data
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    t, i = np.meshgrid(np.arange(steps), np.arange(batch), indexing="ij")
    index = np.where(i < sizes[:, None], offsets[:, None] + i, total).reshape(-1)
    feat = tuple(-1 if d is None else d for d in data.shape[1:])
    pad = O.zeros_like(data[:1]) + float(padding_value)
    rows = O.gather(O.concat([data, pad], axis=0), index_like(index, data), axis=0)
    return O.reshape(rows, shape=(steps, batch, *feat)), lengths, None


def pack_padded_sequence(input, lengths, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (time, batch, *) (``batch_first``: (batch, time, *)) of
    sequences of ``lengths`` (``torch.nn.utils.rnn.pack_padded_sequence``). With
    ``enforce_sorted`` the lengths must be decreasing; otherwise the batch is sorted here
    and the permutation kept, to be undone by :func:`pad_packed_sequence` and the RNNs."""
    lengths = host_ints(lengths)
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        sorted_indices = np.argsort(-lengths, kind="stable").astype(np.int64)
        lengths = lengths[sorted_indices]
    if len(lengths) and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    x = input if isinstance(input, Tensor | Node) else tensor(np.asarray(input))
    if batch_first:
        x = O.transpose(x, perm=(1, 0, *range(2, x.ndim)))
    if x.shape[0] is not None and lengths[0] > x.shape[0]:
        raise RuntimeError(f"Expected the longest sequence ({lengths[0]}) to fit the "
                           f"padded input's {x.shape[0]} steps")
    if sorted_indices is not None:
        x = O.gather(x, index_like(sorted_indices, x), axis=1)
    sizes = np.array([(lengths > t).sum() for t in range(int(lengths[0]))], np.int64)
    x = x[:len(sizes)]
    data = pack_rows(x, sizes)
    unsorted = None if sorted_indices is None else np.argsort(sorted_indices).astype(np.int64)
    return PackedSequence(data, tensor(sizes),
                          None if sorted_indices is None else tensor(sorted_indices),
                          None if unsorted is None else tensor(unsorted))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None) -> tuple:
    """``(padded, lengths)``: undo :func:`pack_padded_sequence` (the batch in its original
    order, steps past a length ``padding_value``, ``total_length`` steps when given)."""
    x, lengths, _ = unpack_rows(sequence, padding_value)
    if total_length is not None:
        if total_length < len(host_ints(sequence.batch_sizes)):
            raise ValueError(f"Expected total_length to be at least the length of the "
                             f"longest sequence in input, but got total_length="
                             f"{total_length} and max sequence length being "
                             f"{len(host_ints(sequence.batch_sizes))}")
        extra = total_length - x.shape[0]
        if extra:
            pad = O.zeros_like(x[:1]) + float(padding_value)
            x = O.concat([x] + [pad] * extra, axis=0)
    if sequence.unsorted_indices is not None:
        order = host_ints(sequence.unsorted_indices)
        x = O.gather(x, index_like(order, x), axis=1)
        lengths = lengths[order]
    if batch_first:
        x = O.transpose(x, perm=(1, 0, *range(2, x.ndim)))
    return x, tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack sequences of shapes (L_k, *) into (max L, batch, *) (``batch_first``: (batch,
    max L, *)), padded with ``padding_value`` (``torch.nn.utils.rnn.pad_sequence``)."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    seqs = [s if isinstance(s, Tensor | Node) else tensor(np.asarray(s)) for s in sequences]
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = longest - s.shape[0]
        if extra:
            pad = O.zeros_like(s[:1]) + float(padding_value)
            pads = [pad] * extra
            s = O.concat([s, *pads] if padding_side == "right" else [*pads, s], axis=0)
        padded.append(s)
    return O.stack(padded, axis=0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_k, *) (``torch.nn.utils.rnn.pack_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences a :class:`PackedSequence` holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[k, :int(n)] for k, n in enumerate(lengths.tolist())]
