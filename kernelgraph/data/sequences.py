"""Synthetic variable-length sequence tasks for RNNs, and padding them into batches.

Each task's answer depends on the whole sequence, so a model must carry information along
it: a bag of per-step features is not enough for ``first_marker`` (which marker came
*first*), and ``sum_sign`` needs a running sum.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import shown

TASKS = ("first_marker", "sum_sign")


def sequence_task(n: int, min_len: int = 5, max_len: int = 50, input_size: int = 16,
                  task: str = "first_marker", num_classes: int = 4, seed: int | None = 0
                  ) -> tuple[list[np.ndarray], np.ndarray]:
    """``n`` sequences of random lengths in ``[min_len, max_len]`` and their int64 targets:
    ``(seqs, y)``, where ``seqs[i]`` is a float32 array of shape ``(T_i, input_size)``.

    Tasks:

    - ``"first_marker"`` (classes ``0..num_classes-1``): features ``0..num_classes-1`` are
      marker channels, zero except where a marker of that class appears (value 1); the
      other features are Gaussian noise (std 0.5). Each sequence holds 1 to 3 markers at
      distinct random steps; the target is the class of the earliest one. Later markers
      are distractors, so the order matters.
    - ``"sum_sign"`` (classes 0/1): every feature is standard Gaussian noise; the target is
      1 when feature 0 sums to more than 0 over the sequence.

    The same arguments and ``seed`` give the same data.

    >>> import kernelgraph as kg
    >>> seqs, y = kg.data.sequence_task(3, min_len=4, max_len=6, input_size=5, seed=0)
    >>> [s.shape[1] for s in seqs], seqs[0].dtype, y.dtype, all(4 <= len(s) <= 6 for s in seqs)
    ([5, 5, 5], dtype('float32'), dtype('int64'), True)
    >>> s = seqs[0]; first = np.flatnonzero(s[:, :4].max(axis=1) == 1)[0]
    >>> int(np.argmax(s[first, :4])) == int(y[0])
    True
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {shown(task)}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got min_len={min_len}, "
                         f"max_len={max_len}")
    if task == "first_marker" and not 2 <= num_classes <= input_size:
        raise ValueError(f"first_marker needs 2 <= num_classes <= input_size, got "
                         f"num_classes={num_classes}, input_size={input_size}")
    if input_size < 1:
        raise ValueError(f"input_size must be >= 1, got {input_size}")
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_len, max_len + 1, size=n)
    seqs, targets = [], np.zeros(n, np.int64)
    for i, T in enumerate(lengths):
        if task == "sum_sign":
            x = rng.standard_normal((T, input_size)).astype(np.float32)
            targets[i] = int(x[:, 0].sum(dtype=np.float64) > 0)
        else:
            x = np.zeros((T, input_size), np.float32)
            x[:, num_classes:] = 0.5 * rng.standard_normal((T, input_size - num_classes))
            k = int(rng.integers(1, min(3, T) + 1))  # how many markers
            steps = np.sort(rng.choice(T, size=k, replace=False))
            classes = rng.integers(0, num_classes, size=k)
            x[steps, classes] = 1.0
            targets[i] = classes[0]
        seqs.append(x)
    return seqs, targets


def pad_sequences(seqs: Sequence, padding_value: float = 0.0, dtype=np.float32
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Stack sequences of different lengths into ``(padded, lengths)``: ``padded`` is
    (B, T_max, ...) with ``padding_value`` after each sequence's end, ``lengths`` int64
    (B,); feed them to ``kg.nn.dynamic_rnn(cell, padded, sequence_length=lengths)``.

    >>> import kernelgraph as kg
    >>> padded, lengths = kg.data.pad_sequences([np.ones((2, 3)), np.ones((4, 3))])
    >>> padded.shape, lengths.tolist(), padded[0, 2:].sum()
    ((2, 4, 3), [2, 4], np.float32(0.0))
    """
    arrays = [np.asarray(s) for s in seqs]
    if not arrays:
        raise ValueError("pad_sequences needs at least one sequence")
    inner = arrays[0].shape[1:]
    for i, a in enumerate(arrays):
        if a.ndim == 0 or a.shape[1:] != inner:
            raise ValueError(f"pad_sequences: every sequence must be (T, *{inner}); sequence "
                             f"{i} has shape {a.shape}")
    lengths = np.array([len(a) for a in arrays], np.int64)
    padded = np.full((len(arrays), int(lengths.max()), *inner), padding_value, dtype=dtype)
    for i, a in enumerate(arrays):
        padded[i, :len(a)] = a
    return padded, lengths
